"""A full disk, met through a small file-size limit: one line naming the file, nothing
left behind, and a rerun with room finishes the job.

Each command runs in a subprocess whose ``RLIMIT_FSIZE`` is a few kilobytes, so the
first write past it fails with ``EFBIG`` as a write on a full disk fails with ``ENOSPC``
(Python ignores ``SIGXFSZ``, so the write reports the error instead of killing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sdtt.jsonl import read_jsonl
from sdtt.tasks.judgements import read_judgements

LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
from sdtt.cli import main
sys.exit(main(sys.argv[2:]))
"""
LIMIT = 3000
"""Bytes a limited run may write to one file: less than every command's largest output."""
LIMITS = {"topics": 100}
"""Smaller limits for commands writing less."""

Command = Callable[[dict[str, Path]], list[str]]

WRITERS: dict[str, Command] = {
    "demo": lambda f: ["demo", "--model", "mock/chatty", "--out", "out"],
    "persona import": lambda f: [
        "persona", "import", "whatsapp", str(f["export_whatsapp"]), "--me", "Ann Smith",
        "--out", "out",
    ],
    "simulate": lambda f: [
        "simulate", "--persona", str(f["persona"]), "--model", "mock/chatty", "--turns", "30",
        "--virtual-clock", "--quiet", "--out", "out",
    ],
    "topics": lambda f: ["topics", "--model", "mock/chatty", "-n", "10", "--out", "out.txt"],
    "generate": lambda f: [
        "generate", "--persona", str(f["persona"]), "--model", "mock/chatty", "--turns", "8",
        "--topics", str(f["topics"]), "--out", "out",
    ],
    "questionnaire build": lambda f: [
        "questionnaire", "build", "--bot", str(f["transcript"]), "--human", str(f["humans"]),
        "--x", "3", "--catch", "0", "--out", "out",
    ],
    "questionnaire export": lambda f: [
        "questionnaire", "export", str(f["study"]), "--format", "all", "--out", "out",
    ],
    "responses import": lambda f: [
        "responses", "import", "--study", str(f["study"]), "--format", "csv",
        str(f["responses_csv"]), "--out", "out.jsonl",
    ],
    "judge": lambda f: ["judge", str(f["study"]), "--model", "mock/chatty", "--out", "out.jsonl"],
    "report": lambda f: ["report", str(f["judgements"]), "--bootstrap", "0", "--out", "out"],
}  # fmt: skip


def run_limited(limit: int, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LIMITED, str(limit), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "COLUMNS": "2000"},
    )


def leftovers(folder: Path) -> list[Path]:
    """Partial files and lock files under ``folder``."""
    return [
        path
        for path in folder.rglob("*")
        if path.name.endswith((".partial", ".lock")) or path.name == ".sdtt.lock"
    ]


@pytest.mark.parametrize("command", WRITERS)
def test_a_full_disk_is_one_line_naming_the_file_and_leaves_nothing_behind(
    inputs: dict[str, Path], tmp_path: Path, command: str
) -> None:
    args = WRITERS[command](inputs)
    outcome = run_limited(LIMITS.get(command, LIMIT), args)
    assert outcome.returncode == 2, outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stderr
    # persona import reports what it read on stderr before writing; then one error line.
    line = outcome.stderr.strip().splitlines()[-1]
    assert outcome.stderr.count("error:") == 1
    assert line.startswith("error: ") and "File too large" in line and "run the same" in line
    named = Path(line.removeprefix("error: ").split(": File too large")[0])
    assert named.name and (tmp_path / "out").name in str(named)
    assert not leftovers(tmp_path)
    for path in tmp_path.rglob("*.jsonl"):
        list(read_jsonl(path, allow_partial_tail=False))  # whole records only
    finished = run_limited(10**9, args)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert not leftovers(tmp_path)


def test_judge_resumes_after_a_full_disk_without_a_lost_or_doubled_answer(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    args = WRITERS["judge"](inputs)
    assert run_limited(LIMIT, args).returncode == 2
    kept = read_judgements(tmp_path / "out.jsonl")
    assert kept
    assert run_limited(10**9, args).returncode == 0
    done = read_judgements(tmp_path / "out.jsonl")
    assert done[: len(kept)] == kept
    answers = [(j.pair_id, j.shown.order) for j in done]
    assert len(answers) == len(set(answers)) > len(kept)
