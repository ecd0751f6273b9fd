"""Topics for pseudo-dialogues: ask a model for distinct everyday topics, or read a list.

Topic files (format in ``topics/README.md``): UTF-8 text, one topic per line; blank
lines and lines starting with ``#`` are ignored.

Generation asks for the topics still missing, drops duplicates and near duplicates
(same main words once generic words such as "favourite" or "experiences" are set aside,
or nearly the same spelling), and asks again, naming the topics it already has, until it
has ``n`` or runs out of rounds.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from sdtt.dialogue.render import fold_text
from sdtt.errors import InputError, ModelOutputError
from sdtt.files import read_text_file, write_text_atomic
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt
from sdtt.seeds import derive_seed

TOPICS_DIR = Path("topics")
SUFFIX = ".txt"
DEFAULT_TOPIC_COUNT = 10
MAX_TOPIC_CHARS = 160

_INSTRUCTIONS = """\
You suggest topics for casual text-message chats between two friends: ordinary things \
people talk about day to day. Each topic is a short title, optionally followed by a colon \
and a few words saying what the chat is about. All topics must differ from each other; \
no two may be about the same thing."""

_COMPLETION_HEAD = "Everyday things two friends might chat about by text message, one per line:"
COMPLETION_EXAMPLES = ("a trip you would like to take", "the last series you binge-watched")
"""Shown to completion models as the list's first items, so they continue in kind; never
returned as topics (nor anything like them)."""

# Words that say little about what a topic is about, set aside when comparing topics.
_GENERIC_WORDS = """
a an and or the of to for in on at with about your my our their his her its new
latest recent recently favorite favourite favorites favourites best worst good bad
talk talking chat chatting discuss discussing discussion share sharing thought thoughts
experience experiences story stories plan plans idea ideas tip tips life daily day
everyday things thing how what why which who when where do does did you we they it
is are be am was were been being have has had last time times like liked likes love
loved loves watching watched listening listened going go get got some any one lot lots
really very much more most stuff
"""
_GENERIC = frozenset(_GENERIC_WORDS.split())
_BULLET = re.compile(r"^(?:\s*(?:[-*•·–—>]+|\(?\d{1,3}[.)\]:]|\(?[a-zA-Z][.)]\s)\s*)+")
_EMPHASIS = re.compile(r"[*_`#]+")
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,40}>")


def topics_prompt(count: int, avoid: Sequence[str] = ()) -> Prompt:
    """The prompt asking for ``count`` topics, none like those in ``avoid``."""
    task = f"List {count} such topics, one per line, with no numbering and nothing else."
    if avoid:
        listed = "\n".join(f"- {fold_text(topic)}" for topic in avoid)
        task = (
            f"{task}\nThese topics are already taken; suggest none of them and nothing close "
            f"to any of them:\n{listed}"
        )
    shown = [*COMPLETION_EXAMPLES, *avoid]
    taken = "".join(f"- {fold_text(topic)}\n" for topic in shown)
    return Prompt(
        instructions=_INSTRUCTIONS,
        task=task,
        continue_with=f"{_COMPLETION_HEAD}\n{taken}- ",
    )


def clean_topic(line: str) -> str | None:
    """A topic from one line of model output; ``None`` for chatter and empty lines."""
    text = _BULLET.sub("", _TAG.sub("", line).strip())
    text = _EMPHASIS.sub("", text).strip().strip("\"'“”‘’").strip()
    text = re.sub(r"\s+", " ", text)
    if not text or len(text) > MAX_TOPIC_CHARS:
        return None
    if text.endswith(":") or sum(ch.isalpha() for ch in text) < 3:
        return None
    lowered = text.lower()
    if lowered.startswith(("here are", "here is", "sure", "certainly", "of course", "i hope")):
        return None
    return text


def parse_topics(text: str) -> list[str]:
    """The topics in a model's answer, in order (chatter and empty lines dropped)."""
    topics = []
    for line in text.splitlines():
        topic = clean_topic(line)
        if topic is not None:
            topics.append(topic)
    return topics


def _title(topic: str) -> str:
    return re.split(r"\s*(?::|\s[-–—]\s)\s*", topic, maxsplit=1)[0]


def _stem(word: str) -> str:
    for ending in ("ies", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)] + ("y" if ending == "ies" else "")
    return word


def topic_key(topic: str) -> frozenset[str]:
    """The main words of a topic's title (lower case, singular, generic words removed)."""
    words = re.findall(r"[a-z0-9]+", _title(topic).lower())
    main = {_stem(word) for word in words if word not in _GENERIC and not word.isdigit()}
    return frozenset(main or {_stem(word) for word in words})


