"""Recall and precision of scrubbing on the labelled message sets (see pii_sets.py).

Thresholds sit just under what was measured when they were set (all sets pooled):
100% for emails, URLs, handles, IBANs, cards, MACs, GPS, ids and phones; 92.3% for
dates of birth, 91.8% for street addresses, 92.3% for postcodes, 96.1% for other
people's names; precision 99.5% overall and 98.4% for names; 2 replacements in the 97
messages with no personal data. ``benchmarks/scrub_recall.py`` prints the full tables.
"""

from __future__ import annotations

import pytest

from sdtt.personas.scrub import KINDS

from .pii_sets import SETS, Scores, messages, score

RECALL_FLOOR = {kind: 0.95 for kind in KINDS} | {
    "DOB": 0.90,
    "ADDRESS": 0.90,
    "POSTCODE": 0.90,
    "NAME": 0.94,
}


@pytest.fixture(scope="module")
def scores() -> Scores:
    return score()


def test_the_sets_are_big_enough_and_well_formed() -> None:
    rows = messages()
    spans = [span for row in rows for span in row["spans"]]  # type: ignore[attr-defined]
    assert len(spans) >= 300
    assert {span["kind"] for span in spans} == set(KINDS)
    assert sum(not row["spans"] for row in rows) >= 90
    for row in rows:
        for span in row["spans"]:  # type: ignore[attr-defined]
            assert 0 <= span["start"] < span["end"] <= len(str(row["text"]))


@pytest.mark.parametrize("kind", KINDS)
def test_recall_per_kind(scores: Scores, kind: str) -> None:
    missed = [miss for miss in scores.misses if miss.startswith(f"{kind}:")]
    assert scores.recall(kind) >= RECALL_FLOOR[kind], missed


def test_precision(scores: Scores) -> None:
    assert scores.precision() >= 0.97, scores.wrong
    assert scores.precision("NAME") >= 0.95, scores.wrong


def test_held_out_recall() -> None:
    assert score(SETS["held-out"]).recall() >= 0.85


def test_messages_without_personal_data_stay_almost_untouched(scores: Scores) -> None:
    untouched_rows = [row for row in messages() if not row["spans"]]
    wrong_in_clean = [w for w in scores.wrong if any(str(r["text"]) in w for r in untouched_rows)]
    assert len(wrong_in_clean) <= 2, wrong_in_clean
