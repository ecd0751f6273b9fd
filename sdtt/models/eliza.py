"""The ``eliza`` provider: Weizenbaum's ELIZA (1966) with its DOCTOR script, the baseline bot.

Every Turing study should include it as a manipulation check: Jones & Bergen's judges
took ELIZA for a human in about a fifth of their games. ``eliza/classic`` follows the
published design: keywords with ranks; for the highest-ranked keyword in the input,
decomposition patterns tried in order, each with reassembly templates used in rotation;
pronouns reflected ("my" becomes "your"); synonym classes ("@family"); a memory filled
from "my ..." sentences and drawn on when no keyword matches; ``goto`` links between
keywords. The rules below were written for sdtt from that design, not copied.

Like ``mock``, a reply is a pure function of the prompt: ELIZA replays every ``User:``
line of the dialogue (never the persona history) through its rules, so its rotation and
memory are those of an uninterrupted conversation, and a resumed or concurrent run gets
the same replies. ``seed`` (the call's, or ``create(..., seed=)``) shifts where each
rotation starts. Asked for a whole chat of N rounds (``sdtt generate``) it talks with
itself; asked for topics or a judge's option it answers as ``mock/chatty`` does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sdtt.errors import ConfigError
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.mock import MockItem, MockModelAPI, MockScript

PROVIDER = "eliza"
SCRIPTS = ("classic",)
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_USER_LINE = re.compile(r"^\s*User:\s*(?:\[(?P<time>[^\]\n]*)\])?\s*(?P<text>.*)$")
_ANY_TIME = re.compile(r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\]")
_ROUNDS = re.compile(r"\b(\d{1,3}) (?:more )?rounds?\b")

REFLECT = {
    "am": "are",
    "are": "am",
    "was": "were",
    "were": "was",
    "i": "you",
    "i'm": "you're",
    "you're": "i'm",
    "i'd": "you'd",
    "you'd": "i'd",
    "i've": "you've",
    "you've": "i've",
    "i'll": "you'll",
    "you'll": "i'll",
    "my": "your",
    "your": "my",
    "yours": "mine",
    "mine": "yours",
    "me": "you",
    "myself": "yourself",
    "yourself": "myself",
    "you": "me",
}
"""Pronoun reflection applied to the parts of the input a reply quotes."""

SYNONYMS = {
    "belief": ("feel", "think", "believe", "wish"),
    "family": (
        "mother",
        "mom",
        "mum",
        "father",
        "dad",
        "sister",
        "brother",
        "wife",
        "husband",
        "children",
        "child",
        "kids",
        "parents",
    ),
    "desire": ("want", "need"),
    "sad": ("sad", "unhappy", "depressed", "sick", "lonely", "miserable"),
    "happy": ("happy", "elated", "glad", "better"),
    "cannot": ("cannot", "can't"),
    "everyone": ("everyone", "everybody", "nobody", "noone"),
    "be": ("am", "is", "are", "was"),
}


@dataclass
class Rule:
    """A decomposition pattern (``*`` matches any words, ``@class`` a synonym) and the
    reassembly templates used one after another. ``(n)`` quotes the n-th ``*`` or ``@class`` part
    of the input, reflected; ``goto KEY`` hands over to another keyword's rules."""

    pattern: str
    replies: tuple[str, ...]
    remember: bool = False
    """Store the reassembly in memory instead of answering with it (the "my" rule)."""


@dataclass
class Keyword:
    """A keyword, its rank (the highest in a sentence wins) and its rules."""

    word: str
    rank: int
    rules: list[Rule] = field(default_factory=list)


def _k(word: str, rank: int, *rules: tuple[str, tuple[str, ...]] | Rule) -> Keyword:
    return Keyword(word, rank, [r if isinstance(r, Rule) else Rule(*r) for r in rules])


