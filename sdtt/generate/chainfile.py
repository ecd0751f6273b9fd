"""Chain files: one pseudo-dialogue chain per append-only JSONL file.

Records, in the order they were produced (all carry ``"type"`` and ``"chain"``):

- ``pseudo_chain``: the header (:class:`~sdtt.generate.chain.ChainHeader`), first;
- ``pseudo_call``: one model call, its raw output and the messages kept from it;
- ``pseudo_turn``: one finished turn with its topic, indices, model, settings and usage;
- ``pseudo_error``: a failure of the chain in some run (informational, skipped on replay).

A cut-off last line (a crash mid-write) is ignored when reading and removed by the next
writer. :func:`load_pseudo_messages` also reads ordinary transcript files, so a
hand-written history can stand in for a generated one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from sdtt.dialogue.message import SCHEMA_VERSION, Message, segment_turns
from sdtt.dialogue.store import check_version, transcripts_from_records, validate_record
from sdtt.errors import InputError
from sdtt.generate.chain import ChainHeader, PseudoCallRecord, TurnRecord
from sdtt.generate.pseudo import ChainState
from sdtt.jsonl import read_jsonl
from sdtt.models.base import Prompt

M = TypeVar("M", bound=BaseModel)
HINT = (
    "Chain files are written by 'sdtt generate'; set a damaged one aside and run again "
    "with another --out folder."
)


@dataclass
class ChainFile:
    """A chain file's records, validated, in file order."""

    path: Path
    header: ChainHeader
    body: list[PseudoCallRecord | TurnRecord] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def calls(self) -> list[PseudoCallRecord]:
        """The call records."""
        return [record for record in self.body if isinstance(record, PseudoCallRecord)]

    @property
    def turns(self) -> list[TurnRecord]:
        """The turn records."""
        return [record for record in self.body if isinstance(record, TurnRecord)]

    @property
    def messages(self) -> list[Message]:
        """The pseudo-dialogue so far: the messages of every written turn, in order."""
        return [message for turn in self.turns for message in turn.messages]

    def state(self) -> ChainState:
        """The chain's state after every record of the file."""
        return ChainState.replay(self.header, self.body)


def is_chain_file(path: str | Path) -> bool:
    """True when the file's first record is a chain header."""
    for _, record in read_jsonl(path):
        return record.get("type") == "pseudo_chain"
    return False


def read_chain(path: str | Path) -> ChainFile:
    """Read and validate a chain file (a cut-off last line is ignored)."""
    path = Path(path)
    chain: ChainFile | None = None
    for line, record in read_jsonl(path):
        kind = record.get("type")
        if chain is None:
            if kind != "pseudo_chain":
                raise InputError(
                    "is not a pseudo-dialogue chain file (its first record is not 'pseudo_chain').",
                    path=path,
                    line=line,
                    hint=HINT,
                )
            check_version(record, SCHEMA_VERSION, path, line)
            chain = ChainFile(
                path=path, header=validate_record(ChainHeader, record, path, line, hint=HINT)
            )
            continue
        if record.get("chain") != chain.header.chain:
            raise InputError(
                f"record of chain {record.get('chain')!r} in the file of chain "
                f"{chain.header.chain!r}.",
                path=path,
                line=line,
                field="chain",
                hint=HINT,
            )
        if kind == "pseudo_call":
            chain.body.append(validate_record(PseudoCallRecord, record, path, line, hint=HINT))
        elif kind == "pseudo_turn":
            chain.body.append(validate_record(TurnRecord, record, path, line, hint=HINT))
        elif kind == "pseudo_error":
            chain.errors.append(record)
    if chain is None:
        raise InputError("is empty: no chain header.", path=path, hint=HINT)
    return chain


def load_pseudo_messages(path: str | Path) -> list[Message]:
    """The pseudo-dialogue in ``path``: a chain file's turns, or a transcript file's messages.

    A chain file that is not finished yields the turns written so far.
    """
    path = Path(path)
    if is_chain_file(path):
        return read_chain(path).messages
    transcripts = transcripts_from_records(read_jsonl(path), path)
    if not transcripts:
        raise InputError(
            "holds neither a pseudo-dialogue chain nor a transcript.",
            path=path,
            hint="Give a file written by 'sdtt generate', or a transcript file.",
        )
    return [message for transcript in transcripts for message in transcript.messages]


def count_pseudo_turns(path: str | Path) -> int:
    """N: the turns of pseudo-dialogue in ``path`` (a chain's written turns, or the burst
    turns of every conversation in a transcript file)."""
    path = Path(path)
    if is_chain_file(path):
        return len(read_chain(path).turns)
    transcripts = transcripts_from_records(read_jsonl(path), path)
    return sum(len(segment_turns(transcript.messages)) for transcript in transcripts)


def rebuild_prompt(path: str | Path, call: int) -> Prompt:
    """The exact prompt of call ``call`` (0-based) of the chain in ``path``."""
    chain = read_chain(path)
    calls = chain.calls
    if not 0 <= call < len(calls):
        raise InputError(
            f"has no call {call}; it holds calls 0 to {len(calls) - 1}.",
            path=path,
            hint="Count calls from 0.",
        )
    state = ChainState(chain.header)
    for record in chain.body:
        if isinstance(record, PseudoCallRecord):
            if record.call == call:
                break
            state.apply(record)
        else:
            state.mark_written(record)
    wanted = calls[call]
    return Prompt(
        instructions=chain.header.instructions,
        history=chain.header.history,
        dialogue=state.dialogue_text(),
        task=wanted.task,
        continue_with=wanted.continue_with,
        stable_dialogue_chars=state.stable_dialogue_chars(),
    )
