"""``kill -9`` while ``sdtt persona import`` writes a long persona: the old file stays.

The new file is written next to the old one under a name ``sdtt persona list`` does not
read and renamed into place, so a kill at its worst moment (part of the new file
written) leaves the old persona byte for byte and nothing that lists as a persona.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from sdtt.personas.store import DEFAULT_PERSONA, SHIPPED_DIR, list_personas

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from persona_import_cli import write_export

REPO = Path(__file__).resolve().parents[3]


def _import(export: Path, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "sdtt", "persona", "import", "whatsapp", str(export)]
    command += ["--me", "Ann", "--name", "ann", "--no-scrub", "--force"]
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def test_kill_while_writing_leaves_the_old_persona(tmp_path: Path) -> None:
    large = tmp_path / "large.txt"
    write_export(large, 60_000)
    # An old persona that --force may replace (not an import of another person).
    target = tmp_path / "personas" / "ann.jsonl"
    target.parent.mkdir()
    before = (SHIPPED_DIR / f"{DEFAULT_PERSONA}.jsonl").read_bytes()
    target.write_bytes(before)
    partial = target.with_name(target.name + ".partial")
    process = _import(large, tmp_path)
    # Killed once the new file has begun (the moment the old one is most at risk), not
    # after a guessed time.
    while process.poll() is None and not (partial.exists() and partial.stat().st_size):
        pass
    assert process.poll() is None, "the import ended before its file was seen being written"
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    assert target.read_bytes() == before
    listed = list_personas([("local", tmp_path / "personas")])
    assert [(entry.name, entry.path, entry.error) for entry in listed] == [
        (DEFAULT_PERSONA, target, None)
    ]