SCRIPT: tuple[Keyword, ...] = (
    _k(
        "sorry",
        0,
        (
            "*",
            (
                "Please don't apologise.",
                "Apologies are not necessary.",
                "What feelings do you have when you apologise?",
            ),
        ),
    ),
    _k("apologise", 0, ("*", ("goto sorry",))),
    _k(
        "remember",
        5,
        (
            "* i remember *",
            (
                "Do you often think of (2)?",
                "Does thinking of (2) bring anything else to mind?",
                "Why do you remember (2) just now?",
                "What is the connection between me and (2)?",
            ),
        ),
        (
            "* do you remember *",
            (
                "Did you think I would forget (2)?",
                "Why do you think I should recall (2) now?",
                "What about (2)?",
                "goto what",
            ),
        ),
    ),
    _k(
        "if",
        3,
        (
            "* if *",
            (
                "Do you think it's likely that (2)?",
                "Do you wish that (2)?",
                "What do you know about (2)?",
                "Really, if (2)?",
            ),
        ),
    ),
    _k(
        "dreamed",
        4,
        (
            "* i dreamed *",
            (
                "Really, (2)?",
                "Have you ever fantasised (2) while you were awake?",
                "Have you dreamed (2) before?",
            ),
        ),
    ),
    _k(
        "dream",
        3,
        (
            "*",
            (
                "What does that dream suggest to you?",
                "Do you dream often?",
                "What persons appear in your dreams?",
                "Do you believe that dreams have something to do with your problem?",
            ),
        ),
    ),
    _k(
        "perhaps",
        0,
        (
            "*",
            (
                "You don't seem quite certain.",
                "Why the uncertain tone?",
                "Can't you be more positive?",
                "You aren't sure?",
            ),
        ),
    ),
    _k(
        "name",
        15,
        (
            "*",
            (
                "I am not interested in names.",
                "I've told you before, I don't care about names. Please continue.",
            ),
        ),
    ),
    _k(
        "computer",
        50,
        (
            "*",
            (
                "Do computers worry you?",
                "Why do you mention computers?",
                "What do you think machines have to do with your problem?",
                "Don't you think computers can help people?",
                "What about machines worries you?",
            ),
        ),
    ),
    _k("machine", 50, ("*", ("goto computer",))),
    _k("ai", 50, ("*", ("goto computer",))),
    _k("bot", 50, ("*", ("goto computer",))),
    _k(
        "am",
        0,
        (
            "* am i *",
            (
                "Do you believe you are (2)?",
                "Would you want to be (2)?",
                "You wish I would tell you you are (2)?",
                "What would it mean if you were (2)?",
                "goto what",
            ),
        ),
        ("*", ("Why do you say 'am'?", "I don't understand that.")),
    ),
    _k(
        "are",
        0,
        (
            "* are you *",
            (
                "Why are you interested in whether I am (2) or not?",
                "Would you prefer if I weren't (2)?",
                "Perhaps I am (2) in your fantasies.",
                "Do you sometimes think I am (2)?",
                "goto what",
            ),
        ),
        (
            "* are *",
            (
                "Did you think they might not be (2)?",
                "Would you like it if they were not (2)?",
                "What if they were not (2)?",
                "Possibly they are (2).",
            ),
        ),
    ),
    _k(
        "your",
        0,
        (
            "* your *",
            (
                "Why are you concerned over my (2)?",
                "What about your own (2)?",
                "Are you worried about someone else's (2)?",
                "Really, my (2)?",
            ),
        ),
    ),
    _k(
        "was",
        2,
        (
            "* was i *",
            (
                "What if you were (2)?",
                "Do you think you were (2)?",
                "Were you (2)?",
                "What would it mean if you were (2)?",
                "goto what",
            ),
        ),
        (
            "* i was *",
            (
                "Were you really?",
                "Why do you tell me you were (2) now?",
                "Perhaps I already know you were (2).",
            ),
        ),
        (
            "* was you *",
            (
                "Would you like to believe I was (2)?",
                "What suggests that I was (2)?",
                "What do you think?",
                "Perhaps I was (2).",
            ),
        ),
    ),
    _k(
        "i",
        0,
        (
            "* i @desire *",
            (
                "What would it mean to you if you got (3)?",
                "Why do you want (3)?",
                "Suppose you got (3) soon.",
                "What if you never got (3)?",
            ),
        ),
        (
            "* i am * @sad *",
            (
                "I am sorry to hear you are (3).",
                "Do you think coming here will help you not to be (3)?",
                "I'm sure it's not pleasant to be (3).",
                "Can you explain what made you (3)?",
            ),
        ),
        (
            "* i am * @happy *",
            (
                "How have I helped you to be (3)?",
                "Has your treatment made you (3)?",
                "What makes you (3) just now?",
                "Can you explain why you are suddenly (3)?",
            ),
        ),
        ("* i was *", ("goto was",)),
        (
            "* i @belief i *",
            (
                "Do you really think so?",
                "But you are not sure you (3).",
                "Do you really doubt you (3)?",
            ),
        ),
        ("* i * @belief * you *", ("goto you",)),
        (
            "* i am *",
            (
                "Is it because you are (2) that you came to me?",
                "How long have you been (2)?",
                "Do you believe it is normal to be (2)?",
                "Do you enjoy being (2)?",
            ),
        ),
        (
            "* i @cannot *",
            (
                "How do you know you can't (3)?",
                "Have you tried?",
                "Perhaps you could (3) now.",
                "Do you really want to be able to (3)?",
            ),
        ),
        (
            "* i don't *",
            (
                "Don't you really (2)?",
                "Why don't you (2)?",
                "Do you wish to be able to (2)?",
                "Does that trouble you?",
            ),
        ),
        (
            "* i feel *",
            (
                "Tell me more about such feelings.",
                "Do you often feel (2)?",
                "Do you enjoy feeling (2)?",
                "Of what does feeling (2) remind you?",
            ),
        ),
        (
            "* i * you *",
            (
                "Perhaps in your fantasies we (2) each other.",
                "Do you wish to (2) me?",
                "You seem to need to (2) me.",
                "Do you (2) anyone else?",
            ),
        ),
        (
            "*",
            (
                "You say (1)?",
                "Can you elaborate on that?",
                "Do you say (1) for some special reason?",
                "That's quite interesting.",
            ),
        ),
    ),
    _k(
        "you",
        0,
        ("* you remind me of *", ("goto alike",)),
        (
            "* you are *",
            (
                "What makes you think I am (2)?",
                "Does it please you to believe I am (2)?",
                "Do you sometimes wish you were (2)?",
                "Perhaps you would like to be (2).",
            ),
        ),
        (
            "* you * me *",
            (
                "Why do you think I (2) you?",
                "You like to think I (2) you, don't you?",
                "What makes you think I (2) you?",
                "Really, I (2) you?",
            ),
        ),
        (
            "* you *",
            (
                "We were discussing you, not me.",
                "Oh, I (2)?",
                "You're not really talking about me, are you?",
                "What are your feelings now?",
            ),
        ),
    ),
    _k("yes", 0, ("*", ("You seem quite positive.", "You are sure.", "I see.", "I understand."))),
    _k(
        "no",
        0,
        (
            "*",
            (
                "Are you saying no just to be negative?",
                "You are being a bit negative.",
                "Why not?",
                "Why 'no'?",
            ),
        ),
    ),
    _k(
        "my",
        2,
        Rule(
            "* my *",
            (
                "Earlier you said your (2).",
                "But your (2).",
                "Does that have anything to do with the fact that your (2)?",
            ),
            remember=True,
        ),
        (
            "* my * @family *",
            (
                "Tell me more about your family.",
                "Who else in your family (4)?",
                "Your (3)?",
                "What else comes to mind when you think of your (3)?",
            ),
        ),
        (
            "* my *",
            (
                "Your (2)?",
                "Why do you say your (2)?",
                "Does that suggest anything else which belongs to you?",
                "Is it important to you that your (2)?",
            ),
        ),
    ),
    _k(
        "can",
        0,
        (
            "* can you *",
            (
                "You believe I can (2), don't you?",
                "goto what",
                "You want me to be able to (2).",
                "Perhaps you would like to be able to (2) yourself.",
            ),
        ),
        (
            "* can i *",
            (
                "Whether or not you can (2) depends on you more than on me.",
                "Do you want to be able to (2)?",
                "Perhaps you don't want to (2).",
                "goto what",
            ),
        ),
    ),
    _k(
        "what",
        0,
        (
            "*",
            (
                "Why do you ask?",
                "Does that question interest you?",
                "What is it you really want to know?",
                "Are such questions much on your mind?",
                "What answer would please you most?",
                "What do you think?",
                "What comes to mind when you ask that?",
                "Have you asked such questions before?",
                "Have you asked anyone else?",
            ),
        ),
    ),
    _k("how", 0, ("*", ("goto what",))),
    _k("when", 0, ("*", ("goto what",))),
    _k(
        "why",
        0,
        (
            "* why don't you *",
            (
                "Do you believe I don't (2)?",
                "Perhaps I will (2) in good time.",
                "Should you (2) yourself?",
                "You want me to (2)?",
                "goto what",
            ),
        ),
        (
            "* why can't i *",
            (
                "Do you think you should be able to (2)?",
                "Do you want to be able to (2)?",
                "Do you believe this will help you to (2)?",
                "Have you any idea why you can't (2)?",
                "goto what",
            ),
        ),
        ("*", ("goto what",)),
    ),
    _k(
        "because",
        0,
        (
            "*",
            (
                "Is that the real reason?",
                "Don't any other reasons come to mind?",
                "Does that reason seem to explain anything else?",
                "What other reasons might there be?",
            ),
        ),
    ),
    _k(
        "everyone",
        2,
        (
            "* @everyone *",
            (
                "Really, (2)?",
                "Surely not (2).",
                "Can you think of anyone in particular?",
                "Who, for example?",
                "Are you thinking of a very special person?",
            ),
        ),
    ),
    _k("everybody", 2, ("*", ("goto everyone",))),
    _k("nobody", 2, ("*", ("goto everyone",))),
    _k(
        "always",
        1,
        (
            "*",
            (
                "Can you think of a specific example?",
                "When?",
                "What incident are you thinking of?",
                "Really, always?",
            ),
        ),
    ),
    _k(
        "alike",
        10,
        (
            "*",
            (
                "In what way?",
                "What resemblance do you see?",
                "What does that similarity suggest to you?",
                "What other connections do you see?",
                "What do you suppose that resemblance means?",
                "Could there really be some connection?",
                "How?",
            ),
        ),
    ),
    _k("like", 10, ("* @be * like *", ("goto alike",))),
    _k(
        "different",
        0,
        (
            "*",
            (
                "How is it different?",
                "What differences do you see?",
                "What does that difference suggest to you?",
            ),
        ),
    ),
    _k(
        "hello",
        0,
        ("*", ("How do you do. Please state your problem.", "Hi. What seems to be your problem?")),
    ),
    _k("hi", 0, ("*", ("goto hello",))),
    _k("hey", 0, ("*", ("goto hello",))),
)
NO_KEYWORD = (
    "I'm not sure I understand you fully.",
    "Please go on.",
    "What does that suggest to you?",
    "Do you feel strongly about discussing such things?",
    "That is interesting. Please continue.",
    "Tell me more about that.",
)
"""Replies when no keyword matches and memory is empty."""
GREETING = "How do you do. Please tell me your problem."
KEYWORDS = {keyword.word: keyword for keyword in SCRIPT}


