"""``sdtt score`` and ``sdtt report`` read each belief-trace file once, with a progress
bar of the bytes read while a large one is read, as they read judgement files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sdtt.commands.score_common as scoring
import sdtt.dialogue.record_files as record_files
from sdtt.beliefs.traces import write_traces
from sdtt.cli import main
from tests.beliefs.helpers import trace


def _traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    write_traces(
        path,
        [trace([40.0, 60.0, 70.0 - n], judge_id=f"j{n}", item_id=f"p{n % 7}") for n in range(60)],
    )
    return path


@pytest.mark.parametrize("command", ["score", "report"])
def test_a_trace_file_is_read_once(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _traces(tmp_path)
    reads: Counter[str] = Counter()
    lines = record_files._lines

    def counted(where: Any, noun: str, progress: Any) -> Iterator[tuple[int, dict[str, Any]]]:
        reads[Path(where).name] += 1
        return lines(where, noun, progress)

    monkeypatch.setattr(record_files, "_lines", counted)
    argv = [command, str(path), "--bootstrap", "0"]
    if command == "report":
        argv += ["--out", str(tmp_path / "report")]
    assert main(argv) == 0
    assert reads == {"traces.jsonl": 1}  # before: once for the verdicts, once for beliefs


def test_a_large_trace_file_is_read_with_a_progress_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _traces(tmp_path)
    monkeypatch.setattr(scoring, "PROGRESS_FROM_BYTES", 0)  # every file counts as large
    monkeypatch.setenv("FORCE_COLOR", "1")  # Rich draws bars on a terminal only
    assert main(["score", str(path), "--bootstrap", "0"]) == 0
    assert "reading traces.jsonl" in capsys.readouterr().err
