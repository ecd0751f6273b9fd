"""Fuzzing every importer: arbitrary bytes and mangled fixtures end in an SdttError.

Each example runs the whole path a user's file takes (parse, choose the persona, split,
scrub, fit timing); any exception other than :class:`SdttError` fails the test.
"""

from __future__ import annotations

import copy
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.commands.persona_import import options_from_args
from sdtt.errors import SdttError
from sdtt.personas.importers.build import build_persona

from .helpers import FIXTURES, importer, parse_args

SCALE = int(os.environ.get("SDTT_FUZZ_SCALE", "1"))
"""Set SDTT_FUZZ_SCALE=50 to fuzz fifty times longer, with fresh random examples."""


def fuzz(examples: int) -> settings:
    """Settings for one fuzz test: quick and repeatable by default."""
    return settings(max_examples=examples * SCALE, derandomize=SCALE == 1)


WA = FIXTURES / "whatsapp"
SLACK = FIXTURES / "slack" / "export"
TABLE_COLUMNS = ["--columns", "sender=author,text=body,time=ts,conversation=chat"]
JSONL_COLUMNS = ["--columns", "sender=author.name,text=body,time=ts", "--time-format", "epoch_ms"]


def pipeline(fmt: str, data: bytes, *extra: str, me: str = "Ann Smith") -> None:
    """Import ``data`` as ``fmt`` like the CLI; only SdttError may escape."""
    args = parse_args(fmt, "fuzzed-input", "--me", me, "--merge-others", *extra)
    path = Path("fuzzed-input")
    try:
        options = options_from_args(args)
        chat = importer(fmt).parse(data, path, options)
        build_persona(chat, options, fmt=fmt, path=path)
    except SdttError as error:
        assert str(error)  # every error explains itself


# ---------------------------------------------------------------------------- strategies

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(
        ["", "2024-04-13T09:05:12", "1713000312.0002", "Default", "message", "U0ANN"]
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


def _slots(node: Any) -> list[tuple[Any, Any]]:
    found: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((node, key))
            found.extend(_slots(value))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.append((node, index))
            found.extend(_slots(value))
    return found


@st.composite
def mangled_json(draw: st.DrawFn, document: Any) -> bytes:
    """``document`` with one to three values replaced or removed, serialised."""
    doc = copy.deepcopy(document)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        slots = _slots(doc)
        if not slots or draw(st.integers(min_value=0, max_value=30)) == 0:
            doc = draw(json_values)
            continue
        parent, key = draw(st.sampled_from(slots))
        if draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(json_values)
    return json.dumps(doc, ensure_ascii=draw(st.booleans())).encode("utf-8")


@st.composite
def mangled_bytes(draw: st.DrawFn, original: bytes) -> bytes:
    """``original`` cut, spliced, overwritten or padded at random places."""
    data = bytearray(original)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        size = len(data)
        at = draw(st.integers(min_value=0, max_value=size))
        action = draw(st.sampled_from(["cut", "delete", "insert", "overwrite", "duplicate"]))
        if action == "cut":
            del data[at:]
        elif action == "delete":
            del data[at : at + draw(st.integers(min_value=1, max_value=40))]
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=20))
        elif action == "overwrite" and at < size:
            data[at] = draw(st.integers(min_value=0, max_value=255))
        elif action == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(min_value=1, max_value=200))]
    return bytes(data)


INTERESTING = '0123456789/.,:-[] \n\u200e\u202f~"APMapm'


@st.composite
def mangled_text(draw: st.DrawFn, original: str) -> bytes:
    """``original`` with characters that matter to a line parser changed or added."""
    text = original
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        action = draw(st.sampled_from(["replace", "insert", "delete", "unicode"]))
        if action == "replace" and at < len(text):
            text = text[:at] + draw(st.sampled_from(INTERESTING)) + text[at + 1 :]
        elif action == "insert":
            text = text[:at] + draw(st.text(alphabet=INTERESTING, max_size=8)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(min_value=1, max_value=10)) :]
        else:
            text = text[:at] + draw(st.text(max_size=6)) + text[at:]
    return text.encode("utf-8", "surrogatepass")


@st.composite
def whatsapp_lines(draw: st.DrawFn) -> bytes:
    """Lines shaped like export headers with arbitrary numbers in them."""
    lines = []
    number = st.integers(min_value=0, max_value=2100).map(str)
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        date = draw(st.sampled_from("/.-")).join([draw(number), draw(number), draw(number)])
        clock = ":".join(
            [draw(number), draw(number)] + ([draw(number)] if draw(st.booleans()) else [])
        )
        ampm = draw(st.sampled_from(["", " AM", "\u202fPM", " p. m."]))
        who = draw(st.sampled_from(["Ann Smith", "Bob", "~\u202fDee", "", 'x "y']))
        body = draw(st.text(max_size=20))
        if draw(st.booleans()):
            lines.append(f"[{date}, {clock}{ampm}] {who}: {body}")
        else:
            lines.append(f"{date}, {clock}{ampm} - {who}: {body}")
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def _slack_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


SLACK_MEMBERS = {
    file.relative_to(SLACK).as_posix(): file.read_bytes() for file in sorted(SLACK.rglob("*.json"))
}
SLACK_ZIP = _slack_zip(SLACK_MEMBERS)


