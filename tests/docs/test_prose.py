"""The documentation pages are written in short sentences.

Measured on running text only (tests/docs/prose.py leaves out code blocks, tables,
headings and comments). On each page listed:

- the median sentence has at most ``MEDIAN_WORDS`` words;
- no sentence has more than ``MOST_WORDS``;
- no paragraph or list item has more than ``BLOCK_WORDS`` (a bullet is never a wall of
  text; nested bullets count on their own).

The pages listed were rewritten to these limits; a page joins the list once it meets
them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.prose import median_words, paragraphs, sentences

ROOT = Path(__file__).resolve().parents[2]
MEDIAN_WORDS = 20
MOST_WORDS = 45
BLOCK_WORDS = 120

PAGES = [
    "docs/index.md",
    "docs/tutorials/first-study.md",
    "docs/tutorials/real-models.md",
    "docs/tutorials/live-study.md",
    "docs/explanation/method.md",
    "docs/explanation/benchmarks.md",
    "docs/how-to/surveys.md",
    "docs/how-to/batch-judging.md",
    "docs/how-to/deploy-serve.md",
    "docs/how-to/library.md",
    "docs/reference/questionnaires.md",
    "docs/reference/judges-and-scores.md",
    "docs/reference/serve.md",
    "docs/reference/chat.md",
    "docs/reference/demo.md",
    "docs/reference/simulate.md",
    "docs/reference/persona.md",
    "docs/reference/formats.md",
]


@pytest.mark.parametrize("page", PAGES)
def test_the_page_is_written_in_short_sentences(page: str) -> None:
    path = ROOT / page
    found = sentences(path)
    assert found, f"{page}: no prose found"
    assert median_words(found) <= MEDIAN_WORDS, f"{page}: median {median_words(found)} words"
    long = [
        f"{page}:{s.line} ({s.words} words) {s.text[:80]}" for s in found if s.words > MOST_WORDS
    ]
    assert not long, "\n".join(long)
    walls = [
        f"{page}:{line} ({len(text.split())} words)"
        for line, text in paragraphs(path)
        if len(text.split()) > BLOCK_WORDS
    ]
    assert not walls, walls


def test_the_measure_counts_prose_only(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A heading that is long but is not a sentence of the text at all\n\n"
        "One short sentence. Another one, e.g. with an abbreviation and `code here`.\n\n"
        "- A bullet [with a link](other.md).\n"
        "  It goes on here.\n"
        "- A second bullet.\n\n"
        "| a table | row |\n|---|---|\n| words words words | more |\n\n"
        "<!-- a comment. With sentences. -->\n"
        "```bash\necho not prose. Not at all.\n```\n",
        encoding="utf-8",
    )
    assert [s.text for s in sentences(page)] == [
        "One short sentence.",
        "Another one, eg with an abbreviation and `code_here`.",
        "A bullet with a link.",
        "It goes on here.",
        "A second bullet.",
    ]
    assert [s.words for s in sentences(page)] == [3, 8, 5, 4, 3]


def test_a_long_sentence_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("This one " + "goes on and " * 20 + "ends.\n", encoding="utf-8")
    assert max(s.words for s in sentences(page)) > MOST_WORDS