def _pattern(decomposition: str) -> re.Pattern[str]:
    parts = []
    for token in decomposition.split():
        if token == "*":
            parts.append(r"(.*?)")
        elif token.startswith("@"):
            words = "|".join(re.escape(w) for w in SYNONYMS[token[1:]])
            parts.append(rf"\b({words})\b")
        else:
            parts.append(rf"\b{re.escape(token)}\b")
    return re.compile(r"^\s*" + r"\s*".join(parts) + r"\s*$")


def reflect(text: str) -> str:
    """``text`` with first and second person swapped ("my car" -> "your car")."""
    return " ".join(REFLECT.get(word, word) for word in text.split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower().replace("’", "'"))


def _reassemble(template: str, match: re.Match[str]) -> str:
    """``template`` with each ``(n)`` replaced by the n-th matched part, reflected."""

    def part(number: re.Match[str]) -> str:
        return reflect(match.group(int(number.group(1))).strip(" ,.!?"))

    return re.sub(r"\((\d)\)", part, template)


@dataclass
class Eliza:
    """One conversation's ELIZA: rotation positions and memory (pure, no I/O)."""

    seed: int = 0
    rotation: dict[tuple[str, int], int] = field(default_factory=dict)
    memory: list[str] = field(default_factory=list)
    fallback: int = 0

    def _next(self, word: str, index: int, count: int) -> int:
        at = self.rotation.get((word, index), self.seed % count)
        self.rotation[word, index] = at + 1
        return at % count

    def _apply(self, keyword: Keyword, text: str, depth: int = 0) -> str | None:
        for index, rule in enumerate(keyword.rules):
            match = _pattern(rule.pattern).match(text)
            if match is None:
                continue
            template = rule.replies[self._next(keyword.word, index, len(rule.replies))]
            if template.startswith("goto "):
                target = KEYWORDS.get(template.removeprefix("goto "))
                return None if target is None or depth > 3 else self._apply(target, text, depth + 1)
            reply = _reassemble(template, match)
            if rule.remember:
                self.memory.append(reply)
                continue
            return reply
        return None

    def respond(self, text: str) -> str:
        """ELIZA's reply to one input."""
        sentences = [s for s in re.split(r"[.!?,;]+|\bbut\b", text.lower()) if s.strip()]
        best: tuple[int, str, str] | None = None
        for sentence in sentences or [text.lower()]:
            words = _words(sentence)
            found = [KEYWORDS[w] for w in words if w in KEYWORDS]
            for keyword in found:
                if best is None or keyword.rank > best[0]:
                    best = (keyword.rank, keyword.word, " ".join(words))
        if best is not None:
            # Memory rules see every "my" sentence, even when another keyword answers.
            for sentence in sentences:
                words = _words(sentence)
                if "my" in words and best[1] != "my":
                    self._apply(KEYWORDS["my"], " ".join(words))
                    self.memory = self.memory[-5:]
            reply = self._apply(KEYWORDS[best[1]], best[2])
            if reply is not None:
                return reply
        if self.memory:
            return self.memory.pop(0)
        reply = NO_KEYWORD[(self.seed + self.fallback) % len(NO_KEYWORD)]
        self.fallback += 1
        return reply


