"""``[analysis] sequential = true``: the prereg states the anytime-valid stopping rule with
its simulated stopping times, and the study's report says whether each condition met it.

The rule is checked against scipy: the mixture martingale is the beta-binomial pmf over
the binomial pmf (the binomial coefficients cancel), and 0.5 leaves the sequence when it
reaches 1/alpha.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from sdtt.cli import main
from sdtt.study.figures import compute_report
from sdtt.study.ledger import Ledger
from sdtt.study.prereg import prereg_text
from sdtt.study.spec import read_spec
from tests.study.conftest import Reference
from tests.study.helpers import write_spec

SEQUENTIAL = (
    "\n[analysis]\nsequential = true\nmargin = 0.1\nsimulations = 400\nmax_judgements = 600\n"
)
ALPHA = 0.05


def differs(correct: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Where 0.5 is out of the 95% sequence (Beta(10, 10) mixture), by scipy."""
    log_m = stats.betabinom.logpmf(correct, n, 10, 10) - stats.binom.logpmf(correct, n, 0.5)
    return np.asarray(log_m >= math.log(1 / ALPHA))


def reference_stopping(pass_rate: float, runs: int, cap: int) -> np.ndarray:
    """Judgements until 0.5 leaves the sequence, for ``runs`` simulated studies with
    their own random numbers (the rare equivalence stop left out: the pass rate is
    outside the margin's inside)."""
    rng = np.random.default_rng(12345)
    n = np.arange(1, cap + 1)
    stops = []
    for _ in range(runs):
        correct = np.cumsum(rng.random(cap) < 1 - pass_rate)
        hit = differs(correct, n)
        stops.append(int(hit.argmax()) + 1 if hit.any() else cap)
    return np.array(stops)


def test_the_prereg_states_the_sequential_rule_and_its_stopping_times(tmp_path: Path) -> None:
    plain = prereg_text(read_spec(write_spec(tmp_path / "plain")))
    assert "data collection stops when the planned judgements are in" in plain
    text = prereg_text(read_spec(write_spec(tmp_path / "seq", extra=SEQUENTIAL)))
    assert "when the planned judgements are in" not in text
    assert "anytime-valid 95% confidence sequence" in text
    assert "within 50% +-0.1" in text and "600 judgements at most" in text
    # Detecting the spec's 40% pass rate: expected and worst-case judgements.
    found = re.search(
        r"pass rate is 40% \(`sdtt plan --sequential`, 400 simulated studies, seed 3\): "
        r"expected (\d+), median \d+, worst case (\d+)",
        text,
    )
    assert found is not None, text
    expected, worst = int(found.group(1)), int(found.group(2))
    stops = reference_stopping(0.4, 400, 600)
    assert expected == pytest.approx(stops.mean(), rel=0.15)
    assert worst <= 600 and worst >= np.percentile(stops, 90)
    assert re.search(r"pass rate is 50% \(`sdtt plan --sequential --equivalence`", text)


def test_the_report_says_whether_each_condition_met_the_rule(
    tmp_path: Path, reference: Reference
) -> None:
    out = tmp_path / "out"
    shutil.copytree(reference.out, out)
    spec = write_spec(tmp_path / "spec", extra=SEQUENTIAL)
    study = read_spec(spec, out=out)
    # Human judges who all find the bot in one condition's pair, one after another.
    llm = [
        json.loads(line)
        for line in (out / "judgements" / "llm.jsonl").read_text("utf-8").splitlines()
    ]
    pair = next(r for r in llm if r["pair_kind"] == "test" and not r["excluded"])
    humans = []
    for number in range(60):
        record = dict(pair, judge_id=f"person-{number}", judge_type="human")
        record.update(judge_model=None, source="survey", correct=True)
        record["choice"] = "AB"[record["bot_position"] - 1]
        humans.append(json.dumps(record))
    (out / "judgements" / "survey.jsonl").write_text("\n".join(humans) + "\n", "utf-8")

    report = compute_report(study, Ledger(out / "ledger.jsonl"), tmp_path / "figures")
    sections = {s.title: s for s in report.sections if "sequential" in s.title}
    human = sections["Human judges: sequential judging"]
    assert len(human.rows) == 1
    n = np.arange(1, 61)
    first = int(differs(n, n).argmax()) + 1
    assert human.rows[0][1] == "60"
    assert human.rows[0][-1] == f"stop at judgement {first}: pass rate differs from 50%"
    # The LLM judge's few judgements per condition reach no conclusion.
    (llm_section,) = [s for title, s in sections.items() if title != human.title]
    assert llm_section.rows and all(
        row[-1] == "not met: keep recruiting" for row in llm_section.rows
    )


def test_without_sequential_the_report_has_no_stopping_rule(
    tmp_path: Path, reference: Reference
) -> None:
    study = read_spec(write_spec(tmp_path), out=reference.out)
    report = compute_report(study, Ledger(reference.out / "ledger.jsonl"), tmp_path / "figures")
    assert not [s for s in report.sections if "sequential" in s.title]


def test_study_run_says_whether_the_rule_was_met(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, extra=SEQUENTIAL)
    assert main(["study", "run", str(spec), "--quiet"]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "stopping rule:" in line]
    # Two conditions (totals 2 and 8), two judgements each: too few to conclude.
    assert len(said) == 2
    assert all(line.endswith("not met: keep recruiting") for line in said)
