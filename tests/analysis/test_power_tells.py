from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from scipy import stats

from sdtt.analysis.power import binomial_power, effective_n, power_table, tost_power
from sdtt.analysis.tells import Side, compare, study_sides, transcript_side
from sdtt.dialogue.message import Message
from sdtt.tasks.study import DesignSpec, StudySpec
from tests.questionnaires.helpers import fixture_study


@pytest.mark.parametrize(("n", "pc"), [(12, 0.5), (37, 0.62), (60, 0.4)])
def test_binomial_power_matches_summing_over_scipy_tests(n: int, pc: float) -> None:
    brute = sum(
        stats.binom.pmf(k, n, pc) for k in range(n + 1) if stats.binomtest(k, n).pvalue <= 0.05
    )
    assert binomial_power(n, pc) == pytest.approx(brute)


def test_power_grows_with_pairs_and_judges_and_tost_needs_more() -> None:
    table = power_table([10, 40], [5, 20], test="difference", pc=0.6)
    assert table[0][0] < table[0][1] < table[1][1]
    assert table[1][1] > 0.99
    assert tost_power(50, 0.5, 0.1) < binomial_power(50, 0.6)
    assert tost_power(1000, 0.5, 0.1) > 0.99
    assert effective_n(10, 11, 0.1) == 55


def test_tells_from_transcripts_are_bot_minus_human() -> None:
    start = datetime(2025, 1, 1, tzinfo=UTC)

    def chat(reply: str, delay: int) -> list[Message]:
        return [
            Message(side="user", text="hi", time=start),
            Message(side="response", text=reply, time=start + timedelta(seconds=delay)),
        ]

    bot = transcript_side([chat("Hello there, how are you today?", 3)])
    human = transcript_side([chat("hey 😀", 20)])
    rows = {row.name: row for row in compare(bot, human)}
    assert rows["words"].difference == 6 - 2
    assert rows["emoji"].difference == -1.0
    assert rows["lowercase"].difference == -1.0
    assert rows["punctuation"].difference == 1.0
    assert rows["latency"].difference == 3 - 20


def test_tells_from_a_study_use_the_lines_judges_saw() -> None:
    study = fixture_study()
    bot, human = study_sides(study.questionnaire, study.key)
    assert bot.texts and human.texts
    assert all(text.startswith(("b0", "b1")) for text in bot.texts)
    assert all(text.startswith(("h0", "h1")) for text in human.texts)
    assert all(latency == 40 for latency in bot.latencies)
    assert Side((), ()) == Side((), ())


def test_a_design_study_counts_each_chat_once() -> None:
    plain = fixture_study(StudySpec(name="d", seed=3, x_turns=[3]))
    design = fixture_study(
        StudySpec(name="d", seed=3, x_turns=[3], design=DesignSpec(pairs_per_judge=1))
    )
    assert [sorted(side.texts) for side in study_sides(design.questionnaire, design.key)] == [
        sorted(side.texts) for side in study_sides(plain.questionnaire, plain.key)
    ]
