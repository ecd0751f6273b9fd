"""Single-witness judgements (live two-party verdicts) beside paired ones."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sdtt.analysis.metrics import confusion, summarise
from sdtt.analysis.table import judgement_table
from sdtt.tasks.judgements import Judgement
from tests.analysis.helpers import judgement


def verdict(room: str, witness: str, said: str) -> Judgement:
    return Judgement(
        study="s",
        judge_id=f"judge-{room}",
        judge_type="human",
        pair_id=room,
        choice=None,
        correct=(said == "ai") == (witness == "bot"),
        witness=witness,  # type: ignore[arg-type]
        verdict=said,  # type: ignore[arg-type]
        source="test",
        condition={"live_from": 1, "live_to": 3},
    )


def test_pass_rate_is_the_share_of_bot_witnesses_judged_human() -> None:
    frame = judgement_table(
        [
            verdict("r1", "bot", "human"),
            verdict("r2", "bot", "human"),
            verdict("r3", "bot", "ai"),
            verdict("r4", "human", "ai"),
            verdict("r5", "human", "human"),
        ]
    )
    summary = summarise(frame, reps=0)
    assert summary.judgements == 3
    assert summary.pass_rate == pytest.approx(2 / 3)
    counts = confusion(frame)
    assert (counts.mm, counts.hm, counts.mh, counts.hh) == (1, 2, 1, 1)


def test_paired_judgements_score_as_before_beside_live_ones() -> None:
    paired = [judgement("p1", "j1", True), judgement("p2", "j2", False)]
    alone = summarise(judgement_table(paired), reps=0)
    mixed = summarise(judgement_table([*paired, verdict("r1", "human", "ai")]), reps=0)
    assert alone.pass_rate == mixed.pass_rate == pytest.approx(0.5)
    record = paired[0].model_dump(mode="json")
    record.pop("witness")
    record.pop("verdict")
    assert Judgement.model_validate(record) == paired[0]


def test_inconsistent_records_are_refused() -> None:
    record = verdict("r1", "bot", "ai").model_dump()
    with pytest.raises(ValidationError, match="not a choice or position"):
        Judgement.model_validate({**record, "choice": "A"})
    with pytest.raises(ValidationError, match="correct follows from its verdict"):
        Judgement.model_validate({**record, "verdict": None})
    with pytest.raises(ValidationError, match="needs bot_position"):
        Judgement.model_validate({**record, "witness": None, "verdict": None, "choice": "A"})
