"""Reading input files, with errors that name the file (and line) and say what to do."""

from __future__ import annotations

import io
import json
import os
import re
import select
import stat
import sys
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sdtt.errors import InputError, naming

TRANSCRIPTS_DIR = Path("transcripts")
"""Where commands and the chat app write transcripts unless told otherwise."""


PIPE_DEADLINE_S = 30.0
"""How long a pipe given as an input file (``sdtt score <(cat j.jsonl)``) may take to
deliver the whole file; ``SDTT_PIPE_DEADLINE`` (seconds) changes it."""


def _pipe_deadline() -> float:
    try:
        return float(os.environ.get("SDTT_PIPE_DEADLINE", PIPE_DEADLINE_S))
    except ValueError:
        return PIPE_DEADLINE_S


def _read_pipe(path: Path, what: str) -> bytes:
    """Everything a FIFO delivers until its writer closes it, within the deadline.

    Opened without waiting (a plain open would block until a writer comes, for ever if
    none does); a pipe still open at the deadline is refused, as is one that delivered
    nothing by then (no writer, or an empty file: the two look alike on a pipe).
    """
    deadline_s = _pipe_deadline()
    deadline = time.monotonic() + deadline_s
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    chunks: list[bytes] = []
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.1))
            if not ready:
                continue
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            if chunk:
                chunks.append(chunk)
            elif chunks:
                return b"".join(chunks)
            else:
                time.sleep(0.01)  # no writer yet: reads see an end until one opens it
    finally:
        os.close(fd)
    raise InputError(
        f"is a pipe that {'did not close' if chunks else 'delivered nothing'} within "
        f"{deadline_s:g} s: it is not read as a {what}.",
        path=path,
        hint="Save the file to disk and give its name, or set SDTT_PIPE_DEADLINE (seconds).",
    )


def _checked_kind(path: Path, what: str) -> bool:
    """True for a FIFO; a regular file or folder passes; a device or socket is refused."""
    mode = path.stat().st_mode
    if stat.S_ISFIFO(mode):
        return True
    # Checked before opening: a device such as /dev/zero never ends.
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise InputError(
            f"is a device or socket, not a regular file: it is not read as a {what}.",
            path=path,
            hint="Give a file saved on disk.",
        )
    return False


def read_file_bytes(path: Path, *, what: str = "file") -> bytes:
    """The bytes of ``path``; a missing or unreadable file is an :class:`InputError`.

    ``what`` names the file in the message (``"study spec"`` gives "study spec not
    found."). A pipe is read until its writer closes it, within a deadline (see
    :data:`PIPE_DEADLINE_S`).
    """
    try:
        if _checked_kind(path, what):
            return _read_pipe(path, what)
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found.", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the {what} ({error.strerror}).", path=path) from None


def open_input(path: Path, *, what: str = "file") -> BinaryIO:
    """``path`` opened for reading in binary, for reading a large file a part at a time;
    the same errors as :func:`read_file_bytes` (a pipe is read whole first)."""
    try:
        if _checked_kind(path, what):
            return io.BytesIO(_read_pipe(path, what))
        return path.open("rb", buffering=1 << 20)
    except FileNotFoundError:
        raise InputError(f"{what} not found.", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the {what} ({error.strerror}).", path=path) from None


def read_text_file(path: Path, *, what: str = "file") -> str:
    """The UTF-8 text of ``path`` (a byte-order mark dropped), as :class:`InputError`s:
    missing, unreadable, not a regular file, not UTF-8, empty, or holding NUL characters
    (see :func:`checked_text`)."""
    raw = read_file_bytes(path, what=what)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            "is not UTF-8 text.",
            path=path,
            line=raw[: error.start].count(b"\n") + 1,
            hint="Re-save it as UTF-8.",
        ) from None
    return checked_text(text, path)


def checked_text(text: str, path: Path, *, what: str | None = None) -> str:
    """``text`` read from ``path``, refused (an :class:`InputError`, one line) when it
    holds NUL characters, or is empty when ``what`` names what it must hold (an empty
    survey file reads as no answers at all). Text never holds NULs: a file full of them
    was cut off by a crash, or is UTF-16 without a byte-order mark, which decodes as
    "valid" UTF-8 with a NUL after every letter (``p\x00e\x00t\x00s``)."""
    if "\x00" in text:
        raise InputError(
            "holds NUL characters: it is UTF-16 text, or was filled with zeros by a crash.",
            path=path,
            line=text.count("\n", 0, text.index("\x00")) + 1,
            hint="Re-save it as UTF-8 text.",
        )
    if what is not None and not text.strip():
        raise InputError(f"is empty: it holds no {what}.", path=path)
    return text


