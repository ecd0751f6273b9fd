"""The README's ``pip install -e`` runs no code of sdtt's at Python's start-up.

setuptools installs a project in editable mode either as a ``.pth`` file naming a folder,
which Python's start-up only adds to ``sys.path``, or as a finder module that the
``.pth`` file imports and installs on every start of Python, sdtt or not. A Ctrl-C during
that import printed a ``KeyboardInterrupt`` traceback before any sdtt code could catch
it. ``[tool.setuptools] package-dir`` in pyproject.toml picks the first: this builds the
editable wheel as pip does and reads what it would install.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_editable_install_is_a_path_not_a_finder(tmp_path: Path) -> None:
    pytest.importorskip("wheel", reason="building a wheel needs the wheel package")
    project = tmp_path / "project"
    (project / "sdtt" / "commands").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    # The configuration is what decides; two packages stand in for sdtt's.
    (project / "sdtt" / "__init__.py").write_text("", encoding="utf-8")
    (project / "sdtt" / "commands" / "__init__.py").write_text("", encoding="utf-8")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build = (
        "import sys, setuptools.build_meta as backend; print(backend.build_editable(sys.argv[1]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", build, str(wheels)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    wheel = wheels / result.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        pth = [name for name in names if name.endswith(".pth")]
        assert len(pth) == 1, names
        lines = archive.read(pth[0]).decode("utf-8").splitlines()
    modules = [name for name in names if name.endswith(".py")]
    assert not modules, f"the editable install ships a module run at start-up: {modules}"
    assert lines == [str(project)], f"the .pth runs code, or names another folder: {lines}"
