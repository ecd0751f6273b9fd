"""``sdtt plan``: how many pairs and judges a study needs."""

from __future__ import annotations

import argparse

from rich.table import Table

from sdtt.commands.console import CliConsole
from sdtt.errors import InputError


def _counts(text: str, flag: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(
            f"expected comma-separated whole numbers, got {text!r}.", field=flag
        ) from None
    if not values or min(values) < 1:
        raise InputError("give at least one number, each 1 or more.", field=flag)
    return values


def run(args: argparse.Namespace) -> int:
    """Print the power table from parsed arguments."""
    if args.pass_rate is None:
        args.pass_rate = 0.5 if args.equivalence else 0.4
    pairs = _counts(args.pairs, "--pairs")
    judges = _counts(args.judges, "--judges")
    for name in ("pass_rate", "alpha", "power"):
        if not 0 < getattr(args, name) < 1:
            raise InputError("must be between 0 and 1.", field="--" + name.replace("_", "-"))
    if not 0 <= args.icc < 1:
        raise InputError("must be at least 0 and below 1.", field="--icc")
    if not 0 < args.margin < 0.5:
        raise InputError("must be between 0 and 0.5.", field="--margin")
    test = "equivalence" if args.equivalence else "difference"
    pc = 1 - args.pass_rate
    if args.sequential:
        return _sequential(args, pc)
    # scipy loads only for this command.
    from sdtt.analysis.power import power_table

    table = power_table(
        pairs, judges, test=test, pc=pc, margin=args.margin, alpha=args.alpha, icc=args.icc
    )
    if args.equivalence:
        title = (
            f"Power to show the pass rate is within 50% +- {args.margin:g} (TOST, alpha "
            f"{args.alpha:g}) when it really is {100 * (1 - pc):.0f}%"
        )
    else:
        title = (
            f"Power to detect a pass rate of {100 * (1 - pc):.0f}% vs 50% (exact binomial, "
            f"alpha {args.alpha:g}, icc {args.icc:g})"
        )
    grid = Table(title=title, title_justify="left")
    grid.add_column("pairs \\ judges")
    for n in judges:
        grid.add_column(str(n), justify="right")
    smallest: tuple[int, int, int] | None = None
    for n_pairs, row in zip(pairs, table, strict=True):
        cells = []
        for n_judges, power in zip(judges, row, strict=True):
            enough = power >= args.power
            cells.append(f"[green]{power:.2f}[/]" if enough else f"{power:.2f}")
            if enough and (smallest is None or n_pairs * n_judges < smallest[0]):
                smallest = (n_pairs * n_judges, n_pairs, n_judges)
        grid.add_row(str(n_pairs), *cells)
    console = CliConsole(highlight=False)
    console.print(grid)
    if smallest is None:
        console.print(f"No design in the grid reaches power {args.power:g}; try larger ones.")
    else:
        console.print(
            f"Smallest design with power >= {args.power:g}: {smallest[1]} pairs x "
            f"{smallest[2]} judges ({smallest[0]} judgements)."
        )
    return 0


FIXED_SEARCH = 5000
"""The largest fixed n tried when comparing the sequential plan with a fixed-n test."""


def _sequential(args: argparse.Namespace, pc: float) -> int:
    """Print the simulated stopping times of the sequential rule, beside the fixed-n test
    of the same power."""
    if args.icc > 0:
        raise InputError(
            "the sequential plan simulates independent judgements; it takes no --icc.",
            field="--icc",
            hint="Leave --icc out, or plan a fixed design without --sequential.",
        )
    if args.max_judgements < 1 or args.simulations < 1:
        raise InputError(
            "must be 1 or more.",
            field="--max-judgements" if args.max_judgements < 1 else "--simulations",
        )
    from sdtt.analysis.power import binomial_power, tost_power
    from sdtt.analysis.sequential import Conclusion, simulate_stopping

    goal: Conclusion = "equivalent" if args.equivalence else "differs"
    plan = simulate_stopping(
        pc,
        goal=goal,
        margin=args.margin,
        alpha=args.alpha,
        max_judgements=args.max_judgements,
        simulations=args.simulations,
        seed=args.seed,
    )
    claim = (
        f"equivalent to 50% within +-{args.margin:g}"
        if goal == "equivalent"
        else "the pass rate differs from 50%"
    )
    grid = Table(
        title=(
            f"Sequential judging: judgements until the rule concludes when the pass rate "
            f"really is {100 * (1 - pc):.0f}% (alpha {args.alpha:g}, {plan.simulations} "
            f"simulated studies, seed {args.seed}, at most {plan.max_judgements})"
        ),
        title_justify="left",
    )
    grid.add_column("judgements")
    grid.add_column("value", justify="right")
    grid.add_row("expected (mean)", f"{plan.expected:.0f}")
    grid.add_row("median", f"{plan.median:.0f}")
    grid.add_row("90th percentile", f"{plan.p90:.0f}")
    grid.add_row("worst case simulated", str(plan.worst))
    grid.add_row(f"share concluding: {claim}", f"{plan.reached:.1%}")
    grid.add_row("share concluding the other way", f"{plan.wrong:.1%}")
    console = CliConsole(highlight=False)
    console.print(grid)
    fixed = None
    # Exact power is not monotone in n, so the smallest n is found by trying each in
    # turn; past a few thousand that stops being quick.
    searched = min(args.max_judgements, FIXED_SEARCH)
    for n in range(1, searched + 1):
        if goal == "differs":
            power = binomial_power(n, pc, args.alpha)
        else:
            power = tost_power(n, pc, args.margin, args.alpha)
        if power >= args.power:
            fixed = n
            break
    if fixed is None:
        console.print(
            f"A fixed-n test would need more than {searched} judgements for power {args.power:g}."
        )
    else:
        console.print(
            f"A fixed-n test needs {fixed} judgements for power {args.power:g}; it may not "
            "look at the data before then."
        )
    if plan.worst >= plan.max_judgements and plan.reached < 1:
        console.print(
            f"{1 - plan.reached - plan.wrong:.1%} of simulated studies had not concluded "
            f"by {plan.max_judgements} judgements: raise --max-judgements to see their end."
        )
    return 0
