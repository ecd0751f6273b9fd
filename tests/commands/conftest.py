"""Valid input files, made once per test session and copied for each test that damages them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.commands.inputs import write_inputs


@pytest.fixture(scope="session")
def pristine_inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One valid file of each kind (do not modify: copy with ``inputs``)."""
    return write_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.fixture
def inputs(
    pristine_inputs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Path]:
    """A private copy of every valid input file; the test runs inside ``tmp_path``."""
    root = pristine_inputs["persona"].parent
    shutil.copytree(root, tmp_path / "in")
    monkeypatch.chdir(tmp_path)
    return {
        kind: tmp_path / "in" / path.relative_to(root) for kind, path in pristine_inputs.items()
    }