def similar_topics(a: str, b: str) -> bool:
    """True when two topics are the same or nearly the same: the main words of one are
    all among the other's, half of all their main words are shared, or the titles are
    spelt almost alike."""
    key_a, key_b = topic_key(a), topic_key(b)
    if key_a and key_b:
        if key_a <= key_b or key_b <= key_a:
            return True
        if len(key_a & key_b) / len(key_a | key_b) >= 0.5:
            return True
    plain_a = " ".join(re.findall(r"[a-z0-9]+", _title(a).lower()))
    plain_b = " ".join(re.findall(r"[a-z0-9]+", _title(b).lower()))
    return difflib.SequenceMatcher(None, plain_a, plain_b).ratio() >= 0.85


def add_distinct(kept: list[str], candidates: Iterable[str]) -> list[str]:
    """Append each candidate unlike every topic kept so far; return those added."""
    added = []
    for candidate in candidates:
        if all(not similar_topics(candidate, topic) for topic in kept):
            kept.append(candidate)
            added.append(candidate)
    return added


async def generate_topics(
    model: Generator,
    count: int = DEFAULT_TOPIC_COUNT,
    *,
    rounds: int = 6,
    temperature: float = 0.9,
    seed: int = 0,
    outputs: list[ModelOutput] | None = None,
) -> list[str]:
    """Ask ``model`` for ``count`` distinct everyday topics.

    Each round asks for the topics still missing (naming those already kept); near
    duplicates are dropped. Raises :class:`ModelOutputError` when ``rounds`` rounds did
    not yield enough. Every output is appended to ``outputs`` when given.
    """
    if count < 1:
        raise InputError("The number of topics must be at least 1.", field="-n")
    kept: list[str] = []
    for round_index in range(rounds):
        missing = count - len(kept)
        prompt = topics_prompt(missing, kept)
        config = GenerateConfig(
            max_tokens=40 * missing + 60,
            temperature=temperature,
            seed=derive_seed(seed, "topics", round_index),
        )
        output = await model.generate(prompt, config)
        if outputs is not None:
            outputs.append(output)
        text = output.text
        if output.continued_from:
            # A completion model continued "- ": its first line is a topic too.
            text = "- " + text
        candidates = parse_topics(text)
        if output.continued_from:
            candidates = [
                topic
                for topic in candidates
                if not any(similar_topics(topic, example) for example in COMPLETION_EXAMPLES)
            ]
        add_distinct(kept, candidates)
        if len(kept) >= count:
            return kept[:count]
    raise ModelOutputError(
        f"{model.name} gave only {len(kept)} distinct topics of {count} in {rounds} rounds. "
        "Ask for fewer, try another model, or write a topic file by hand (one per line)."
    )


def read_topics(path: str | Path) -> list[str]:
    """The topics of a topic file (blank lines and ``#`` comments skipped)."""
    path = Path(path)
    text = read_text_file(path, what="topic file")
    topics = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            topics.append(stripped)
    if not topics:
        raise InputError(
            "holds no topics.", path=path, hint="Write one topic per line (see topics/README.md)."
        )
    return topics


def locate_topics(name_or_path: str | Path) -> Path:
    """A topic file given by path, or by name in ``./topics`` (``chitchat`` -> chitchat.txt)."""
    candidate = Path(name_or_path)
    if candidate.exists() and not candidate.is_dir():  # devices and pipes: refused on reading
        return candidate
    named = TOPICS_DIR / f"{name_or_path}{SUFFIX}"
    if named.is_file():
        return named
    known = sorted(path.stem for path in TOPICS_DIR.glob(f"*{SUFFIX}"))
    raise InputError(
        f"no topic file {str(name_or_path)!r} (looked for it as a path and in {TOPICS_DIR}/).",
        hint=(f"Known lists: {', '.join(known)}. " if known else "")
        + "Give a file with one topic per line, or make one with 'sdtt topics'.",
    )


def write_topics(
    path: str | Path, topics: Sequence[str], *, source: str, dated: bool = True
) -> Path:
    """Save ``topics`` as a topic file with a comment saying where they came from (and,
    when ``dated``, the day: a study's topics leave it out, so reruns match)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = f", {datetime.now(UTC):%Y-%m-%d}" if dated else ""
    lines = [f"# {fold_text(source)}{stamp}", *(fold_text(topic) for topic in topics)]
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path