@st.composite
def mangled_slack(draw: st.DrawFn) -> bytes:
    """The Slack export with one JSON member mangled, zipped again."""
    members = dict(SLACK_MEMBERS)
    name = draw(st.sampled_from(sorted(members)))
    members[name] = draw(mangled_json(json.loads(members[name])))
    return _slack_zip(members)


JSON_FIXTURES: dict[str, Path] = {
    "telegram": FIXTURES / "telegram" / "result.json",
    "discord": FIXTURES / "discord" / "dm.json",
    "messenger": FIXTURES / "messenger" / "inbox" / "bobjones_12345" / "message_1.json",
}
JSON_ME = {"telegram": "Ann Smith", "discord": "annsmith", "messenger": "Zoë Müller"}


# ---------------------------------------------------------------------------- arbitrary bytes

ALL_FORMATS = [
    ("whatsapp", []),
    ("telegram", []),
    ("discord", []),
    ("slack", ["--channel", "ann-bob"]),
    ("messenger", []),
    ("csv", TABLE_COLUMNS),
    ("jsonl", JSONL_COLUMNS),
]


@fuzz(100)
@given(data=st.binary(max_size=600), case=st.sampled_from(ALL_FORMATS))
def test_arbitrary_bytes(data: bytes, case: tuple[str, list[str]]) -> None:
    fmt, extra = case
    pipeline(fmt, data, *extra)


@fuzz(60)
@given(
    data=st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    case=st.sampled_from(ALL_FORMATS),
)
def test_arbitrary_text(data: bytes, case: tuple[str, list[str]]) -> None:
    fmt, extra = case
    pipeline(fmt, data, *extra)


# ---------------------------------------------------------------------------- WhatsApp

WA_TEXTS = sorted(WA.glob("*.txt"))


@fuzz(150)
@given(st.sampled_from(WA_TEXTS).flatmap(lambda p: mangled_text(p.read_text(encoding="utf-8"))))
def test_whatsapp_mangled_text(data: bytes) -> None:
    pipeline("whatsapp", data)


@fuzz(100)
@given(st.sampled_from(WA_TEXTS).flatmap(lambda p: mangled_bytes(p.read_bytes())))
def test_whatsapp_mangled_bytes(data: bytes) -> None:
    pipeline("whatsapp", data)


@fuzz(150)
@given(
    whatsapp_lines(),
    st.sampled_from([[], ["--date-format", "MM/DD/YY"], ["--date-format", "YYYY-MM-DD"]]),
)
def test_whatsapp_header_like_lines(data: bytes, extra: list[str]) -> None:
    pipeline("whatsapp", data, *extra)


# ---------------------------------------------------------------------------- JSON formats


@fuzz(150)
@given(
    st.sampled_from(sorted(JSON_FIXTURES)).flatmap(
        lambda fmt: st.tuples(
            st.just(fmt),
            mangled_json(json.loads(JSON_FIXTURES[fmt].read_text(encoding="utf-8"))),
        )
    )
)
def test_json_exports_mangled_structure(case: tuple[str, bytes]) -> None:
    fmt, data = case
    pipeline(fmt, data, me=JSON_ME[fmt])


@fuzz(100)
@given(
    st.sampled_from(sorted(JSON_FIXTURES)).flatmap(
        lambda fmt: st.tuples(st.just(fmt), mangled_bytes(JSON_FIXTURES[fmt].read_bytes()))
    )
)
def test_json_exports_mangled_bytes(case: tuple[str, bytes]) -> None:
    fmt, data = case
    pipeline(fmt, data, me=JSON_ME[fmt])


# ---------------------------------------------------------------------------- Slack


@fuzz(120)
@given(mangled_slack(), st.sampled_from([["--channel", "ann-bob"], ["--channel", "general"], []]))
def test_slack_mangled_members(data: bytes, extra: list[str]) -> None:
    pipeline("slack", data, *extra, me="ann.smith")


@fuzz(100)
@given(mangled_bytes(SLACK_ZIP))
def test_slack_mangled_zip(data: bytes) -> None:
    pipeline("slack", data, "--channel", "ann-bob", me="ann.smith")


# ---------------------------------------------------------------------------- tables


@fuzz(120)
@given(mangled_text((FIXTURES / "tabular" / "chat.csv").read_text(encoding="utf-8")))
def test_csv_mangled(data: bytes) -> None:
    pipeline("csv", data, *TABLE_COLUMNS)


@fuzz(120)
@given(
    st.lists(
        mangled_json(
            json.loads(
                (FIXTURES / "tabular" / "chat.jsonl").read_text(encoding="utf-8").splitlines()[0]
            )
        ),
        min_size=1,
        max_size=4,
    )
)
def test_jsonl_mangled(lines: list[bytes]) -> None:
    original = (FIXTURES / "tabular" / "chat.jsonl").read_bytes()
    pipeline("jsonl", original + b"\n".join(lines), *JSONL_COLUMNS)


@fuzz(60)
@given(mangled_text((FIXTURES / "tabular" / "chat.jsonl").read_text(encoding="utf-8")))
def test_jsonl_mangled_text(data: bytes) -> None:
    pipeline("jsonl", data, *JSONL_COLUMNS)
