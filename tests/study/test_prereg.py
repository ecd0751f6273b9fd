"""``sdtt study prereg``: OSF template sections, the power of the planned sample, the stamp."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scipy import stats

from sdtt.cli import main
from sdtt.study.prereg import prereg_text, stamped_hash
from sdtt.study.spec import read_spec
from tests.study.helpers import write_spec

SURVEY = '\n[survey]\nformat = "surveyjs"\njudges = 30\n'


def exact_test_power(n: int, pass_rate: float, alpha: float) -> float:
    """Power of scipy's two-sided exact binomial test against 0.5, outcome by outcome."""
    pc = 1 - pass_rate
    return sum(
        stats.binom.pmf(k, n, pc)
        for k in range(n + 1)
        if stats.binomtest(k, n, 0.5).pvalue <= alpha
    )


def test_the_document_has_the_osf_sections_and_the_spec_hash(tmp_path: Path) -> None:
    study = read_spec(write_spec(tmp_path, extra=SURVEY))
    text = prereg_text(study)
    headings = re.findall(r"^## \d\. (.+)$", text, re.MULTILINE)
    assert headings == [
        "Hypotheses",
        "Design plan",
        "Sampling plan",
        "Variables",
        "Analysis plan",
        "Other",
    ]
    path = tmp_path / "prereg.md"
    path.write_text(text, "utf-8")
    assert stamped_hash(path) == study.sha256
    assert "catch pair" in text and "topic check" in text  # the exclusion rules


def test_the_sampling_plan_states_the_power_of_the_planned_sample(tmp_path: Path) -> None:
    # One test pair per condition (one chat at each total), 30 judges each.
    text = prereg_text(read_spec(write_spec(tmp_path, extra=SURVEY)))
    stated = float(re.search(r"\): (\d\.\d\d) to detect a pass rate of 40%", text).group(1))  # type: ignore[union-attr]
    assert stated == pytest.approx(exact_test_power(30, 0.4, 0.05), abs=0.005)
    needed = int(re.search(r"(\d+) judgements per pair reach power 0.8", text).group(1))  # type: ignore[union-attr]
    assert exact_test_power(needed, 0.4, 0.05) >= 0.8
    assert exact_test_power(needed - 1, 0.4, 0.05) < 0.8


def test_the_command_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, extra=SURVEY)
    assert main(["study", "prereg", str(spec), "--out", str(tmp_path / "p.md")]) == 0
    assert stamped_hash(tmp_path / "p.md") == read_spec(spec).sha256
    assert "stamped" in capsys.readouterr().out
