"""A study's records as pandas DataFrames, for a notebook::

    import sdtt.results
    tables = sdtt.results.load("runs/turns")      # a study's folder, or a bundle's
    tables["judgements"].groupby("turns")["correct"].mean()

:func:`load` returns four flat tables (:data:`TABLES`), one row per

- ``transcripts``: chat (its cell, file relative to the study, topic, and the condition it
  was run as: persona, model, mode, N, X, seed, interrogator; its message count);
- ``messages``: message of a chat (transcript id, index, side, time, text);
- ``judgements``: judgement, as ``sdtt score`` reads them (the columns of
  :func:`~sdtt.analysis.table.judgement_table`: judge, pair, condition, verdict, exclusion),
  so counts match its tables;
- ``traces``: reading of a belief trace (judge, item, target, the truth, what the judge
  was shown as JSON in ``shown``, turn, belief).

``sdtt export parquet STUDY`` writes the same tables as Parquet files, which pandas
(``pd.read_parquet``), polars or Hugging Face ``datasets`` read in one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sdtt.analysis.table import judgement_table
from sdtt.beliefs.traces import is_trace_file, judgements_from_traces, load_traces
from sdtt.dialogue.store import read_transcripts
from sdtt.errors import InputError
from sdtt.tasks.judgements import Judgement, load_judgements

TABLES = ("transcripts", "messages", "judgements", "traces")
"""The tables :func:`load` returns, in this order."""
_BATCH_LEDGER = ".batches.jsonl"


def read_judgement_files(paths: Sequence[Path]) -> list[Judgement]:
    """Judgement and belief-trace files as judgements (a trace by its last belief), as
    ``sdtt score`` counts them: repeated answers left out."""
    traces = [path for path in paths if is_trace_file(path)]
    judgements = load_judgements([path for path in paths if path not in traces])
    return judgements + judgements_from_traces(load_traces(traces))


def _study_folder(study_dir: str | Path) -> Path:
    folder = Path(study_dir)
    if (folder / "manifest.json").is_file() and (folder / "study").is_dir():
        return folder / "study"  # a bundle
    if not folder.is_dir():
        raise InputError(
            "is not a study folder.",
            path=folder,
            hint="Give the output folder of 'sdtt study run' (its spec's out) or a bundle.",
        )
    return folder


def _judgement_paths(folder: Path) -> list[Path]:
    found = (folder / "judgements").glob("*.jsonl")
    return sorted(path for path in found if not path.name.endswith(_BATCH_LEDGER))


def _chats(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    transcripts: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    files = sorted((folder / "chats").glob("*/*.jsonl"))
    for path in (p for p in files if not p.name.endswith(".events.jsonl")):
        for transcript in read_transcripts(path):
            condition = transcript.condition
            transcripts.append(
                {
                    "transcript_id": transcript.id,
                    "cell": path.parent.name,
                    "file": path.relative_to(folder).as_posix(),
                    "topic": transcript.topic,
                    "persona": condition.persona if condition else None,
                    "model": condition.model if condition else None,
                    "mode": condition.mode if condition else None,
                    "n": condition.pseudo_turns if condition else None,
                    "x": condition.live_turns if condition else None,
                    "seed": condition.seed if condition else None,
                    "interrogator": condition.interrogator if condition else None,
                    "messages": len(transcript.messages),
                }
            )
            messages += [
                {
                    "transcript_id": transcript.id,
                    "index": index,
                    "side": message.side,
                    "time": message.time,
                    "text": message.text,
                }
                for index, message in enumerate(transcript.messages)
            ]
    transcript_columns = [
        "transcript_id",
        "cell",
        "file",
        "topic",
        "persona",
        "model",
        "mode",
        "n",
        "x",
        "seed",
        "interrogator",
        "messages",
    ]
    return (
        pd.DataFrame(transcripts, columns=transcript_columns),
        pd.DataFrame(messages, columns=["transcript_id", "index", "side", "time", "text"]),
    )


def _traces(paths: Sequence[Path]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for trace in load_traces([path for path in paths if is_trace_file(path)]):
        key = {
            "judge_id": trace.judge_id,
            "judge_type": trace.judge_type,
            "judge_model": trace.judge_model,
            "item_id": trace.item_id,
            "item_kind": trace.item_kind,
            "pair_kind": trace.pair_kind,
            "target": trace.target,
            "target_human": trace.target_human,
            "excluded": trace.excluded,
            "shown": json.dumps(
                trace.shown.model_dump(mode="json"), sort_keys=True, ensure_ascii=False
            ),
        }
        rows += [
            {**key, "point": index, **point.model_dump(mode="json")}
            for index, point in enumerate(trace.points)
        ]
    return pd.DataFrame(rows)


def load(study_dir: str | Path) -> dict[str, pd.DataFrame]:
    """The study's transcripts, messages, judgements and belief traces as DataFrames
    (:data:`TABLES`); ``study_dir`` is a study's output folder or a bundle."""
    folder = _study_folder(study_dir)
    transcripts, messages = _chats(folder)
    paths = _judgement_paths(folder)
    judgements = judgement_table(read_judgement_files(paths)) if paths else pd.DataFrame()
    return {
        "transcripts": transcripts,
        "messages": messages,
        "judgements": judgements,
        "traces": _traces(paths),
    }


def write_parquet(tables: dict[str, pd.DataFrame], out: Path) -> list[Path]:
    """Each table as ``out/NAME.parquet``; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.items():
        path = out / f"{name}.parquet"
        # Nested values (lists, objects) are stored as their JSON text.
        fixed = frame.copy()
        for column in fixed.columns:
            if fixed[column].dtype == object:
                fixed[column] = fixed[column].map(
                    lambda v: json.dumps(v, default=str) if isinstance(v, dict | list) else v
                )
        fixed.to_parquet(path, engine="pyarrow", index=False)
        written.append(path)
    return written
