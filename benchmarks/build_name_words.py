"""Rebuild ``sdtt/personas/data/name_words.txt``: name-list entries that are everyday words.

The name detector (:mod:`sdtt.personas.pii_names`) reads first names and surnames from
Faker's person providers. Many of them are also ordinary words ("Will", "May", "Long",
"Can"), which would be scrubbed at every sentence start. This script finds those in real
chat text: a listed name that chitchat-dataset writers type in lower case at least
``--min-lower`` times and at least ``--ratio`` times as often as with a capital letter
mid-sentence is an everyday word. The output is sorted, one word a line.

Usage: PYTHONPATH=. python benchmarks/build_name_words.py [--min-lower 3] [--ratio 1.0] [--check]
(``--check`` writes nothing and fails when the committed file differs from a rebuild; the
list depends on Faker's name lists, so rebuild it when constraints.txt moves Faker.)
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import chitchat_dataset
from _quick import add_quick

from sdtt.personas.pii_names import OUTPUT_WORDS, listed_names

_TOKEN = re.compile(r"[^\W\d_]+")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-lower", type=int, default=3)
    parser.add_argument("--ratio", type=float, default=1.0)
    parser.add_argument(
        "--check", action="store_true", help="compare with the committed file, write nothing"
    )
    parser.add_argument("--out", type=Path, default=Path(OUTPUT_WORDS), help="file to write")
    parser.add_argument("--chats", type=int, help="read only the first N corpus chats")
    add_quick(parser, out=Path("name_words.txt"), chats=300)
    args = parser.parse_args()
    lower: Counter[str] = Counter()
    capital: Counter[str] = Counter()
    chats = list(chitchat_dataset.Dataset().values())[: args.chats]
    for chat in chats:
        for burst in chat["messages"]:
            for message in burst:
                for match in _TOKEN.finditer(message["text"]):
                    word = match.group()
                    before = message["text"][: match.start()].rstrip()
                    if word.islower():
                        lower[word] += 1
                    elif word[0].isupper() and before and before[-1] not in ".!?:;\"'(":
                        capital[word.casefold()] += 1
    first, last = listed_names()
    words = sorted(
        word
        for word in {name.casefold() for name in first | last}
        if lower[word] >= args.min_lower and lower[word] >= args.ratio * capital[word]
    )
    text = "".join(f"{word}\n" for word in words)
    if args.check:
        committed = args.out.read_text(encoding="utf-8").splitlines()
        added, dropped = sorted(set(words) - set(committed)), sorted(set(committed) - set(words))
        if added or dropped:
            raise SystemExit(
                f"{args.out} is out of date: a rebuild adds {added[:10]} and drops "
                f"{dropped[:10]}; run this script without --check to rewrite it"
            )
        print(f"{args.out} is up to date ({len(words)} everyday words)")
        return
    args.out.write_text(text, encoding="utf-8")
    print(f"{len(words)} everyday words written to {args.out}")


if __name__ == "__main__":
    main()
