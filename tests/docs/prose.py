"""The prose of a documentation page, cut into sentences, to measure how long they are.

Only running text counts: fenced blocks, tables, headings, HTML comments, admonition
markers and snippet includes are left out. Each paragraph and each list item is measured
on its own, so a bullet never runs into the next one. Inline code and a link count as
the words they show.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
COMMENT = re.compile(r"<!--.*?-->", re.S)
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|\[([^\]]*)\]\[[^\]]*\]")
CODE = re.compile(r"`[^`]*`")
# A sentence ends at . ? or ! followed by a space and something that can start one.
END = re.compile(r"(?<=[.?!])[\"')\]]*\s+(?=[\"'(\[*_`]*[A-Z0-9`])")
# Abbreviations whose full stop does not end a sentence.
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "Fig.", "al.")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a page's prose."""

    page: Path
    line: int
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def paragraphs(page: Path) -> list[tuple[int, str]]:
    """Paragraphs and list items of running text, each with its first line's number."""
    found: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    fenced = False

    def flush() -> None:
        if current:
            found.append((start, " ".join(current)))
            current.clear()

    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text("utf-8"))
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if FENCE.match(line):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if (
            not stripped
            or stripped.startswith(("#", "|", "!!!", "???", "--8<--", "<", ":::"))
            or set(stripped) <= set("-=*_ ")
        ):
            flush()
            continue
        if ITEM.match(line):
            flush()
            stripped = ITEM.sub("", line, count=1).strip()
        if not current:
            start = number
        current.append(stripped)
    flush()
    return found


def _plain(text: str) -> str:
    text = LINK.sub(lambda m: m.group(1) or m.group(2) or "", text)
    text = CODE.sub(lambda m: m.group(0).replace(" ", "_"), text)
    for abbreviation in ABBREVIATIONS:
        text = text.replace(abbreviation, abbreviation.replace(".", ""))
    return text


def sentences(page: Path) -> list[Sentence]:
    """Every sentence of ``page``'s running text, in order."""
    found = []
    for line, block in paragraphs(page):
        for part in END.split(_plain(block)):
            if part.split():
                found.append(Sentence(page, line, part.strip()))
    return found


def median_words(found: list[Sentence]) -> float:
    """The median length in words of ``found`` (0 when there are none)."""
    return statistics.median(s.words for s in found) if found else 0.0
