"""``sdtt study``: run a whole study from its spec, show it, bundle, verify, preregister.

The work is done by :mod:`sdtt.study`; this module runs trio (on the engine's virtual
clock for simulated chats) and draws the progress and the tables.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio
from rich.console import Group
from rich.live import Live
from rich.table import Table

from sdtt.commands.console import CliConsole
from sdtt.commands.study_status import status_renderables
from sdtt.engine.simulate import run_on_virtual_clock
from sdtt.errors import InputError
from sdtt.files import read_file_bytes, write_text_atomic
from sdtt.redact import shown
from sdtt.study.bundle import write_bundle
from sdtt.study.prereg import prereg_text
from sdtt.study.runner import Snapshot, StudyRunner
from sdtt.study.signing import public_key_fingerprint
from sdtt.study.spec import read_spec
from sdtt.study.status import study_status
from sdtt.study.verify import verify_bundle


def drive(fn: Callable[[], Awaitable[Any]], virtual: bool) -> Any:
    """Run one async step of the study: simulated chats on the virtual clock."""
    return run_on_virtual_clock(fn) if virtual else trio.run(fn)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def progress_table(snapshot: Snapshot) -> Group:
    """The whole study's progress: steps done per stage, calls, tokens, cost, time."""
    table = Table(title="sdtt study", title_justify="left")
    table.add_column("stage")
    table.add_column("done", justify="right")
    for stage, count in snapshot.stages.items():
        style = "green" if count.done == count.total else ""
        table.add_row(
            stage,
            f"[{style}]{count.done}/{count.total}[/]" if style else f"{count.done}/{count.total}",
        )
    replayed = f" ({snapshot.replayed} from the ledger)" if snapshot.replayed else ""
    line = (
        f"{snapshot.calls} calls{replayed}, {snapshot.input_tokens:,} tokens in, "
        f"{snapshot.output_tokens:,} out, ≈${snapshot.cost:.4f}; "
        f"{_duration(snapshot.elapsed)} so far, about {_duration(snapshot.left)} left"
        + (f"\nnow: {shown(snapshot.current)}" if snapshot.current else "")
    )
    return Group(table, line)


class LiveProgress:
    """Redraws the progress table as the study moves on."""

    def __init__(self, live: Live | None) -> None:
        self.live = live
        self.last: Snapshot | None = None

    def update(self, snapshot: Snapshot) -> None:
        """Show the latest state."""
        self.last = snapshot
        if self.live is not None:
            self.live.update(progress_table(snapshot))


def run_study(args: argparse.Namespace) -> int:
    """``sdtt study run``: exit 0 when finished, 3 when waiting for people or the budget."""
    console = CliConsole(highlight=False)
    study = read_spec(args.spec)
    with Live(console=console, refresh_per_second=4) as live:
        display = LiveProgress(None if args.quiet else live)
        result = StudyRunner(study, drive=drive, progress=display).run()
        if display.last is not None:
            live.update(progress_table(display.last), refresh=True)
    if not console.is_terminal:
        # Rich ends the live table with a newline only on a terminal: in a log or a pipe
        # the next line would run on from "time left".
        console.line()
    if result.budget is not None:
        console.print(f"[bold red]stopped by the budget:[/] {shown(str(result.budget))}")
        console.print("Left undone:")
        for step in result.undone:
            console.print(f"  {step.stage}: {shown(step.label)}")
        console.print("Raise study.budget in the spec and run again to finish.")
        return 3
    if not result.finished:
        assert result.waiting is not None
        console.print(f"[bold yellow]waiting for people:[/] {shown(result.waiting.label)}")
        for line in result.next:
            console.print(shown(line))
        return 3
    console.print(f"study finished: report in {shown(str(study.out / 'report'))}/report.html")
    console.print(
        f"its tables as data: {shown(str(study.out / 'results'))}/pass-rates.csv; in Python: "
        f"sdtt.results.load({shown(repr(str(study.out)))})",
        soft_wrap=True,
    )
    from sdtt.study.figures import character_lines

    for line in character_lines(study):
        console.print(f"[yellow]out of character:[/] {shown(line)}", soft_wrap=True)
    if study.spec.analysis.sequential:
        from sdtt.study.figures import stopping_lines

        for line in stopping_lines(study):
            console.print(f"stopping rule: {shown(line)}", soft_wrap=True)
    return 0


