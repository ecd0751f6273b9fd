"""The README's set-up commands install pinned versions, and the pins cover every dependency.

A fresh machine resolves the newest release of everything unpinned, so a dependency added to
pyproject.toml without refreshing constraints.txt (bash .ci/refresh-constraints) would make
one machine's passing suite fail on the next.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    bare = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    assert bare, requirement
    return re.sub(r"[-_.]+", "-", bare.group()).lower()


def _pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt pins exact versions only: {line!r}"
            pins[_name(name)] = version
    return pins


def test_every_dependency_the_readme_installs_is_pinned() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = [*project["dependencies"], *extras["local"], *extras["test"], *extras["serve"]]
    names = {_name(r) for r in wanted} - {"sdtt"}
    missing = sorted(names - set(_pinned()))
    assert not missing, f"not in constraints.txt: {missing}; run bash .ci/refresh-constraints"


def test_both_readme_commands_install_with_the_constraints() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for marker in ("demo-command", "test-command"):
        block = readme.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]
        assert "pip install -c constraints.txt" in block, marker


def _extras_installed(command: str) -> set[str]:
    """The requirement names ``pip install -e '.[a,b]'`` in ``command`` installs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    match = re.search(r"-e '\.\[([a-z,]+)\]'", command)
    assert match, command
    wanted, names = list(match.group(1).split(",")), set()
    while wanted:
        for requirement in extras[wanted.pop()]:
            nested = re.fullmatch(r"sdtt\[([a-z,]+)\].*", requirement.split()[0].strip('"'))
            if nested:
                wanted += nested.group(1).split(",")
            else:
                names.add(_name(requirement))
    return names


def test_the_readme_set_up_installs_what_sdtt_serve_needs() -> None:
    # 'sdtt serve examples/serve-study.toml' right after the README's set-up must start.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    demo = readme.split("<!-- demo-command -->")[1].split("<!-- /demo-command -->")[0]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    serve = {_name(r) for r in project["optional-dependencies"]["serve"]}
    missing = sorted(serve - _extras_installed(demo))
    assert not missing, f"the README's set-up does not install {missing}"
