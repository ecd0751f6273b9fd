"""``sdtt persona import whatsapp`` of a 200 MB export, as a user runs it: time and memory.

Writes a WhatsApp ``.txt`` export of two people (Android layout, a day above 12 so the
date order is settled, now and then a message over several lines, a silence of hours
between conversations), then times, each in a process of its own, the command
``sdtt persona import whatsapp FILE --me Ann`` end to end (scrubbing on, as by default),
the floor (the same file's lines read as text, each dropped) and the persona kept: the
persona file the command wrote, loaded back by sdtt. Peak resident memory and CPU
seconds come from ``wait4``, as in ``score_cli.py``.

Targets (issue 48): peak memory under 1 GB and no more than the persona's loaded back,
and within 3x the floor's time. The import reads the export twice (senders, dates and
times; then the messages) and writes each conversation as it ends, so it holds a few
numbers per message (its date, time and place in time order) and one conversation, not
the persona: its peak hardly grows with the export. The command is also timed with
``--no-scrub``, so the cost of personal-data scrubbing shows on its own line.
``--format telegram`` does the same for a generated Telegram ``result.json`` (about 2 MB
per 6,300 messages; ``--messages 630000`` makes 200 MB), its floor again its lines read.
``--zip`` times the WhatsApp export as a ``.zip`` made with media (the chat deflated as
``_chat.txt`` beside a photo), its floor the chat's lines read from the zip.

Usage: PYTHONPATH=. python benchmarks/persona_import_cli.py [--messages 4000000]
    [--format whatsapp|telegram] [--zip] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from _quick import add_quick
from score_cli import measure

MAX_RSS_TO_PERSONA = 1.0
MAX_RSS = 1 << 30
MAX_RATIO = 3.0
LOAD = """
import sys
from sdtt.personas.store import load_persona
load_persona(sys.argv[1])
"""
FLOOR = """
import sys
with open(sys.argv[1], encoding="utf-8", buffering=1 << 20) as handle:
    for line in handle:
        pass
"""
FLOOR_ZIP = """
import io, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive, archive.open("_chat.txt") as member:
    for line in io.TextIOWrapper(member, encoding="utf-8"):
        pass
