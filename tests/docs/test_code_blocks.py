"""Every bash block of the documentation runs as written (or says why it cannot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import Block, blocks, pages, run, workspace

RUNNABLE = [page for page in pages() if any(b.lang == "bash" for b in blocks(page))]


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda page: page.stem)
def test_every_bash_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    for block in blocks(page):
        if block.lang != "bash" or block.skip:
            continue
        done = run(block, tmp_path, env)
        assert done.returncode == 0, (
            f"{block.where} failed (exit {done.returncode}):\n{block.code}\n"
            f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
        )


def test_the_tutorial_runs_most_of_its_blocks() -> None:
    # The 15-minute tutorial is the newcomer's path: it must not be skipped into nothing.
    tutorial = [b for b in blocks(Path(pages()[0]).parent / "tutorials/first-study.md")]
    running = [b for b in tutorial if b.lang == "bash" and not b.skip]
    assert len(running) >= 5, [b.where for b in tutorial]


def test_a_skip_marker_names_its_reason(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- skip: needs a key -->\n```bash\nsdtt judge --model openai/x s\n```\n\n"
        "```bash\nsdtt models\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.skip, b.code) for b in found] == [
        ("needs a key", "sdtt judge --model openai/x s"),
        (None, "sdtt models"),
    ]


def test_the_runner_reports_a_failing_block(tmp_path: Path) -> None:
    block = Block(tmp_path / "p.md", 1, "bash", "sdtt persona show no-such-persona", None)
    done = run(block, tmp_path, workspace(tmp_path))
    assert done.returncode != 0
    assert "no-such-persona" in done.stdout + done.stderr
