"""``sdtt export parquet``: a study's records as Parquet tables (:mod:`sdtt.results`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands.console import CliConsole
from sdtt.redact import shown
from sdtt.results import load, write_parquet


def _study_folder(path: Path) -> Path:
    """A spec names its output folder; a folder is the study (or a bundle) itself."""
    if path.is_file() and path.suffix == ".toml":
        from sdtt.study.spec import read_spec

        return read_spec(path).out
    return path


def run(args: argparse.Namespace) -> int:
    """Write the study's tables as Parquet files and say what each holds."""
    console = CliConsole(highlight=False)
    folder = _study_folder(args.study)
    tables = load(folder)
    out = args.out or folder.with_name(folder.name + "-parquet")
    for path in write_parquet(tables, out):
        rows = len(tables[path.stem])
        console.print(f"wrote {shown(str(path))}: {rows} rows")
    console.print(
        f"load one with: pandas.read_parquet({shown(repr(str(out / 'judgements.parquet')))})"
    )
    return 0
