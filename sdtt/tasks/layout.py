"""How a pair looks: one rendering shared by every export, so both chats look alike.

Lines are numbered across both chats of a pair (chat 2 continues chat 1's numbers), the
speaker is "User A" or "User B", User B's lines are highlighted, and a timestamp is shown
for every line or for none. Real clock times never reach judges: relative times count
from each chat's first line, and clock times (``time``, ``datetime``) are moved so that
both chats of a pair start at the same made-up moment (:func:`pair_start`), keeping only
the gaps between messages. All chat text is HTML-escaped, and so are the braces that
survey tools read as placeholders (``{name}`` in SurveyJS and LimeSurvey, ``${...}`` in
Qualtrics), so a message can neither run a script nor pull in another answer.

The HTML uses inline styles only (survey tools drop ``<style>`` blocks or restyle
classes) and holds no line breaks or tabs, so it survives tab-separated formats.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from sdtt.dialogue.message import Message
from sdtt.dialogue.render import fold_text
from sdtt.tasks.questionnaire import Line, PairItem, Speaker
from sdtt.tasks.study import Timestamps
from sdtt.templates import escape_html as escape_html  # exporters import it from here

SPEAKER_LABELS: dict[Speaker, str] = {"A": "User A", "B": "User B"}
HIGHLIGHT = "#fff1b8"
CHAT_TITLES = ("Chat 1", "Chat 2")

_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]|~])")
_MARKDOWN_LINE_START = re.compile(r"^(\s*)([#+-]|\d+[.)])")


DEFAULT_PAIR_START = datetime(2023, 5, 17, 19, 4, 0)
"""Where both chats of a pair start when no :func:`pair_start` was drawn."""


def pair_start(rng: random.Random) -> datetime:
    """A plausible made-up moment for both chats of a pair to start: a day of 2023 (a
    year neither the corpus nor a new bot run comes from), between 09:00 and 20:59."""
    day = datetime(2023, 1, 1) + timedelta(days=rng.randrange(365))
    return day.replace(
        hour=rng.randrange(9, 21), minute=rng.randrange(60), second=rng.randrange(60)
    )


def format_relative(seconds: float) -> str:
    """Seconds since a chat's first line as judges see them: ``+0:00``, ``+1:05:09``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"+{hours}:{minutes:02d}:{secs:02d}" if hours else f"+{minutes}:{secs:02d}"


def format_timestamp(time: datetime, mode: Timestamps) -> str | None:
    """A (already moved) message time as judges see it, or None when times are hidden.

    ``relative`` times need the chat's first line: use :func:`number_lines`.
    """
    if mode == "hidden":
        return None
    if mode == "time":
        return time.strftime("%H:%M:%S")
    if mode == "datetime":
        return time.strftime("%Y-%m-%d %H:%M:%S")
    raise ValueError(f"{mode!r} times depend on the chat's first line")


def shown_times(messages: Sequence[Message], mode: Timestamps, start: datetime) -> list[str | None]:
    """The times judges see for one chat's messages: moved so the chat begins at
    ``start`` (clock modes), counted from its first message (``relative``), or none."""
    if not messages or mode == "hidden":
        return [None] * len(messages)
    first = messages[0].time
    if mode == "relative":
        return [format_relative((m.time - first).total_seconds()) for m in messages]
    return [format_timestamp(start + (m.time - first), mode) for m in messages]


def number_lines(
    chats: Sequence[Sequence[Message]],
    mode: Timestamps,
    *,
    start: datetime = DEFAULT_PAIR_START,
) -> tuple[list[Line], list[Line]]:
    """Turn the two chats' messages into lines numbered across both chats.

    Times are shown as ``mode`` says; clock times begin at ``start`` in both chats.
    """
    if len(chats) != 2:
        raise ValueError("a pair has exactly two chats")
    numbered: list[list[Line]] = [[], []]
    number = 1
    for index, messages in enumerate(chats):
        times = shown_times(messages, mode, start)
        for message, time in zip(messages, times, strict=True):
            numbered[index].append(
                Line(
                    number=number,
                    speaker="A" if message.side == "user" else "B",
                    time=time,
                    text=fold_text(message.text),
                )
            )
            number += 1
    return numbered[0], numbered[1]


def plain_label(text: str) -> str:
    """A label for places that show plain text but still expand placeholders.

    Braces become parentheses (they cannot be escaped in plain-text labels) and line
    breaks are folded.
    """
    return fold_text(text).replace("{", "(").replace("}", ")")


