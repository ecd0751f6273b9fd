"""What LLM judges are told: the same rendering human judges read, and nothing more.

The pair text comes from :func:`sdtt.tasks.layout.pair_text`, the plain-text
form of exactly the lines in ``questionnaire.json``, so a judge model sees no model,
persona, conversation id or source, just as a human judge does.
"""

from __future__ import annotations

from sdtt.models.base import Prompt
from sdtt.tasks.layout import line_text, pair_text
from sdtt.tasks.questionnaire import JUDGEMENT_CHOICES, Line, PairItem

STUDY = "You are taking part in a study about telling people and AI systems apart in text chats. "
SIMULATED_USER_A = (
    "User A is not always a human: in some chats of this study a computer program plays User A. "
)
PAIRED_INSTRUCTIONS = (
    STUDY + "You will read two chats, Chat 1 and Chat 2. In both chats User A is a human. "
    "User B is a human in one of the chats and an AI system pretending to be a person in "
    "the other. Lines of User B are marked with '>'. Decide in which chat User B is the AI."
)
PAIRED_INSTRUCTIONS_SIMULATED = (
    STUDY + "You will read two chats, Chat 1 and Chat 2. " + SIMULATED_USER_A + "User B is "
    "a human in one of the chats and an AI system pretending to be a person in the other. "
    "Lines of User B are marked with '>'. Decide in which chat User B is the AI."
)
PAIRED_TASK = (
    "In which chat is User B the AI?\n"
    + "\n".join(f"{code}) {label}" for code, label in JUDGEMENT_CHOICES)
    + "\nAnswer with the option letter only: A or B."
)
RETRY_NOTE = (
    "Your previous reply could not be read as one option. Reply with a single letter, "
    "A or B, and nothing else."
)

SINGLE_INSTRUCTIONS = (
    STUDY + "You will read one chat. User A is a human. User B is either a human or an AI "
    "system pretending to be a person. Lines of User B are marked with '>'. Decide which."
)
SINGLE_INSTRUCTIONS_SIMULATED = (
    STUDY + "You will read one chat. " + SIMULATED_USER_A + "User B is either a human or "
    "an AI system pretending to be a person. Lines of User B are marked with '>'. Decide "
    "which."
)
SINGLE_TASK = "Is User B in this chat a human or an AI? Answer with one word only: human or AI."
SINGLE_RETRY_NOTE = (
    "Your previous reply could not be read. Reply with exactly one word, human or AI."
)


def paired_instructions(item: PairItem) -> str:
    """What a paired judge is told first: that User A is a human only when it is."""
    return PAIRED_INSTRUCTIONS if item.user_a_person else PAIRED_INSTRUCTIONS_SIMULATED


def paired_prompt(item: PairItem, *, attempt: int = 1) -> Prompt:
    """The prompt for a paired judgement of ``item`` as shown (chat 1 first)."""
    return _judge_prompt(
        paired_instructions(item), pair_text(item), PAIRED_TASK, RETRY_NOTE, attempt
    )


def _judge_prompt(
    instructions: str, dialogue: str, task: str, retry_note: str, attempt: int
) -> Prompt:
    # A retry adds the note; the question also travels in the completion cue.
    if attempt > 1:
        task = f"{task}\n\n{retry_note}"
    return Prompt(
        instructions=instructions,
        dialogue=dialogue,
        task=task,
        continue_with=completion_cue(task),
    )


def completion_cue(task: str) -> str:
    """What a completion model continues: the question, then the answer's start.

    Completion models see no separate task (see :meth:`Prompt.completion_text`), so the
    question travels in the cue itself.
    """
    return f"{task}\nAnswer:"


def chat_text(lines: list[Line]) -> str:
    """One chat as plain text, User B's lines marked with '>' (as in :func:`pair_text`)."""
    return "\n".join((">" if line.speaker == "B" else " ") + line_text(line) for line in lines)


def single_prompt(
    lines: list[Line],
    *,
    example: tuple[list[Line], str] | None = None,
    attempt: int = 1,
    user_a_person: bool = True,
) -> Prompt:
    """The prompt for one chat; ``example`` is a labelled chat shown first (one-shot).
    ``user_a_person`` is False when a program plays User A in some chat of the study
    (:attr:`PairItem.user_a_person`): then the prompt does not call User A a human."""
    instructions = SINGLE_INSTRUCTIONS if user_a_person else SINGLE_INSTRUCTIONS_SIMULATED
    if example is not None:
        example_lines, truth = example
        instructions += (
            "\n\nHere is an example chat whose answer is known:\n"
            + chat_text(example_lines)
            + f"\nAnswer: {'AI' if truth == 'ai' else 'human'}"
        )
    return _judge_prompt(instructions, chat_text(lines), SINGLE_TASK, SINGLE_RETRY_NOTE, attempt)
