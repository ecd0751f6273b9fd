"""sdtt's own cue list for the word-association task: 150 English cue words.

Chosen as the papers describe theirs (their list is not published): 50 nouns, 50 verbs
in the present tense and 50 adjectives, from very common words to rarer ones, none a stop
word, none shorter than three letters, nouns singular. Pass a file of your own to use
other cues (one a line, ``#`` comments).
"""

from __future__ import annotations

from pathlib import Path

from sdtt.errors import InputError


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NOUNS: tuple[str, ...] = _words(
    """
    house water dog tree car book school money music city bread river window doctor
    garden winter mountain coffee friend ocean church kitchen forest island teacher
    bridge pencil candle mirror ladder village thunder blanket pillow engine violin
    lantern harbor meadow orchard compass anchor saddle glacier falcon pebble quarry
    turnip cathedral telescope
    """
)
VERBS: tuple[str, ...] = _words(
    """
    run eat sleep write sing drive swim read build laugh cook dance climb teach break
    listen travel paint whisper borrow forgive wander shout gather polish argue bake
    fold hesitate celebrate stumble scatter negotiate pray kneel squeeze shiver juggle
    plead sprint bargain inherit glide mourn sew harvest rescue tremble summon wrestle
    """
)
ADJECTIVES: tuple[str, ...] = _words(
    """
    happy cold big green old fast dark soft loud young sweet empty strong bright quiet
    heavy sharp rich brave angry clever gentle narrow bitter lonely honest famous rough
    curious ancient fragile humble stubborn elegant clumsy generous shallow vivid hollow
    fierce anxious jealous polite crooked sincere rusty eager bland feeble serene
    """
)
CUES: tuple[str, ...] = NOUNS + VERBS + ADJECTIVES
"""The bundled cues: nouns, then verbs, then adjectives."""


def read_cues(path: str | Path) -> tuple[str, ...]:
    """Cues from a text file, one a line; blank lines and ``#`` comments skipped.

    A line holding more than one word, or a word repeated, is an :class:`InputError`
    naming its line.
    """
    seen: dict[str, int] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the cue list ({error}).", path=path) from None
    for number, line in enumerate(text.splitlines(), start=1):
        cue = line.split("#", 1)[0].strip().lower()
        if not cue:
            continue
        if len(cue.split()) != 1:
            raise InputError(
                f"a cue is one word, not {cue!r}.", path=path, line=number, hint="One cue a line."
            )
        if cue in seen:
            raise InputError(
                f"{cue!r} is listed again (first on line {seen[cue]}).", path=path, line=number
            )
        seen[cue] = number
    if not seen:
        raise InputError("the cue list holds no cues.", path=path, hint="One cue word a line.")
    return tuple(seen)