def scale_points(low: int, high: int, ends: tuple[str, str]) -> list[tuple[int, str]]:
    """Every point of the scale ``low``..``high`` with its label: ``"1 - guessing"`` at
    the ends (``ends`` describes them), the bare number between."""
    described = {high: ends[1], low: ends[0]}
    return [
        (value, f"{value} - {described[value]}" if value in described else str(value))
        for value in range(low, high + 1)
    ]


def _line_html(line: Line) -> str:
    is_b = line.speaker == "B"
    row_style = f' style="background:{HIGHLIGHT}"' if is_b else ""
    cell = "padding:4px 8px;vertical-align:top;text-align:left;"
    speaker_style = cell + "white-space:nowrap;" + ("font-weight:bold;" if is_b else "")
    parts = [
        f"<tr{row_style}>",
        f'<td style="{cell}color:#666;text-align:right;">{line.number}</td>',
        f'<td style="{speaker_style}">{SPEAKER_LABELS[line.speaker]}</td>',
    ]
    if line.time is not None:
        parts.append(
            f'<td style="{cell}color:#666;white-space:nowrap;">{escape_html(line.time)}</td>'
        )
    parts.append(f'<td style="{cell}overflow-wrap:anywhere;">{escape_html(line.text)}</td>')
    parts.append("</tr>")
    return "".join(parts)


def _colgroup(lines: Sequence[Line]) -> str:
    # Fixed column widths, so both chats of a pair line up exactly alike.
    widths = ["3em", "5.5em"]
    if any(line.time is not None for line in lines):
        widths.append("10.5em" if any(len(line.time or "") > 8 for line in lines) else "5.5em")
    widths.append("auto")
    return "<colgroup>" + "".join(f'<col style="width:{w}">' for w in widths) + "</colgroup>"


def chat_html(title: str, lines: Sequence[Line]) -> str:
    """One chat as a titled table of numbered lines."""
    rows = "".join(_line_html(line) for line in lines)
    return (
        '<div style="margin:0 0 16px 0;">'
        f'<div style="font-weight:bold;margin:0 0 4px 0;">{escape_html(title)}</div>'
        '<table style="border-collapse:collapse;table-layout:fixed;width:100%;'
        'font-size:15px;line-height:1.4;">'
        f"{_colgroup(lines)}<tbody>{rows}</tbody></table></div>"
    )


def pair_html(item: PairItem) -> str:
    """Both chats of a pair as one HTML fragment (no line breaks, inline styles)."""
    legend = (
        '<div style="margin:0 0 8px 0;font-size:14px;color:#444;">'
        f'Lines of User B are highlighted <span style="background:{HIGHLIGHT};padding:0 4px;">'
        "like this</span>.</div>"
    )
    chats = "".join(
        chat_html(title, lines) for title, lines in zip(CHAT_TITLES, item.chats, strict=True)
    )
    return f"<div>{legend}{chats}</div>"


def paragraphs_html(text: str) -> str:
    """Researcher-written text (instructions) as escaped HTML paragraphs."""
    blocks = [block.strip() for block in text.split("\n\n") if block.strip()]
    return "".join(f"<p>{escape_html(' '.join(block.split()))}</p>" for block in blocks)


def line_text(line: Line) -> str:
    """One line as plain text: ``12  User B  [10:02:11]  text``."""
    time = f"[{line.time}] " if line.time is not None else ""
    return f"{line.number:>3}  {SPEAKER_LABELS[line.speaker]}  {time}{line.text}"


def pair_text(item: PairItem) -> str:
    """Both chats as plain text (User B's lines marked with '>')."""
    out: list[str] = []
    for title, lines in zip(CHAT_TITLES, item.chats, strict=True):
        out.append(title)
        out += [(">" if line.speaker == "B" else " ") + line_text(line) for line in lines]
        out.append("")
    return "\n".join(out).rstrip("\n")


def escape_markdown(text: str) -> str:
    """Escape Markdown syntax (and raw HTML) in text: inline marks, and block marks that
    would start a heading, quote or list at the beginning of a line."""
    escaped = _MARKDOWN_INLINE.sub(r"\\\1", html.escape(text, quote=False))

    def block(match: re.Match[str]) -> str:
        mark = match.group(2)
        # An ordered-list marker is escaped at its dot ("1\\."), the others before them.
        return match.group(1) + (mark[:-1] + "\\" + mark[-1] if mark[0].isdigit() else "\\" + mark)

    return _MARKDOWN_LINE_START.sub(block, escaped)