def run_status(args: argparse.Namespace) -> int:
    """``sdtt study status``: the design grid and the later steps."""
    console = CliConsole(highlight=False)
    study = read_spec(args.spec)
    status = study_status(study)
    for renderable in status_renderables(study.spec.study.name, status):
        console.print(renderable)
    return 0


def run_bundle(args: argparse.Namespace) -> int:
    """``sdtt study bundle``."""
    console = CliConsole(highlight=False)
    study = read_spec(args.spec)
    dest = args.out or study.out.with_name(study.out.name + "-bundle.tar.gz")
    written = write_bundle(study, dest, sign=args.sign, prereg=args.prereg)
    console.print(
        f"wrote {shown(str(written))}; check it with: "
        f"sdtt study verify {shown(shlex.quote(str(written)))}"
    )
    if args.sign is not None:
        console.print(f"signed the manifest with {shown(str(args.sign))}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """``sdtt study verify``: exit 1 when anything differs."""
    console = CliConsole(highlight=False)
    signer = _signer(args.signer) if args.signer else None
    result = verify_bundle(args.bundle, prereg=args.prereg, signer=signer)
    for problem in result.problems:
        console.print(f"[red]differs:[/] {shown(problem)}")
    if result.signer is not None:
        registered = result.registered
        stamp = (
            f" and the preregistration {shown(str(registered.get('file')))} (stamped with spec "
            f"{str(registered.get('spec_sha256'))[:12]})"
            if registered
            else ""
        )
        console.print(
            f"signed by {result.signer.fingerprint} ({result.signer.key_type}): the signature "
            f"covers the manifest, every file's hash{stamp}"
        )
    elif not result.signed:
        console.print(
            "unsigned: nothing says who made this bundle (anyone who edits its records and "
            "recomputes its hashes passes the checks below); sign one with sdtt study bundle "
            "SPEC --sign KEY"
        )
    if args.rerun:
        from sdtt.study.rerun import rerun_bundle

        console.print("rerunning the study from its recorded answers (replay: no calls) ...")
        rerun = rerun_bundle(args.bundle, drive=drive)
        for note in rerun.notes:
            console.print(f"[yellow]note:[/] {shown(note)}")
        for difference in rerun.differences:
            console.print(f"[red]rerun differs:[/] {shown(difference)}", soft_wrap=True)
        if rerun.ok:
            console.print(
                f"ok: the rerun is byte-identical: {rerun.compared} files written again match "
                "the bundle (the run log's timings are not compared)"
            )
        result.problems += rerun.differences
    if result.ok:
        console.print(
            f"ok: {result.files} files match their hashes; {result.figures_checked} figures "
            "computed again from the records match the report"
        )
        if result.prereg_hash is not None:
            console.print(
                f"ok: the spec is the preregistered one ({result.prereg_hash[:12]}, "
                f"{shown(str(args.prereg))})"
            )
        return 0
    console.print(f"[bold red]{len(result.problems)} difference(s)[/]")
    return 1


def _signer(text: str) -> str:
    """A fingerprint given as itself or as a public key file (``id_ed25519.pub``)."""
    if text.startswith("SHA256:"):
        return text
    path = Path(text)
    try:
        return public_key_fingerprint(read_file_bytes(path, what="public key").decode())
    except ValueError as error:
        raise InputError(
            f"{error}.", path=path, hint="Give KEY.pub (ssh-ed25519 ...) or SHA256:..."
        ) from None


def run_prereg(args: argparse.Namespace) -> int:
    """``sdtt study prereg``."""
    console = CliConsole(highlight=False)
    study = read_spec(args.spec)
    out = args.out or study.out / "prereg.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, prereg_text(study))
    console.print(f"wrote {shown(str(out))} (stamped with the spec's hash {study.sha256[:12]})")
    return 0