def converse(inputs: Iterable[str], seed: int = 0) -> list[str]:
    """ELIZA's replies to ``inputs`` in order, as one conversation."""
    eliza = Eliza(seed=seed)
    return [eliza.respond(text) for text in inputs]


def _times(text: str) -> datetime | None:
    stamps = _ANY_TIME.findall(text)
    return datetime.strptime(stamps[-1], _TIME_FORMAT) if stamps else None


def _line(text: str, when: datetime | None) -> str:
    if when is None:
        return f"Response: {text}"
    return f"Response: [{when.strftime(_TIME_FORMAT)}] {text}"


def classic_script(seed: int = 0) -> MockScript:
    """ELIZA with the DOCTOR rules as a reply script (see the module docstring)."""
    from sdtt.models.mock import special_reply

    def reply(prompt: Prompt, config: GenerateConfig) -> MockItem:
        start = seed + (config.seed or 0)
        wanted = _ROUNDS.search(prompt.task)
        last = _times("\n".join(p for p in (prompt.history, prompt.dialogue) if p))
        if wanted:
            return _self_chat(int(wanted.group(1)), last, start)
        special = special_reply(prompt, config)
        if special is not None:
            return special
        inputs = user_bursts(prompt.dialogue)
        text = converse(inputs, start)[-1] if inputs else GREETING
        when = None if last is None else last + timedelta(seconds=2 + len(text) // 8)
        return _line(text, when)

    return reply


def user_bursts(dialogue: str) -> list[str]:
    """Each run of consecutive ``User:`` lines as one input (a burst is one utterance)."""
    bursts: list[list[str]] = []
    open_burst = False
    for line in dialogue.splitlines():
        match = _USER_LINE.match(line)
        if match is not None:
            if not open_burst:
                bursts.append([])
                open_burst = True
            bursts[-1].append(match.group("text").strip())
        elif line.strip():
            open_burst = False
    return [". ".join(part for part in burst if part) for burst in bursts]


def _self_chat(rounds: int, after: datetime | None, seed: int) -> str:
    """``rounds`` rounds of ELIZA answering its own previous reply (a pseudo-dialogue)."""
    when = after or datetime(2024, 1, 1, 12, 0)
    eliza = Eliza(seed=seed)
    said = "hello"
    lines = []
    for _ in range(rounds):
        when += timedelta(seconds=20)
        lines.append(f"User: [{when.strftime(_TIME_FORMAT)}] {said}")
        said = eliza.respond(said)
        when += timedelta(seconds=2 + len(said) // 8)
        lines.append(_line(said, when))
    return "\n".join(lines)


def check_name(model: str) -> None:
    """Raise a :class:`ConfigError` unless ``eliza/<model>`` is known."""
    if model not in SCRIPTS:
        raise ConfigError(f"eliza/{model} is not known: use eliza/classic.")


def create(model: str, *, seed: int = 0, delay: float = 0.0) -> MockModelAPI:
    """``eliza/classic``; ``seed`` shifts where each reply rotation starts."""
    check_name(model)
    return MockModelAPI(classic_script(seed), name=f"{PROVIDER}/{model}", delay=delay)


def availability() -> tuple[bool, str]:
    """ELIZA is always usable."""
    return True, "built in, offline; rule-based baseline (Weizenbaum 1966)"
