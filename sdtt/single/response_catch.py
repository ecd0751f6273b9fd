"""The papers' catch trials for single items (their Table S3): items no attentive judge
takes for a person's, mixed in as attention checks.

- Word association: the cue repeated as its own association ("healthy" -> "healthy").
- Image captioning: one word repeated four times ("with with with with").

A catch item is a :class:`SingleResponse` with ``catch=True`` and truth ``machine``:
shown to judges like any item (nothing in it says it is a check), scored only as an
attention check, never used by the SVM or LLM judges.
"""

from __future__ import annotations

from collections.abc import Sequence

from sdtt.dialogue.seeds import seeded_rng
from sdtt.errors import InputError
from sdtt.single.response import SingleResponse, Task, response_id

FILLER_WORDS = ("with", "the", "and", "on", "of", "in", "a", "is")
"""Words a caption catch item repeats."""
REPEATS = 4


def catch_items(
    task: Task, stimuli: Sequence[str], count: int, *, seed: int = 0
) -> list[SingleResponse]:
    """``count`` catch items on stimuli drawn (without repeats) from ``stimuli``."""
    if not 0 < count <= len(stimuli):
        raise InputError(
            f"cannot make {count} catch items from {len(stimuli)} stimuli.",
            field="count",
            hint="Ask for at least 1 and at most one per stimulus.",
        )
    rng = seeded_rng(seed, "catch", task)
    chosen = rng.sample(list(stimuli), count)
    items = []
    for stimulus in chosen:
        filler = " ".join([rng.choice(FILLER_WORDS)] * REPEATS)
        text = stimulus if task == "wordassoc" else filler
        items.append(
            SingleResponse(
                task=task,
                id=response_id(task, stimulus, text, "catch", str(seed)),
                stimulus=stimulus,
                response=text,
                truth="machine",
                agent="catch",
                catch=True,
                origin="catch",
                meta={"seed": seed},
            )
        )
    return items