def parse_json(text: str, path: Path) -> Any:
    """The JSON document ``text`` read from ``path``; bad JSON is an :class:`InputError`
    naming the file and line. Text changed on the way in is reported (see
    :class:`TextRepairs`)."""
    repairs = TextRepairs()
    try:
        value = loads_json(text, repairs)
        repairs.report(path)
        return value
    except json.JSONDecodeError as error:
        raise InputError(
            f"is not valid JSON ({error.msg}).", path=path, line=error.lineno
        ) from None


def load_settings_file(path: Path, *, what: str, toml_hint: str | None = None) -> Any:
    """The parsed content of a ``.json`` file, or of a TOML file (any other suffix).

    ``what`` names the file when it is missing or unreadable; ``toml_hint`` follows a
    TOML syntax error.
    """
    raw = read_file_bytes(path, what=what)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text.", path=path) from None
    if path.suffix.lower() == ".json":
        return parse_json(text, path)
    try:
        return loads_toml(text)
    except TomlTooComplexError as error:
        raise InputError(
            f"is not valid TOML ({error.problem}).", path=path, line=error.line, hint=toml_hint
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"is not valid TOML ({error}).", path=path, hint=toml_hint) from None


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Write ``<name>.partial`` next to ``path`` in the block, then rename it into place.

    A kill leaves the old file or the new one, never half of either; a failed write (disk
    full) removes the partial file and raises the error naming ``path``.
    """
    partial = path.with_name(path.name + ".partial")
    try:
        partial.unlink(missing_ok=True)
        yield partial
        os.replace(partial, path)
    except BaseException as error:
        with suppress(OSError):
            partial.unlink()
        if isinstance(error, OSError):
            raise naming(error, path, instead_of=partial) from None
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) all at once (see :func:`replacing`)."""
    with replacing(path) as partial:
        partial.write_text(text, encoding="utf-8")


