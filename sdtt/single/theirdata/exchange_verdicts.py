"""Per-exchange verdicts with reasons, as belief traces (:mod:`sdtt.beliefs.traces`).

Their later studies asked judges after every exchange whether each speaker was a human
or a machine, and why. The file is a CSV with columns ``judge``, ``conversation``,
``exchange`` (1-based), ``speaker`` (``A`` or ``B``) and ``verdict`` (``human`` or
``machine``), optionally ``reason``, ``confidence`` (50-100: how sure of the verdict),
``judge_type`` (``human`` or ``llm``) and ``truth`` (``human`` or ``machine``: who the
speaker was; else taken from their class labels).

Each judge's verdicts on one speaker of one conversation become one trace (item kind
``single``, item id ``CONVERSATION/A`` or ``CONVERSATION/B``, target ``speaker A`` or
``speaker B``), a point per exchange: belief 100 for ``human`` and 0 for ``machine``, or
the confidence (``100 - confidence`` for ``machine``), the reason kept with the point.
The last point is the judge's verdict.

Their online, interactive test's release (``Conversations/turing_online/trials_all.json``)
is JSON instead: ``{"51.txt": [{"groundtruth": "machine", "response": "human", "reason":
"..."}, ...], ...}``, one key per conversation (one judge each), one entry per exchange
in order: who the judged agent was, the judge's verdict and why. Each key becomes one
trace (judge and item id the key's stem, target ``agent``), a point per exchange.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sdtt.beliefs.traces import BeliefPoint, BeliefTrace
from sdtt.dialogue.shown import Shown
from sdtt.errors import InputError
from sdtt.single.csvrows import csv_rows
from sdtt.single.theirdata.jsonfile import key_line, load_json, need_object
from sdtt.single.theirdata.pages import CLASSES

COLUMNS = ("judge", "conversation", "exchange", "speaker", "verdict")
OPTIONAL = ("reason", "confidence", "judge_type", "truth")


def read_verdicts(
    path: str | Path, *, study: str, labels: Mapping[str, str] | None = None
) -> list[BeliefTrace]:
    """The belief traces of a per-exchange verdict CSV, or of their ``trials_all.json``
    (see the module's docstring)."""
    if _is_json(path):
        return read_online_trials(path, study=study)
    points: dict[tuple[str, str, str], list[tuple[int, BeliefPoint]]] = {}
    facts: dict[tuple[str, str, str], tuple[str, bool]] = {}
    for line, row in csv_rows(path, COLUMNS, OPTIONAL):

        def bad(problem: str, column: str, hint: str | None = None, line: int = line) -> InputError:
            return InputError(problem, path=path, line=line, field=column, hint=hint)

        speaker = row["speaker"].upper()
        if speaker not in ("A", "B"):
            raise bad(f"the speaker is A or B, not {row['speaker']!r}.", "speaker")
        verdict = row["verdict"].lower()
        if verdict not in ("human", "machine"):
            raise bad(f"the verdict is human or machine, not {row['verdict']!r}.", "verdict")
        try:
            exchange = int(row["exchange"])
        except ValueError:
            raise bad(f"{row['exchange']!r} is not a whole number.", "exchange") from None
        if exchange < 1:
            raise bad("exchanges count from 1.", "exchange")
        confidence = 100.0
        if row.get("confidence"):
            try:
                confidence = float(row["confidence"])
            except ValueError:
                raise bad(f"{row['confidence']!r} is not a number.", "confidence") from None
            if not 50 <= confidence <= 100:
                raise bad("a confidence is from 50 (a guess) to 100 (sure).", "confidence")
        truth = row.get("truth", "").lower()
        if not truth:
            label = (labels or {}).get(row["conversation"])
            if label is None:
                raise bad(
                    f"no truth for conversation {row['conversation']!r}.",
                    "truth",
                    "Give a truth column, or their class labels (correct_answers.json).",
                )
            truth = CLASSES[label][0 if speaker == "A" else 1]
        if truth not in ("human", "machine"):
            raise bad(f"the truth is human or machine, not {truth!r}.", "truth")
        judge_type = row.get("judge_type", "").lower() or "human"
        if judge_type not in ("human", "llm"):
            raise bad(f"the judge type is human or llm, not {judge_type!r}.", "judge_type")
        key = (row["judge"], row["conversation"], speaker)
        belief = confidence if verdict == "human" else 100.0 - confidence
        point = BeliefPoint(
            turn=exchange, belief=belief, source="stated", reason=row.get("reason") or None
        )
        points.setdefault(key, []).append((exchange, point))
        facts[key] = (judge_type, truth == "human")
    traces = []
    for key, found in points.items():
        judge, conversation, speaker = key
        judge_type, human = facts[key]
        ordered = [point for _exchange, point in sorted(found, key=lambda pair: pair[0])]
        traces.append(
            BeliefTrace(
                study=study,
                judge_id=judge,
                judge_type=judge_type,  # type: ignore[arg-type]
                item_id=f"{conversation}/{speaker}",
                item_kind="single",
                target=f"speaker {speaker}",
                target_human=human,
                points=ordered,
                source=f"kreiman-verdicts:{Path(path).name}",
                shown=Shown(
                    conversation=conversation,
                    speaker=speaker,
                    # The exchanges judged: the whole conversation up to the last verdict.
                    live_from=1,
                    live_to=max(exchange for exchange, _point in found),
                ),
            )
        )
    return traces


def _is_json(path: str | Path) -> bool:
    try:
        with Path(path).open("rb") as handle:
            start = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False  # the CSV reader names the problem
    return start[:1] in (b"{", b"[")


def read_online_trials(path: str | Path, *, study: str) -> list[BeliefTrace]:
    """Their ``trials_all.json``: one trace per conversation, a point per exchange."""
    data, text = load_json(path)
    found = need_object(data, path, '{"51.txt": [{"groundtruth", "response", "reason"}, ...]}')
    traces = []
    for key, entries in found.items():
        line = key_line(text, key)
        if not isinstance(entries, list) or not entries:
            raise InputError(
                "expected a list of verdicts, one per exchange.", path=path, line=line, field=key
            )
        truths = set()
        points = []
        for index, entry in enumerate(entries):
            where = f"{key}[{index}]"
            if not isinstance(entry, dict):
                raise InputError("expected an object.", path=path, line=line, field=where)
            values = {}
            for name in ("groundtruth", "response"):
                value = entry.get(name)
                if value not in ("human", "machine"):
                    raise InputError(
                        f"expected 'human' or 'machine', not {str(value)[:20]!r}.",
                        path=path,
                        line=line,
                        field=f"{where}.{name}",
                    )
                values[name] = value
            truths.add(values["groundtruth"])
            reason = entry.get("reason")
            if reason is not None and not isinstance(reason, str):
                raise InputError("expected text.", path=path, line=line, field=f"{where}.reason")
            points.append(
                BeliefPoint(
                    turn=index + 1,
                    belief=100.0 if values["response"] == "human" else 0.0,
                    source="stated",
                    reason=reason.strip() if reason and reason.strip() else None,
                )
            )
        if len(truths) > 1:
            raise InputError(
                "the groundtruth changes between exchanges of one conversation.",
                path=path,
                line=line,
                field=key,
                hint="Each key is one conversation, judged on one agent.",
            )
        stem = Path(key).stem
        traces.append(
            BeliefTrace(
                study=study,
                judge_id=stem,
                judge_type="human",
                item_id=stem,
                item_kind="single",
                target="agent",
                target_human=truths == {"human"},
                points=points,
                source=f"kreiman-online:{Path(path).name}",
                shown=Shown(conversation=stem, live_from=1, live_to=len(points)),
            )
        )
    return traces
