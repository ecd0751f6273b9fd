"""``sdtt simulate`` sends a sampling seed with every call a backend can seed (issue 49):
the bot's is the condition's seed, the interrogator's its own derived one, so a rerun
against the same server is the same chat."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.seeds import derive_seed
from tests.fakes.openai_fake import FakeOpenAIServer


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


def seeds_sent(seed: int) -> list[object]:
    with FakeOpenAIServer() as server:
        code = main(
            [
                "simulate",
                "--model",
                "openai/gemma",
                "--interrogator",
                "openai/gemma",
                "--base-url",
                server.base_url,
                "--turns",
                "2",
                "--seed",
                str(seed),
                "--virtual-clock",
                "--quiet",
                "--out",
                f"chats-{seed}",
            ]
        )
        assert code == 0
        return [request.json().get("seed") for request in server.requests]


def test_every_call_of_a_simulated_chat_carries_its_roles_seed() -> None:
    sent = seeds_sent(7)
    assert len(sent) >= 4  # two turns: each side called at least twice
    assert all(isinstance(seed, int) for seed in sent), sent
    # The bot's calls carry the condition's seed; the interrogator's a seed of its own.
    assert 7 in sent
    assert derive_seed(7, "interrogator") in sent
    assert set(sent) <= {7, derive_seed(7, "interrogator")}


def test_another_seed_is_sent_for_another_run_and_the_same_for_a_rerun() -> None:
    assert seeds_sent(7) == seeds_sent(7)
    assert set(seeds_sent(8)).isdisjoint(seeds_sent(7))
