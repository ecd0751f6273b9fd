"""Running a shipped example from the checkout leaves no file git would pick up."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sdtt.commands.serve import error_log
from sdtt.serve.spec import read_study
from sdtt.study.spec import read_spec

ROOT = Path(__file__).resolve().parent.parent


def _ignored(path: Path) -> bool:
    relative = path.resolve().relative_to(ROOT.resolve())
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", str(relative)], cwd=ROOT, check=False
    )
    return done.returncode == 0


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout"
)
def test_the_examples_write_only_where_git_ignores() -> None:
    serve = read_study(ROOT / "examples/serve-study.toml")
    store = serve.store_path
    written = [store, store.with_name(store.name + "-wal"), error_log(serve)]
    for spec in sorted((ROOT / "examples").glob("*study*.toml")):
        if spec.name != "serve-study.toml":
            written.append(read_spec(spec).out / "report" / "report.html")
    not_ignored = [str(path) for path in written if not _ignored(path)]
    assert not not_ignored, f"git would pick these up: {not_ignored}"
