"""The load benchmark's quick mode runs: real ``sdtt serve`` processes over websockets,
no message lost or duplicated (benchmarks/serve_load.py gives the full figures)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve.conftest import PG_BIN

ROOT = Path(__file__).resolve().parents[2]


def _quick(*extra: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "serve_load.py"), "--quick", *extra],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_quick_load_run_loses_nothing() -> None:
    out = _quick()
    assert "lost messages: 0, duplicated messages: 0" in out
    assert "finished 12" in out  # 10 rooms, 2 with a person witness: everyone done


def test_the_quick_load_run_on_two_processes_loses_nothing() -> None:
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL binaries not found in {PG_BIN}")
    out = _quick("--store", "postgresql", "--processes", "2")
    assert "store postgresql, 2 server process(es)" in out
    assert "lost messages: 0, duplicated messages: 0" in out
    assert "finished 12" in out
