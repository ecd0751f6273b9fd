"""Their conversations (``convN_lenL.html``: one ``<p> A: ... </p>`` per message) as sdtt
:class:`~sdtt.dialogue.message.Transcript` records, and their class labels.

Their released pages (``Conversations/.../templates/instructions/conv35_len9.html``) wrap
each message in ``<FONT COLOR=...><p style="...">`` and end with an empty ``<p> </p>``
spacer; empty paragraphs are skipped. The catch and 24-exchange pages have no ``_lenL``
(``catch/conv301.html``).

Speaker A becomes side ``user``, speaker B side ``response``. Their files record no
times, so messages get synthetic ones, 30 seconds apart from a fixed start, and the
transcript's ``meta["times"]`` says so: timing analyses must leave these chats out.
A class label (their ``correct_answers.json``: ``{"conv12_len6": "HAI"}``) says who each
speaker was: ``HH`` both human, ``HAI`` A human and B a machine, ``AIH`` the reverse,
``AIAI`` both machines; it lands in ``meta["speakers"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal

from sdtt.dialogue.message import RESPONSE, USER, Message, Side, Transcript
from sdtt.errors import InputError
from sdtt.single.theirdata.jsonfile import key_line, load_json, need_object

Speaker = Literal["human", "machine"]
CLASSES: dict[str, tuple[Speaker, Speaker]] = {
    "HH": ("human", "human"),
    "HAI": ("human", "machine"),
    "AIH": ("machine", "human"),
    "AIAI": ("machine", "machine"),
}
"""Their conversation classes: (speaker A, speaker B)."""
START = datetime(2022, 1, 1, tzinfo=UTC)
STEP = timedelta(seconds=30)
_LINE = re.compile(r"^\s*([AB])\s*:\s*(.*?)\s*$", re.DOTALL)
_NAME = re.compile(r"^(?P<conv>conv\d+)_len(?P<cut>\d+)$")


class _Paragraphs(HTMLParser):
    """Collects the text of every ``<p>`` element with the line it starts on."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self._open: tuple[int, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "p":
            self._close()
            self._open = (self.getpos()[0], [])
        elif tag == "br" and self._open is not None:
            self._open[1].append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self._close()

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)

    def _close(self) -> None:
        if self._open is not None:
            self.found.append((self._open[0], "".join(self._open[1])))
            self._open = None

    def close(self) -> None:
        super().close()
        self._close()


def read_conversation_html(path: str | Path, label: str | None = None) -> Transcript:
    """One conversation file as a transcript; ``label`` is its class (``HH``...)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the conversation ({error}).", path=path) from None
    parser = _Paragraphs()
    parser.feed(text)
    parser.close()
    messages: list[Message] = []
    for line, paragraph in parser.found:
        if not paragraph.strip():
            continue  # their pages end with an empty <p> </p> (a spacer, not a message)
        match = _LINE.match(paragraph)
        if match is None:
            raise InputError(
                f"a message must start with 'A:' or 'B:', not {paragraph.strip()[:30]!r}.",
                path=path,
                line=line,
                field="p",
                hint="Each message is one <p> A: ... </p> or <p> B: ... </p>.",
            )
        side: Side = USER if match.group(1) == "A" else RESPONSE
        messages.append(Message(side=side, text=match.group(2), time=START + STEP * len(messages)))
    if not messages:
        raise InputError(
            "no <p> A: ... </p> messages found.", path=path, hint="Is this one of their files?"
        )
    stem = Path(path).stem
    named = _NAME.match(stem)
    meta: dict[str, object] = {
        "source": f"kreiman-html:{Path(path).name}",
        "times": "synthetic: their files record no times",
        "conversation": named.group("conv") if named else stem,
    }
    if named:
        meta["cut"] = int(named.group("cut"))
    if label is not None:
        if label not in CLASSES:
            raise InputError(
                f"unknown class {label!r}.", path=path, hint=f"Use one of {', '.join(CLASSES)}."
            )
        speaker_a, speaker_b = CLASSES[label]
        meta["class"] = label
        meta["speakers"] = {"A": speaker_a, "B": speaker_b}
    return Transcript(id=stem, messages=messages, meta=meta)


def read_class_labels(path: str | Path) -> dict[str, str]:
    """Their ``{conversation: class}`` file (keys as file stems, e.g. ``conv12_len6``)."""
    data, text = load_json(path)
    found = need_object(data, path, '{"conv12_len6": "HAI", ...}')
    for key, label in found.items():
        if label not in CLASSES:
            raise InputError(
                f"unknown class {label!r}.",
                path=path,
                line=key_line(text, key),
                field=key,
                hint=f"Use one of {', '.join(CLASSES)}.",
            )
    return {str(key): str(label) for key, label in found.items()}


def read_conversation_folder(
    folder: str | Path, labels: Mapping[str, str] | None = None
) -> list[Transcript]:
    """Every ``*.html`` conversation of ``folder`` (sorted), labelled from ``labels`` by
    file stem (or by ``convN`` when the labels name whole conversations). Their
    ``...optionK.html`` files (the topic choices shown beside a conversation) are skipped."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError("no such folder.", path=root)
    transcripts = []
    for path in sorted(root.glob("*.html")):
        if re.search(r"option\d+$", path.stem):
            continue
        label = None
        if labels is not None:
            named = _NAME.match(path.stem)
            label = labels.get(path.stem) or (labels.get(named.group("conv")) if named else None)
        transcripts.append(read_conversation_html(path, label))
    if not transcripts:
        raise InputError("the folder holds no conversation .html files.", path=root)
    return transcripts