"""
WORDS = (
    "ok",
    "sure",
    "see",
    "you",
    "later",
    "did",
    "you",
    "get",
    "the",
    "tickets",
    "for",
    "saturday",
    "haha",
    "no",
    "way",
    "that",
    "is",
    "great",
    "i",
    "am",
    "on",
    "the",
    "train",
    "now",
    "call",
    "me",
    "when",
    "you",
    "are",
    "home",
    "lunch",
    "tomorrow",
    "maybe",
    "the",
    "weather",
    "is",
    "awful",
    "again",
    "what",
    "time",
    "works",
    "for",
    "you",
    "sounds",
    "good",
)


def write_export(path: Path, messages: int, seed: int = 7) -> int:
    """A WhatsApp export of about ``messages`` messages by Ann and Ben; its size."""
    rng = random.Random(seed)
    day, minute = 0, 8 * 60
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("13.01.23, 08:00 - Messages are end-to-end encrypted.\n")
        lines = []
        for index in range(messages):
            minute += rng.choice((0, 1, 1, 2, 3, 5))
            if index % 40 == 39:
                minute += 180  # a silence: the next conversation
            if minute >= 23 * 60:
                day, minute = day + 1, 8 * 60
            date = 13 + day
            stamp = f"{(date - 1) % 28 + 1:02d}.{(date // 28) % 12 + 1:02d}.{23 + date // 336}"
            sender = "Ann" if rng.random() < 0.5 else "Ben"
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))
            if index % 97 == 0:
                text += "\nand one more line"
            lines.append(f"{stamp}, {minute // 60:02d}:{minute % 60:02d} - {sender}: {text}")
            if len(lines) >= 10_000:
                out.write("\n".join(lines) + "\n")
                lines = []
        out.write("\n".join(lines) + "\n" if lines else "")
    return path.stat().st_size


def write_telegram_export(path: Path, messages: int, seed: int = 7) -> int:
    """A Telegram Desktop ``result.json`` of about ``messages`` messages by Ann and Ben,
    written as Telegram writes it (one field per line, ``text_entities`` repeating the
    text); its size."""
    rng = random.Random(seed)
    start = 1_673_596_800  # 13 Jan 2023, 08:00 UTC
    second = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write('{\n "name": "Ben",\n "type": "personal_chat",\n "id": 42,\n "messages": [')
        for index in range(messages):
            second += rng.choice((5, 30, 60, 90, 180)) + (3 * 3600 if index % 40 == 39 else 0)
            moment = datetime.fromtimestamp(start + second, UTC)
            sender, user = ("Ann", "user1") if rng.random() < 0.5 else ("Ben", "user2")
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))
            record = {
                "id": index + 1,
                "type": "message",
                "date": moment.strftime("%Y-%m-%dT%H:%M:%S"),
                "date_unixtime": str(start + second),
                "from": sender,
                "from_id": user,
                "text": text,
                "text_entities": [{"type": "plain", "text": text}],
            }
            body = json.dumps(record, ensure_ascii=False, indent=1).replace("\n", "\n  ")
            out.write(("," if index else "") + "\n  " + body)
        out.write("\n ]\n}\n")
    return path.stat().st_size


def main() -> None:
    """Generate the export, time the floor and the command, print both and the targets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=4_000_000)
    parser.add_argument("--keep", type=Path, help="write the export here and keep it")
    parser.add_argument("--format", choices=("whatsapp", "telegram"), default="whatsapp")
    parser.add_argument("--zip", action="store_true", help="the WhatsApp export as a .zip")
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    add_quick(parser, messages=20_000)
    args = parser.parse_args()
    if args.write:
        writer = write_telegram_export if args.format == "telegram" else write_export
        writer(args.write, args.messages)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = args.keep or Path(folder) / (
            "result.json" if args.format == "telegram" else "chat.txt"
        )
        if not path.exists():
            # A process of its own, so the parent's pages stay out of the children's peaks.
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--write",
                    str(path),
                    "--format",
                    args.format,
                    "--messages",
                    str(args.messages),
                ],
                check=True,
            )
        floor = FLOOR
        if args.zip:
            if args.format != "whatsapp":
                sys.exit("--zip is for the WhatsApp export")
            zipped = Path(folder) / "chat.zip"
            with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.write(path, "_chat.txt")
                archive.writestr("00000012-PHOTO-2024-04-13-09-06-02.jpg", b"\xff\xd8")
            path, floor = zipped, FLOOR_ZIP
        size = path.stat().st_size
        floor_s, floor_cpu, floor_rss, floor_code = measure(
            [sys.executable, "-c", floor, str(path)], Path(folder) / "floor.out"
        )
        persona = Path(folder) / "personas" / "bench.jsonl"
        command = [sys.executable, "-m", "sdtt", "persona", "import", args.format, str(path)]
        command += ["--me", "Ann", "--name", "bench", "--force"]
        output = Path(folder) / "import.out"
        run_s, run_cpu, run_rss, run_code = measure(command, output, cwd=Path(folder))
        printed = output.read_text(encoding="utf-8", errors="replace")
        kept = persona.stat().st_size if persona.exists() else 0
        load_s, load_cpu, load_rss, load_code = measure(
            [sys.executable, "-c", LOAD, str(persona)], Path(folder) / "load.out"
        )
        plain = [*command[:-3], "--name", "bench-plain", "--no-scrub", "--force"]
        plain_s, plain_cpu, plain_rss, plain_code = measure(
            plain, Path(folder) / "plain.out", cwd=Path(folder)
        )
    if floor_code or run_code or load_code or plain_code or not kept:
        sys.exit(
            f"a run failed (floor {floor_code}, import {run_code}, load {load_code}, "
            f"--no-scrub {plain_code}):\n{printed[-3000:]}"
        )
    ratio = run_s / floor_s
    load = os.getloadavg()
    print(
        f"{args.format} export{' (.zip)' if args.zip else ''} of {args.messages:,} messages, "
        f"{size / 1e6:,.0f} MB; persona file "
        f"{kept / 1e6:,.0f} MB; load average {load[0]:.2f}"
    )
    for name, wall, cpu, rss in (
        ("floor (the file's lines)", floor_s, floor_cpu, floor_rss),
        (f"sdtt persona import {args.format}", run_s, run_cpu, run_rss),
        ("  the same with --no-scrub", plain_s, plain_cpu, plain_rss),
        ("the persona loaded back", load_s, load_cpu, load_rss),
    ):
        print(f"  {name:30} {wall:7.2f} s wall {cpu:7.2f} s CPU {rss / 2**20:7,.0f} MiB peak")
    to_persona = run_rss / load_rss
    print(
        f"  scrubbing costs {run_s - plain_s:.2f} s of the import's {run_s:.2f} s "
        f"({(run_s - plain_s) / run_s:.0%}); without it the import is {plain_s / floor_s:.1f}x "
        "the floor"
    )
    print(
        f"  targets: peak under {MAX_RSS / 2**30:g} GiB: {run_rss / 2**20:,.0f} MiB, "
        f"{'met' if run_rss < MAX_RSS else 'MISSED'}; "
        f"at most {MAX_RSS_TO_PERSONA:g}x the persona's: {to_persona:.2f}x, "
        f"{'met' if to_persona <= MAX_RSS_TO_PERSONA else 'MISSED'}; "
        f"within {MAX_RATIO:g}x the floor's time (issue 48's target): {ratio:.1f}x, "
        f"{'met' if ratio <= MAX_RATIO else 'MISSED'} (CPU: {run_cpu / floor_cpu:.1f}x)"
    )


if __name__ == "__main__":
    main()
