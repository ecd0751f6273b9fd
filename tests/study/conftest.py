"""Uninterrupted runs of the small study, made once and compared against."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from sdtt.study.ledger import read_ledger
from tests.study.helpers import CountingMocks, run_study, write_spec


@dataclass(frozen=True)
class Reference:
    """An uninterrupted run: what reached the provider, and its ledger."""

    mocks: CountingMocks
    out: Path

    def ledger(self) -> list[dict[str, object]]:
        """Its ledger's records, in order."""
        return read_ledger(self.out / "ledger.jsonl")


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """The small study, run once without a cut."""
    folder = tmp_path_factory.mktemp("reference")
    mocks = CountingMocks()
    assert run_study(write_spec(folder), mocks).finished
    return Reference(mocks, folder / "out")
