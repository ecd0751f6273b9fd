"""The parser of ``sdtt export``; the command runs in :mod:`sdtt.commands.export`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions, add_out_argument


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt export parquet``."""
    formats = add_actions(
        subparsers,
        "export",
        dest="format",
        metavar="FORMAT",
        description=(
            "A study's records as flat tables for data tools. 'parquet' writes "
            "transcripts.parquet, messages.parquet, judgements.parquet and traces.parquet "
            "(the tables of sdtt.results.load), e.g. "
            "sdtt export parquet examples/turns_study.toml --out turns-data, then in Python "
            "pd.read_parquet('turns-data/judgements.parquet')."
        ),
    )
    parquet = formats.add_parser(
        "parquet", help="one Parquet file per table (pandas, polars, Hugging Face datasets)"
    )
    parquet.add_argument(
        "study",
        type=Path,
        metavar="STUDY",
        help="a study spec (TOML), a study's output folder, or a bundle folder",
    )
    add_out_argument(
        parquet,
        folder=True,
        help="folder to write the tables into (default: STUDY_OUT-parquet beside the study's "
        "folder, so the study's own files, which its bundle hashes, stay as they are)",
    )
    parquet.set_defaults(func=lazy_command("sdtt.commands.export"))
