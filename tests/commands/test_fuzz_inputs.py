"""Every command that reads a file, fed seeded hostile versions of it: never a traceback.

Each target command gets the same kinds of damage, drawn from a seeded generator so every
run checks the same cases: truncation, random bytes, deep nesting, huge integers, values
of the wrong type, UTF-16 with and without a BOM, Latin-1, CR-only line ends, NULs and
NUL padding, lone surrogates, a field of 200 KB, an empty file and shuffled lines; and
the file swapped for a device or a FIFO. The command may succeed or refuse (exit 2 with
one ``error:`` line); it may not raise. A full disk is ``test_full_disk.py``'s, over
every command that writes.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.commands.inputs import Outcome, run

Mutation = Callable[[bytes, random.Random], bytes]
WRONG_VALUES: list[object] = [
    None, [], {}, "", "x", -1, 0, 10**300, 1e308, True, "9" * 40, {"a": [1]}, [None],
    "2024-13-45T99:99:99", -(10**20),
]  # fmt: skip


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(max(len(data), 1))]


def random_bytes(data: bytes, rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    changed = bytearray(data)
    for _ in range(5):
        if changed:
            changed[rng.randrange(len(changed))] = rng.randrange(256)
    return bytes(changed)


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([900, 5_000, 200_000])
    nested = b"[" * depth + b"]" * depth
    lines = data.split(b"\n")
    lines[rng.randrange(len(lines))] = b'{"type": "message", "text": ' + nested + b"}"
    return b"\n".join(lines)


def huge_int(data: bytes, rng: random.Random) -> bytes:
    digits = b"7" * rng.choice([4_301, 20_000])
    for target in (b": 1", b":1", b"= 1", b",1", b"1"):
        if target in data:
            return data.replace(target, target[:-1] + digits, 1)
    return data + b"\n" + digits


def _mutate_json_value(value: object, rng: random.Random) -> object:
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        value = dict(value)
        value[key] = (
            _mutate_json_value(value[key], rng) if rng.random() < 0.5 else rng.choice(WRONG_VALUES)
        )
        return value
    if isinstance(value, list) and value:
        index = rng.randrange(len(value))
        value = list(value)
        value[index] = _mutate_json_value(value[index], rng)
        return value
    return rng.choice(WRONG_VALUES)


def wrong_types(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8-sig", errors="replace")
    try:
        document = json.loads(text)
    except ValueError:
        lines = text.split("\n")
        for _ in range(3):
            index = rng.randrange(len(lines))
            try:
                record = json.loads(lines[index])
            except ValueError:
                continue
            lines[index] = json.dumps(_mutate_json_value(record, rng))
        return "\n".join(lines).encode()
    return json.dumps(_mutate_json_value(document, rng)).encode()


def utf16_bom(data: bytes, rng: random.Random) -> bytes:
    return data.decode("utf-8", errors="replace").encode("utf-16")


def latin1(data: bytes, rng: random.Random) -> bytes:
    return data.decode("utf-8", errors="replace").encode("latin-1", errors="replace") + b"\xe9"


def cr_only(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")


def nuls(data: bytes, rng: random.Random) -> bytes:
    changed = bytearray(data)
    for _ in range(3):
        changed.insert(rng.randrange(len(changed) + 1), 0)
    return bytes(changed)


def utf16_without_bom(data: bytes, rng: random.Random) -> bytes:
    return data.decode("utf-8", errors="replace").encode("utf-16-le")


def nul_padding(data: bytes, rng: random.Random) -> bytes:
    # What a crash on some file systems leaves: the file's size grew, its data did not.
    return data + b"\0" * rng.choice([1, 512, 65_536])


def lone_surrogates(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", errors="replace")
    quotes = [i for i, char in enumerate(text) if char == '"']
    for _ in range(3):
        if quotes:
            at = rng.choice(quotes) + 1
            text = text[:at] + rng.choice(["\\ud800", "\\udfff", "\\ud83d"]) + text[at:]
    return text.encode("utf-8")


def huge_field(data: bytes, rng: random.Random) -> bytes:
    # Over the csv module's 128 KB field limit, quoted so it is one field.
    lines = data.split(b"\n")
    index = rng.randrange(len(lines))
    lines[index] = lines[index] + b',"' + b"x" * 200_000 + b'"'
    return b"\n".join(lines)


def empty(data: bytes, rng: random.Random) -> bytes:
    return b""


def shuffle_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    rng.shuffle(lines)
    return b"\n".join(lines)


MUTATIONS: list[Mutation] = [
    truncate, random_bytes, flip_bytes, deep_nesting, huge_int, wrong_types, wrong_types,
    utf16_bom, utf16_without_bom, latin1, cr_only, nuls, nul_padding, lone_surrogates,
    huge_field, empty, shuffle_lines,
]  # fmt: skip

Command = Callable[[dict[str, Path]], list[str]]


def _responses(kind: str) -> Command:
    return lambda f: [
        "responses", "import", "--study", str(f["study"]), "--format", kind,
        str(f[f"responses_{kind}"]), "--out", "fuzz-judgements.jsonl",
    ]  # fmt: skip


PERSONA_IMPORTS: dict[str, tuple[str, ...]] = {
    "whatsapp": ("--me", "Ann Smith"),
    "telegram": ("--me", "Ann Smith", "--chat", "Cleo Park"),
    "discord": ("--me", "annsmith"),
    "csv": (
        "--me", "Ann Smith", "--merge-others",
        "--columns", "sender=author,text=body,time=ts,conversation=chat",
    ),
    "jsonl": (
        "--me", "Ann Smith", "--columns", "sender=author.name,text=body,time=ts",
        "--time-format", "epoch_ms",
    ),
}  # fmt: skip


def _persona_import(kind: str, *options: str) -> Command:
    return lambda f: [
        "persona", "import", kind, str(f[f"export_{kind}"]), *options, "--force",
        "--out", "fuzz-personas",
    ]  # fmt: skip


# (file kind damaged, command that reads it)
TARGETS: dict[str, tuple[str, Command]] = {
    "persona show": ("persona", lambda f: ["persona", "show", str(f["persona"])]),
    "drift": ("chain", lambda f: ["drift", str(f["chain"])]),
    "simulate --pseudo": ("chain", lambda f: [
        "simulate", "--pseudo", str(f["chain"]), "--persona", str(f["persona"]),
        "--model", "mock/echo", "--script", str(f["script"]), "--turns", "1",
        "--virtual-clock", "--quiet", "--out", "fuzz-out",
    ]),
    "questionnaire build --bot": ("transcript", lambda f: [
        "questionnaire", "build", "--bot", str(f["transcript"]), "--human", str(f["humans"]),
        "--x", "3", "--catch", "0", "--out", "fuzz-study",
    ]),
    "questionnaire build --spec": ("spec_toml", lambda f: [
        "questionnaire", "build", "--spec", str(f["spec_toml"]), "--bot", str(f["transcript"]),
        "--human", str(f["humans"]), "--out", "fuzz-study",
    ]),
    "generate --plan": ("plan_toml", lambda f: [
        "generate", "--plan", str(f["plan_toml"]), "--dry-run",
    ]),
    "generate --topics": ("topics", lambda f: [
        "generate", "--topics", str(f["topics"]), "--model", "mock/chatty", "--dry-run",
    ]),
    "score": ("judgements", lambda f: ["score", str(f["judgements"]), "--bootstrap", "0"]),
    "questionnaire.json": ("questionnaire", _responses("csv")),
    "answer-key.json": ("answer_key", _responses("csv")),
    "questionnaire check": ("responses_surveyjs", lambda f: [
        "questionnaire", "check", str(f["responses_surveyjs"]),
    ]),
    **{f"responses import {kind}": (f"responses_{kind}", _responses(kind)) for kind in (
        "surveyjs", "qualtrics", "jspsych", "limesurvey", "csv",
    )},
    **{f"persona import {kind}": (f"export_{kind}", _persona_import(kind, *options))
       for kind, options in PERSONA_IMPORTS.items()},
}  # fmt: skip


def acceptable(outcome: Outcome) -> bool:
    """Succeeded, or refused with one error paragraph and the user-error exit code."""
    if "Traceback" in outcome.err:
        return False
    return outcome.code in (0, 1) or (outcome.code == 2 and "error: " in outcome.err)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("target", TARGETS)
def test_hostile_files_never_cause_a_traceback(inputs: dict[str, Path], target: str) -> None:
    kind, command = TARGETS[target]
    path = inputs[kind]
    original = path.read_bytes()
    rng = random.Random(f"sdtt-fuzz-{target}")
    for mutation in MUTATIONS:
        damaged = mutation(original, rng)
        path.write_bytes(damaged)
        try:
            outcome = run(*command(inputs))
        except Exception as error:  # pragma: no cover - the failure being looked for
            raise AssertionError(
                f"{target} on {mutation.__name__} input ({damaged[:120]!r}...) raised "
                f"{type(error).__name__}: {error}"
            ) from error
        assert acceptable(outcome), f"{target} on {mutation.__name__}: {outcome.text[:500]}"
    path.write_bytes(original)


@pytest.mark.parametrize("source", ["/dev/zero", "FIFO"])
@pytest.mark.parametrize("target", TARGETS)
def test_devices_and_pipes_are_refused_in_one_line(
    inputs: dict[str, Path],
    tmp_path: Path,
    target: str,
    source: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kind, command = TARGETS[target]
    path = inputs[kind]
    path.unlink()
    if source == "FIFO":
        # A pipe is read until its writer closes it, within the deadline: nobody writes.
        monkeypatch.setenv("SDTT_PIPE_DEADLINE", "0.3")
        os.mkfifo(path)
        refused = "is a pipe that delivered nothing within"
    else:
        path.symlink_to(source)  # reading it would never end
        refused = "not a regular file"
    outcome = run(*command(inputs))
    assert outcome.code == 2 and "Traceback" not in outcome.err, outcome.text
    assert outcome.err.startswith("error: ") and refused in outcome.text