def sort_jsonl(path: Path, key: Callable[[Any], Any]) -> None:
    """Put the records of a JSONL file in order by ``key`` of each record, all at once
    (records of one key keep their order). Tasks that append concurrently (answers come
    back in any order, and trio schedules tasks in a random order) then leave the same
    bytes on every run. Lines are kept byte for byte; a line that is not JSON (cut short
    by a kill) goes last."""
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]

    def order(line: str) -> tuple[int, Any]:
        try:
            return (0, key(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            return (1, 0)

    ordered = "".join(line + "\n" for line in sorted(lines, key=order))
    if ordered != text:
        write_text_atomic(path, ordered)


MAX_DEPTH = 100
"""Deepest nesting of lists and objects sdtt reads; its own files stay below 10. Deeper
values would fail later, when they are validated or written again."""
# Python refuses to turn longer digit strings into an int (CVE-2020-10735); 0 means no limit.
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = re.compile(rf"\d{{{MAX_INT_DIGITS + 1},}}")
# Strings (whose brackets do not count) and brackets, for finding where nesting gets deep.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TOML_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]')


def _deepest(text: str, token: re.Pattern[str]) -> int:
    """Offset of the first bracket at the deepest nesting level of ``text``."""
    depth = deepest = position = 0
    for match in token.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest, position = depth, match.start()
        elif bracket in "]}":
            depth -= 1
    return position


class JsonTooComplexError(json.JSONDecodeError):
    """JSON nested too deeply, or holding an integer too long for Python to read."""


class TextChangedWarning(UserWarning):
    """Text of an input file was changed on the way in (see :class:`TextRepairs`)."""


@dataclass
class TextRepairs:
    """What reading changed in a file's text, counted, with the line of the first change.

    A lone surrogate (``"\\ud83d"`` in JSON: half of an emoji cut by some tool) becomes
    U+FFFD, since no UTF-8 file can hold it and writing it back would fail; a NUL
    (``"\\u0000"``) is removed, since no text holds one and terminals, HTML and survey
    tools drop or choke on it.
    """

    surrogates: int = 0
    nuls: int = 0
    first_line: int | None = None

    def clean(self, text: str, line: int | None) -> str:
        """``text`` repaired, with what was changed counted."""
        surrogates = len(_LONE_SURROGATE.findall(text))
        nuls = text.count("\x00")
        if not surrogates and not nuls:
            return text
        self.surrogates += surrogates
        self.nuls += nuls
        if self.first_line is None:
            self.first_line = line
        return _LONE_SURROGATE.sub("\ufffd", text).replace("\x00", "")

    def report(self, path: Path | str) -> None:
        """Warn (once, for the whole file) when anything was changed."""
        changes = []
        if self.surrogates:
            changes.append(f"{self.surrogates} lone surrogate(s) replaced by U+FFFD")
        if self.nuls:
            changes.append(f"{self.nuls} NUL character(s) removed")
        if changes:
            where = f"{path}:{self.first_line}" if self.first_line is not None else str(path)
            warnings.warn(
                TextChangedWarning(
                    f"{where}: text changed on the way in: {' and '.join(changes)}, the "
                    "first on this line; check the file against the one it came from."
                ),
                stacklevel=2,
            )


def loads_json(text: str, repairs: TextRepairs | None = None, *, line: int | None = None) -> Any:
    """``json.loads``, with absurd nesting and over-long integers as ``JSONDecodeError``.

    Python's parser raises ``RecursionError`` or a plain ``ValueError`` for those, which
    callers would not expect from bad input; as a ``JSONDecodeError`` (with the line and
    column where the problem is) every caller's usual error message covers them. Lone
    surrogates and NULs in strings are repaired (see :class:`TextRepairs`) and counted
    in ``repairs`` with ``line`` (or the line within ``text``), for the caller to report.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        problem, position = "nested too deeply", _deepest(text, _JSON_TOKEN)
    except ValueError as error:
        long_number = _LONG_NUMBER.search(text)
        if long_number is None:
            raise JsonTooComplexError(str(error), text, 0) from None
        problem = f"a number has more than {MAX_INT_DIGITS} digits"
        position = long_number.start()
    else:
        # Counting brackets is cheap and rules out deep nesting for almost every record.
        if text.count("[") + text.count("{") <= MAX_DEPTH or _depth(value) <= MAX_DEPTH:
            first = _CHANGED_ESCAPE.search(text) if "\\u" in text else None
            if first is not None:
                where = line if line is not None else text.count("\n", 0, first.start()) + 1
                return _repaired(value, repairs or TextRepairs(), where)
            return value
        problem, position = "nested too deeply", _deepest(text, _JSON_TOKEN)
    raise JsonTooComplexError(problem, text, position) from None


# The escapes that read as text this module changes: a surrogate, or NUL.
_CHANGED_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")
CHANGED_ESCAPE_BYTES = re.compile(_CHANGED_ESCAPE.pattern.encode("ascii"))
"""The same escapes in undecoded JSON: a reader that skips this module's repairs
(Arrow's) must leave such text to it."""
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _repaired(value: Any, repairs: TextRepairs, line: int) -> Any:
    """``value`` with every string cleaned by ``repairs`` (JSON has already joined the
    surrogate pairs that make a character)."""
    if isinstance(value, str):
        return repairs.clean(value, line)
    if isinstance(value, list):
        return [_repaired(item, repairs, line) for item in value]
    if isinstance(value, dict):
        return {
            _repaired(key, repairs, line): _repaired(item, repairs, line)
            for key, item in value.items()
        }
    return value


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item)
    return deepest


class TomlTooComplexError(tomllib.TOMLDecodeError):
    """TOML that nests too deeply or holds an over-long integer; ``line`` locates it."""

    def __init__(self, problem: str, line: int) -> None:
        super().__init__(f"{problem} (line {line})")
        self.problem = problem
        self.line = line


def loads_toml(text: str) -> Any:
    """``tomllib.loads``, with absurd nesting and over-long integers as TOML errors."""
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        problem, position = "nested too deeply", _deepest(text, _TOML_TOKEN)
    except ValueError as error:
        long_number = _LONG_NUMBER.search(text)
        if long_number is None:
            raise tomllib.TOMLDecodeError(str(error)) from None
        problem = f"a number has more than {MAX_INT_DIGITS} digits"
        position = long_number.start()
    else:
        if _depth(value) <= MAX_DEPTH:
            return value
        problem, position = "nested too deeply", _deepest(text, _TOML_TOKEN)
    raise TomlTooComplexError(problem, text.count("\n", 0, position) + 1) from None


def output_folder(path: str | Path, *, option: str = "--out") -> Path:
    """Create the folder ``path`` (and its parents) for a command's output; return it.

    A file in the way, or a place that cannot be written, is an :class:`InputError`
    naming ``option`` and the path, raised before anything is written.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(
            f"is a file, but {option} must be a folder.",
            path=path,
            hint=f"Give {option} a folder name (it is created if needed).",
        )
    _make_folder(path, f"cannot create the {option} folder", path, option)
    return path


def output_file(path: str | Path, *, option: str = "--out") -> Path:
    """Check that ``path`` can be written as a file (creating its folder); return it.

    A folder in the way, or a parent that cannot be created, is an :class:`InputError`.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(
            f"is a folder, but {option} must be a file.",
            path=path,
            hint=f"Give {option} a file name.",
        )
    if path.exists() and not path.is_file():
        raise InputError(
            f"is a device, pipe or socket, not a regular file, which {option} must be.",
            path=path,
            hint=f"Give {option} the name of a file on disk.",
        )
    _make_folder(path.parent, f"cannot create the folder of {option}", path, option)
    return path


def _make_folder(folder: Path, problem: str, shown: Path, option: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            f"{problem} ({_reason(error)}).",
            path=shown,
            hint=f"Give {option} a place you can write to.",
        ) from None


def _reason(error: OSError) -> str:
    reasons = {
        FileExistsError: "a file is in the way",
        NotADirectoryError: "part of the path is a file",
        FileNotFoundError: "part of the path does not exist",
        PermissionError: "permission denied",
    }
    for kind, reason in reasons.items():
        if isinstance(error, kind):
            return reason
    return error.strerror or type(error).__name__


def what_file_is(text: str) -> str | None:
    """What a file that sdtt could not read as expected holds, and which command takes
    it, when its content shows it is another of sdtt's or a survey tool's files.

    Called with the file's text when it fails to parse, so the error can say "this is
    a study's answer key" rather than only "not valid JSON".
    """
    head = text.lstrip("\ufeff").lstrip()
    first = head.split("\n", 1)[0].strip()
    columns = {cell.strip().strip('"').lower() for cell in re.split(r"[,;\t]", first)}
    try:
        data = loads_json(head) if head.startswith(("{", "[")) else None
    except json.JSONDecodeError:
        data = None
    keys = set(data) if isinstance(data, dict) else set()
    if {"questionnaire_id", "questionnaire_sha256", "items"} <= keys:
        return (
            "This is a study's answer key (keep it secret): sdtt score reads the judgement "
            "files scored with it, e.g. sdtt score STUDY/judgements.jsonl."
        )
    if {"id", "items", "demographics"} <= keys:
        return (
            "This is a study's questionnaire.json: give the study folder to sdtt judge or "
            "sdtt questionnaire export, and judgement files (STUDY/judgements.jsonl) to "
            "sdtt score."
        )
    if "pages" in keys and {"title", "completedHtml", "showQuestionNumbers"} & keys:
        return (
            "This is a SurveyJS survey (what judges get), not its results: import the "
            "results with sdtt responses import --study STUDY --format surveyjs RESULTS.json."
        )
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        return (
            "This looks like SurveyJS results: import them with sdtt responses import "
            "--study STUDY --format surveyjs FILE."
        )
    tools = [
        ({"startdate", "enddate", "responseid"}, "a Qualtrics CSV export", "qualtrics"),
        ({"role", "trial_type"}, "a jsPsych data file", "jspsych"),
        ({"id", "submitdate", "lastpage"}, "a LimeSurvey responses file", "limesurvey"),
        ({"judge_id", "question", "answer"}, "a long CSV of answers", "csv"),
    ]
    for needed, name, tool in tools:
        if needed <= columns:
            return (
                f"This is {name}: import it with sdtt responses import --study STUDY "
                f"--format {tool} FILE."
            )
    return None
