"""LLM participants: seeded cohorts on the mock model, the strict parser, resuming."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from sdtt.align.llm import IDENTITIES, Cohort, parse_rating, rating_prompt, run_cohort
from sdtt.align.ratings import Rating, settled_rating_keys
from sdtt.align.task import RatingBuild
from sdtt.errors import BadRequestError, InputError
from sdtt.models.model import get_model
from tests.align.helpers import build
from tests.questionnaires.helpers import SECRET_WORDS


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("5", 5),
        (" Rating: 3.", 3),
        ("**7**", 7),
        ("6/7", 6),
        ("answer = 1", 1),
        ("5 or 6", None),
        ("5.5", None),
        ("five", None),
        ("8", None),
        ("0", None),
        ("5/10", None),
        ("I would say 4 because both are casual", None),
        ("", None),
        ("1-7", None),
    ],
)
def test_the_parser_reads_one_number_on_the_scale_and_never_guesses(
    reply: str, expected: int | None
) -> None:
    assert parse_rating(reply, 1, 7) == expected


def _run(built: RatingBuild, cohort: Cohort, **options: object) -> list[Rating]:
    async def main() -> list[Rating]:
        async with get_model(cohort.model, **options) as model:  # type: ignore[arg-type]
            return await run_cohort(model, built.task, built.key, cohort)

    return trio.run(main)


def test_a_mock_cohort_is_deterministic_and_each_participant_differs(tmp_path: Path) -> None:
    built = build(tmp_path)
    cohort = Cohort("mock/chatty", participants=3, temperature=1.0, seed=7)
    ratings = _run(built, cohort)
    assert len(ratings) == 3 * len(built.task.pairs)
    assert ratings == _run(built, cohort)
    by_participant: dict[str, list[int | None]] = {}
    for rating in ratings:
        by_participant.setdefault(rating.judge_id, []).append(rating.rating)
        assert rating.cohort == cohort.name and rating.judge_type == "llm"
        assert rating.rater["temperature"] == 1.0
    assert len({tuple(v) for v in by_participant.values()}) == 3
    other_seed = _run(built, Cohort("mock/chatty", participants=3, temperature=1.0, seed=8))
    assert [r.rating for r in other_seed] != [r.rating for r in ratings]


def test_the_prompt_shows_only_what_a_human_sees(tmp_path: Path) -> None:
    built = build(tmp_path)
    pair = built.task.pairs[0]
    prompt = rating_prompt(built.task, pair, "style")
    text = prompt.completion_text() + prompt.user_text()
    for word in SECRET_WORDS:
        assert word not in text
    assert pair.first not in text and pair.id not in text
    first_line = built.task.item(pair.first).lines[0].text
    assert text.index(first_line) < text.index("Excerpt 2:")


def test_unreadable_answers_are_missing_not_guessed(tmp_path: Path) -> None:
    built = build(tmp_path, items_per_source=2)
    ratings = _run(built, Cohort("mock/echo", participants=1))
    assert all(r.rating is None and r.excluded for r in ratings)
    assert all("non_compliant" in (r.exclusion_reason or "") for r in ratings)


def test_provider_failures_are_model_errors_and_asked_again_on_resume(tmp_path: Path) -> None:
    built = build(tmp_path, items_per_source=2)
    cohort = Cohort("mock/test", participants=2)
    failed = _run(built, cohort, replies=[BadRequestError("refused")], cycle=True)
    assert all((r.exclusion_reason or "").startswith("model_error") for r in failed)
    assert settled_rating_keys(failed) == set()
    done = _run(built, Cohort("mock/chatty", participants=2))
    settled = settled_rating_keys(done)

    async def resumed() -> list[Rating]:
        async with get_model("mock/chatty") as model:
            return await run_cohort(
                model, built.task, built.key, Cohort("mock/chatty", participants=3), settled=settled
            )

    fresh = trio.run(resumed)
    assert {r.rater["participant"] for r in fresh} == {3}


def test_bad_hyperparameters_are_refused() -> None:
    with pytest.raises(InputError, match="prompt variant"):
        Cohort("mock/chatty", prompt="nosuch")
    with pytest.raises(InputError, match="at least one participant"):
        Cohort("mock/chatty", participants=0)


def test_participants_have_identities_and_their_own_order_of_both_orders(tmp_path: Path) -> None:
    # Ogg et al.: 8 surnames x 3 honorifics = 24 participants, each rating every pair in
    # both orders, in its own shuffled order of trials.
    built = build(tmp_path, items_per_source=2)
    cohort = Cohort("mock/chatty", participants=24, identities=True, orders="both")
    assert len(set(IDENTITIES)) == 24 and "Dr. Jeanbaptiste" in IDENTITIES
    ratings = _run(built, cohort)
    pairs = built.task.pairs
    assert len(ratings) == 24 * 2 * len(pairs)
    by_participant: dict[int, list[Rating]] = {}
    for rating in ratings:
        by_participant.setdefault(rating.rater["participant"], []).append(rating)
    assert {r[0].rater["identity"] for r in by_participant.values()} == set(IDENTITIES)
    shown = {(p.id, p.first, p.second) for p in pairs}
    mirrored = {(p.id, p.second, p.first) for p in pairs}
    orders = set()
    for own in by_participant.values():
        own.sort(key=lambda r: r.rater["trial"])
        assert {(r.pair_id, r.first, r.second) for r in own} == shown | mirrored
        orders.add(tuple((r.pair_id, r.first) for r in own))
    assert len(orders) == 24  # no two participants share an order of trials
    prompt = rating_prompt(built.task, pairs[0], "plain", identity=cohort.identity(5))
    assert prompt.instructions.startswith(f"You are {IDENTITIES[4]}.")
    # Resuming asks nothing again: both orders of a pair are different questions.
    settled = settled_rating_keys(ratings)
    assert len(settled) == len(ratings)

    async def resumed() -> list[Rating]:
        async with get_model("mock/chatty") as model:
            return await run_cohort(model, built.task, built.key, cohort, settled=settled)

    assert trio.run(resumed) == []
    with pytest.raises(InputError, match="at most 24 participants"):
        Cohort("mock/chatty", participants=25, identities=True)
