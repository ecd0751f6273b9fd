"""The documentation site builds with ``mkdocs build --strict``, and its command-line
reference is generated from the real parsers."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from sdtt.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]


def _hook():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "docs/hooks/cli_reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    cli = (tmp_path / "site/reference/cli/index.html").read_text(encoding="utf-8")
    assert "sdtt persona import whatsapp" in cli
    api = (tmp_path / "site/reference/api/index.html").read_text(encoding="utf-8")
    # Sphinx roles in the docstrings render as code names, not as ":class:`...`" text.
    left = re.findall(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):", api)
    assert not left, left
    # ... linked to the object's section when the page documents it (the short name for
    # "~"): ConfigError is named so in sdtt.models.registry and documented under sdtt.errors.
    assert re.search(
        r'<a [^>]*href="#sdtt\.errors\.ConfigError"[^>]*><code>ConfigError</code></a>', api
    )
    # ... and plain code otherwise (the API page does not document sdtt.models.batch).
    assert "<code>sdtt.models.batch</code>" in api
    # A reStructuredText table (the provider list of sdtt.models.registry) is a list or
    # table, not a paragraph of "=====" rules.
    assert "=====" not in api
    assert "<li><code>mock</code>: scripted replies" in api


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](no-such-page.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: t\ndocs_dir: docs\nstrict: true\n"
        "validation:\n  links:\n    not_found: warn\n    anchors: warn\n"
    )
    done = _build(config, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_every_command_and_option_is_in_the_reference() -> None:
    hook = _hook()
    page = hook.render()
    parsers = list(hook.walk(build_parser()))
    assert {f"sdtt {name}" for name in COMMANDS} <= {p.prog for p in parsers}
    for parser in parsers:
        assert f"## `{parser.prog}`" in page
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:  # hidden from --help too
                continue
            for option in action.option_strings:
                assert option in page, (parser.prog, option)


def test_the_docs_set_up_commands_are_the_readmes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    home = (ROOT / "docs/index.md").read_text(encoding="utf-8")
    for marker in ("demo-command", "test-command"):
        block = readme.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]
        command = block.split("```bash\n", 1)[1].split("\n```", 1)[0]
        assert command in home, marker
