"""``sdtt study prereg``: a preregistration document from the spec, in the sections of
OSF's Preregistration template (hypotheses, design plan, sampling plan with the power of
``sdtt plan``, variables, analysis plan with the exclusion rules), stamped with the
spec's SHA-256 so a later bundle can be checked against what was registered
(``sdtt study verify BUNDLE --prereg FILE``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from sdtt.analysis.power import power_table
from sdtt.analysis.sequential import PRIOR, Conclusion, simulate_stopping
from sdtt.errors import InputError
from sdtt.study.spec import Study
from sdtt.study.steps import cells
from sdtt.tasks.study import QualitySpec

STAMP = "Spec SHA-256:"
_STAMP_LINE = re.compile(rf"^{re.escape(STAMP)}\s*`?([0-9a-f]{{64}})`?\s*$", re.MULTILINE)
MOST_JUDGES = 2000
"""The largest number of judges per pair the sampling plan searches."""


def judgements_per_pair(study: Study, pairs: int) -> int:
    """Judgements each test pair gets: from the survey's judges (under a judge design,
    shared among the pairs), else from the LLM judges (two orders each when asked so)."""
    spec = study.spec
    if spec.survey is not None:
        k = spec.questionnaire.pairs_per_judge
        return spec.survey.judges if k is None else max(1, spec.survey.judges * k // max(pairs, 1))
    return sum(
        2 if judge.orders == "both" and judge.kind == "paired" else 1
        for judge in spec.judges.values()
    )


def pairs_per_condition(study: Study) -> int:
    """Test pairs of the smallest condition (one pair per chat, a condition per N + X)."""
    counts = Counter((c.model, c.mode, c.total) for c in cells(study))
    return min(counts.values())


def prereg_text(study: Study) -> str:
    """The preregistration document, in Markdown."""
    spec = study.spec
    design = spec.design
    analysis = spec.analysis
    pairs = pairs_per_condition(study)
    all_pairs = len(cells(study))
    per_pair = judgements_per_pair(study, all_pairs)
    pc = 1 - analysis.expected_pass_rate

    def power(judges: int) -> float:
        table = power_table(
            [pairs], [judges], test="difference", pc=pc, alpha=analysis.alpha, icc=analysis.icc
        )
        return table[0][0]

    planned = power(per_pair)
    needed = next((j for j in range(1, MOST_JUDGES + 1) if power(j) >= analysis.power), None)
    ((tost,),) = power_table(
        [pairs],
        [per_pair],
        test="equivalence",
        pc=0.5,
        margin=analysis.margin,
        alpha=analysis.alpha,
        icc=analysis.icc,
    )
    totals = sorted({n + x for n, x in design.turns})
    quality = QualitySpec()
    judges = [f"{name} ({j.model}, {j.kind}, orders {j.orders})" for name, j in spec.judges.items()]
    if spec.survey is not None:
        judges.append(f"{spec.survey.judges} human judges through a {spec.survey.format} survey")
    needed_text = (
        f"{needed} judgements per pair reach power {analysis.power:g}"
        if needed is not None
        else f"no design up to {MOST_JUDGES} judgements per pair reaches power {analysis.power:g}"
    )
    lines = [
        f"# Preregistration: {spec.study.title}",
        "",
        f"{STAMP} `{study.sha256}`",
        "",
        f"Study `{spec.study.name}`, from the spec `{study.path.name}` (sdtt study). The hash "
        "above is of that file: `sdtt study verify BUNDLE --prereg THIS_FILE` checks that "
        "a study's bundle was run from it.",
        "",
        "## 1. Hypotheses",
        "",
        *[f"- H{i}: {h}" for i, h in enumerate(analysis.hypotheses, start=1)],
        "",
        "## 2. Design plan",
        "",
        "- Study type: experiment; a Self-Directed Turing Test of persona chatbots.",
        "- Blinding: judges see pairs of chats (one with the bot, one with a person) without "
        "model or persona names; the answer key is never shown.",
        f"- Design: personas {design.personas} x models {design.models} x modes "
        f"{list(design.modes)} x (N, X) {[list(t) for t in design.turns]} x "
        f"{len(design.topics)} topic(s): {all_pairs} chats, each paired with a human chat "
        + (
            "of the imitated person, held out of the bot's prompt (human = persona"
            + (
                f"; held_out = {spec.questionnaire.held_out}, drawn with the study seed)."
                if spec.questionnaire.held_out is not None
                else ")."
            )
            if spec.questionnaire.human.strip().lower() == "persona"
            else f"on its topic ({spec.questionnaire.human})."
        ),
        f"- Interrogator: {design.interrogator}.",
        f"- Judges: {'; '.join(judges)}.",
        f"- Randomisation: questionnaire seed {spec.questionnaire.seed}, study seed "
        f"{spec.study.seed}; the bot's chat is first in half of the orders.",
        "",
        "## 3. Sampling plan",
        "",
        f"- Sample size: {pairs} test pair(s) per condition (total turn index "
        f"{', '.join(map(str, totals))}), {per_pair} judgement(s) per pair.",
        f"- Power (`sdtt plan`, exact binomial test against 50%, alpha {analysis.alpha:g}, "
        f"icc {analysis.icc:g}): {planned:.2f} to detect a pass rate of "
        f"{analysis.expected_pass_rate:.0%}; {needed_text}.",
        f"- Power of the equivalence test (TOST, margin +-{analysis.margin:g}) when the pass "
        f"rate is 50%: {tost:.2f}.",
        *stopping_rule(study),
        "",
        "## 4. Variables",
        "",
        "- Manipulated: the total turn index N + X (pseudo-dialogue turns N in the bot's "
        "prompt, live turns X), and the listed models, personas and modes.",
        "- Measured: each judge's verdict on each pair (which chat is the AI); the pass rate "
        "is the share of verdicts that pick the human's chat.",
        "",
        "## 5. Analysis plan",
        "",
        f"- Per condition: the pass rate with a {analysis.bootstrap}-replicate cluster "
        "bootstrap interval (judges and pairs), the exact binomial test against 50% and "
        f"the TOST within +-{analysis.margin:g}; breakdowns by {', '.join(analysis.by)}.",
        "- Human and LLM judges are analysed apart; no judgement counts twice for a pair.",
        f"- Exclusions: all answers of a judge who fails more than "
        f"{quality.max_catch_errors} catch pair(s) or more than {quality.max_topic_errors} "
        "topic check(s); non-compliant LLM answers, model errors and ties are excluded "
        "and counted.",
        f"- Inference: alpha {analysis.alpha:g}, two-sided.",
        "",
        "## 6. Other",
        "",
        "- The study's bundle (`sdtt study bundle`) holds every file with its hash, the "
        "cost ledger, the model versions the providers reported and every package version.",
        "",
    ]
    return "\n".join(lines)


def stopping_rule(study: Study) -> list[str]:
    """The sampling plan's stopping rule: the planned judgements, or with ``[analysis]
    sequential`` the anytime-valid rule with its simulated stopping times (the
    simulation of ``sdtt plan --sequential``, seeded with the study's seed)."""
    analysis = study.spec.analysis
    if not analysis.sequential:
        return ["- Stopping rule: data collection stops when the planned judgements are in."]
    level = f"{100 * (1 - analysis.alpha):g}%"
    a, b = PRIOR
    lines = [
        "- Stopping rule (sequential, `sdtt score --sequential`): per condition and judge "
        "group, judgements are taken in the order they are recorded and, after each one, "
        f"the anytime-valid {level} confidence sequence of the pass rate is updated "
        f"(Robbins' beta-binomial mixture, Beta({a:g}, {b:g}); its running intersection). "
        "Data collection for the condition stops at the first judgement where 50% has "
        "left the sequence (the pass rate differs from 50%) or the sequence lies within "
        f"50% +-{analysis.margin:g} (equivalent to 50%), and at {analysis.max_judgements} "
        "judgements at most. The sequence holds however often it is looked at, so the "
        f"chance of a wrong conclusion is at most alpha = {analysis.alpha:g}.",
    ]
    expected = 1 - analysis.expected_pass_rate
    cases: list[tuple[float, Conclusion, float]] = [
        (expected, "differs", analysis.expected_pass_rate),
        (0.5, "equivalent", 0.5),
    ]
    for pc, goal, rate in cases:
        plan = simulate_stopping(
            pc,
            goal=goal,
            margin=analysis.margin,
            alpha=analysis.alpha,
            max_judgements=analysis.max_judgements,
            simulations=analysis.simulations,
            seed=study.spec.study.seed,
        )
        claim = "differs from 50%" if goal == "differs" else "is equivalent to 50%"
        lines.append(
            f"- Judgements needed when the pass rate is {rate:.0%} (`sdtt plan --sequential"
            f"{' --equivalence' if goal == 'equivalent' else ''}`, {plan.simulations} "
            f"simulated studies, seed {study.spec.study.seed}): expected {plan.expected:.0f}, "
            f"median {plan.median:.0f}, worst case {plan.worst}; {plan.reached:.1%} conclude "
            f"that it {claim}."
        )
    return lines


def stamped_hash(path: Path) -> str:
    """The spec hash a preregistration document was stamped with."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot be read ({error.strerror}).", path=path) from None
    match = _STAMP_LINE.search(text)
    if match is None:
        raise InputError(
            f"holds no '{STAMP}' line.", path=path, hint="Give a file written by sdtt study prereg."
        )
    return match.group(1)
