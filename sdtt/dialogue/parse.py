"""Parsing model output into timestamped messages.

Models are asked to write lines in the prompt format, but they add chatter, drop or
garble timestamps, go back in time, or start writing the other side. Parsing keeps what
can be used and never trusts a timestamp that is missing, unparsable, earlier than the
previous message (or than "now"), or implausibly far ahead: such a timestamp is resampled
from a typing-time model instead.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta

from sdtt.dialogue.message import RESPONSE, USER, Message, Side
from sdtt.errors import EmptyReplyError
from sdtt.seeds import seeded_rng

Resampler = Callable[[datetime, str, random.Random], datetime]
"""Given the earliest allowed time and the message text, return a plausible send time."""

_LABELS: dict[str, Side] = {
    "user": USER,
    "a": USER,
    "user a": USER,
    "response": RESPONSE,
    "b": RESPONSE,
    "user b": RESPONSE,
}
# Optional markdown emphasis or list bullet, a label, a colon, then an optional [timestamp].
_LABELLED = re.compile(
    r"^\s*(?:[-*>]\s+)?\**\s*(?P<label>user a|user b|user|response|a|b)\s*\**\s*:\s*\**"
    r"\s*(?:\[(?P<time>[^\]\n]{0,40})\])?\s*(?P<text>.*)$",
    re.IGNORECASE,
)
_TIMESTAMP_ONLY = re.compile(r"^\s*\[(?P<time>[^\]\n]{0,40})\]\s*(?P<text>.*)$")
# A timestamp cut off before its "]" (a reply that hit its token cap mid-line): "[" and
# a date, then only more date and time characters to the end of the line.
_CUT_TIMESTAMP = re.compile(r"^\[\d{2,4}[-/]\d{1,2}[-/\d :T.]*$")
# Chat-template markup a model copies from a prompt wrapped in a template it does not
# know (llama-2's [INST] <<SYS>>, ChatML's <|im_start|>, Gemma's <start_of_turn>): never
# text a person wrote, so it is taken out of a line, and a line of nothing else is empty.
_TEMPLATE_MARKUP = re.compile(
    r"\[/?INST\]|<</?SYS>>|<\|im_start\|>(?:system|user|assistant)?|<\|[a-z_]{2,20}\|>"
    r"|</?s>|<(?:start|end)_of_turn>(?:user|model)?",
    re.IGNORECASE,
)
_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M")
# The prompt format's own timestamp, as models copy it: read without strptime, which
# costs more than the rest of a reply's parsing. Anything else takes the slow road.
_PROMPT_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})")


@dataclass(frozen=True)
class ParsedLine:
    """One line of model output recognised as a message (time not yet checked)."""

    side: Side
    text: str
    time: datetime | None
    structured: bool
    """True when the line carried a side label or a timestamp."""


def typing_time_resampler(seconds_per_char: float = 0.3, spread: float = 0.03) -> Resampler:
    """A resampler that places a message one typing delay after the earliest allowed time.

    The delay is ``N(seconds_per_char, spread) * len(text)`` seconds, at least one second.
    """

    def resample(earliest: datetime, text: str, rng: random.Random) -> datetime:
        rate = max(0.05, rng.gauss(seconds_per_char, spread))
        return earliest + timedelta(seconds=max(1.0, rate * len(text)))

    return resample


def parse_time(raw: str, zone_of: datetime) -> datetime | None:
    """Read a timestamp written by a model; ``None`` when it can't be read.

    A timestamp without a zone is taken to be in the zone of ``zone_of``.
    """
    raw = raw.strip()
    if _PROMPT_TIME.fullmatch(raw):
        # What strptime reads with the first format; an impossible date (February 30th)
        # goes on to the formats below, which refuse it too.
        try:
            return datetime(
                int(raw[:4]),
                int(raw[5:7]),
                int(raw[8:10]),
                int(raw[11:13]),
                int(raw[14:16]),
                int(raw[17:]),
                tzinfo=zone_of.tzinfo,
            )
        except ValueError:
            pass
    parsed = _read_time(raw)
    if parsed is not None and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone_of.tzinfo)
    return parsed


def _read_time(raw: str) -> datetime | None:
    for fmt in _TIME_FORMATS:
        with suppress(ValueError):
            return datetime.strptime(raw, fmt)
    with suppress(ValueError):
        return datetime.fromisoformat(raw)
    return None


def scan_lines(text: str, zone_of: datetime) -> list[ParsedLine]:
    """Split ``text`` into lines, reading side labels and timestamps where present.

    A line without a side label is structured only when it starts with a bracket that
    reads as a time: ``[INST] <<SYS>>`` or ``[laughs]`` is text, not a timestamp.
    """
    found: list[ParsedLine] = []
    for raw_line in text.splitlines():
        match = _LABELLED.match(raw_line)
        if match:
            side = _LABELS[match["label"].lower()]
            raw_time = match["time"]
            time = parse_time(raw_time, zone_of) if raw_time else None
            said = match["text"].strip()
            kept = _TEMPLATE_MARKUP.sub("", said).strip()
            if _CUT_TIMESTAMP.match(said) or (said and not kept):
                # Not text the person wrote: the line holds no message.
                found.append(ParsedLine(side, "", None, structured=True))
                continue
            found.append(ParsedLine(side, kept, time, structured=True))
            continue
        match = _TIMESTAMP_ONLY.match(raw_line)
        time = parse_time(match["time"], zone_of) if match is not None else None
        if match is None or time is None:
            kept = _TEMPLATE_MARKUP.sub("", raw_line).strip()
            if kept and not _CUT_TIMESTAMP.match(kept):
                found.append(ParsedLine(RESPONSE, kept, None, structured=False))
            continue
        kept = _TEMPLATE_MARKUP.sub("", match["text"]).strip()
        found.append(ParsedLine(RESPONSE, kept, time, structured=True))
    return found


def _timed(
    lines: list[ParsedLine],
    now: datetime,
    rng: random.Random,
    resample: Resampler,
    max_gap: timedelta | None,
) -> list[Message]:
    messages: list[Message] = []
    earliest = now
    for line in lines:
        if not line.text:
            continue
        time = line.time
        too_early = time is None or time < earliest
        too_late = time is not None and max_gap is not None and time - earliest > max_gap
        if time is None or too_early or too_late:
            time = resample(earliest, line.text, rng)
        messages.append(Message(side=line.side, text=line.text, time=time))
        earliest = messages[-1].time
    return messages


def parse_reply(
    text: str,
    *,
    now: datetime,
    rng: random.Random | None = None,
    continued_from: str = "",
    max_messages: int | None = None,
    max_gap: timedelta | None = timedelta(minutes=30),
    resample: Resampler | None = None,
) -> list[Message]:
    """Turn a model's reply into side-B messages sent at or after ``now``.

    ``continued_from`` is the text the model was asked to continue (e.g.
    ``"Response: ["``); it is put back in front before parsing. Lines the model wrote for
    side A end the reply. When the output has labelled or timestamped lines, unlabelled
    lines around them are treated as chatter and dropped; plain unstructured output is
    taken line by line. Raises :class:`EmptyReplyError` when no message remains.
    """
    rng = rng or seeded_rng(0, "parse")
    resample = resample or typing_time_resampler()
    lines = scan_lines(continued_from + text, now)
    any_structure = any(line.structured for line in lines)
    kept: list[ParsedLine] = []
    for line in lines:
        if line.side == USER:
            break
        if line.structured or not any_structure:
            kept.append(line)
    messages = _timed(kept, now, rng, resample, max_gap)
    if max_messages is not None:
        messages = messages[:max_messages]
    if not messages:
        raise EmptyReplyError(
            "The model's reply held no usable message "
            f"(it wrote {_preview(text)}). Retry the call, or try another model or prompt."
        )
    return messages


def parse_dialogue(
    text: str,
    *,
    start: datetime,
    rng: random.Random | None = None,
    max_gap: timedelta | None = None,
    resample: Resampler | None = None,
) -> list[Message]:
    """Parse a generated conversation with both sides (labelled lines only).

    Unlabelled lines are chatter and dropped; timestamps before ``start`` or before the
    previous line are resampled. Raises :class:`EmptyReplyError` when no message remains.
    """
    rng = rng or seeded_rng(0, "parse")
    resample = resample or typing_time_resampler()
    labelled = [line for line in scan_lines(text, start) if line.structured]
    messages = _timed(labelled, start, rng, resample, max_gap)
    if not messages:
        raise EmptyReplyError(
            "The generated dialogue held no 'User:' or 'Response:' lines "
            f"(it wrote {_preview(text)}). Retry, or check the prompt and model."
        )
    return messages


def _preview(text: str, limit: int = 120) -> str:
    stripped = text.strip()
    if not stripped:
        return "nothing but whitespace" if text else "nothing"
    shown = stripped if len(stripped) <= limit else stripped[:limit] + "..."
    return repr(shown)
