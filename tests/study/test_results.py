"""Results as data: ``sdtt score --format json|csv``, a study's ``results/`` folder,
``sdtt export parquet`` and ``sdtt.results.load``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import sdtt.results
from sdtt.cli import main
from tests.study.conftest import Reference


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(["score", *args]) == 0
    return capsys.readouterr().out


def test_the_parquet_tables_load_in_one_line_and_match_sdtt_score(
    reference: Reference, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = reference.out.parent / "study.toml"
    assert main(["export", "parquet", str(spec), "--out", str(tmp_path / "data")]) == 0
    judgements = pd.read_parquet(tmp_path / "data/judgements.parquet")
    transcripts = pd.read_parquet(tmp_path / "data/transcripts.parquet")
    messages = pd.read_parquet(tmp_path / "data/messages.parquet")

    rows = json.loads(
        _score(capsys, str(reference.out / "judgements/llm.jsonl"), "--format", "json")
    )
    rates = [r for r in rows if r["table"] == "conditions" and r["statistic"] == "pass_rate"]
    test = judgements.loc[judgements["pair_kind"] == "test"]
    used = test.loc[~test["excluded"] & test["correct"].notna()]
    assert sum(r["n"] for r in rates) == len(used) > 0
    assert sum(r["pairs"] for r in rates) == used["pair_id"].nunique()
    for rate in rates:
        # Each condition's pass rate from the parquet rows: 1 - the mean over pairs.
        part = used.loc[used["turns"] == int(rate["condition"].split("turn ")[1].split()[0])]
        assert 1 - part.groupby("pair_id")["correct"].mean().mean() == pytest.approx(rate["value"])

    # The pooled rate's interval is Wilson's, as statsmodels computes it.
    for pooled in (r for r in rows if r["statistic"] == "pass_rate_pooled"):
        passed = round(pooled["value"] * pooled["n"])
        low, high = proportion_confint(passed, pooled["n"], alpha=0.05, method="wilson")
        assert (pooled["ci_low"], pooled["ci_high"]) == (pytest.approx(low), pytest.approx(high))

    chats = sorted((reference.out / "chats").glob("cell-*"))
    assert sorted(transcripts["cell"]) == [c.name for c in chats]
    assert len(messages) == transcripts["messages"].sum()
    assert set(messages["transcript_id"]) == set(transcripts["transcript_id"])
    assert str(messages["time"].dtype).startswith("datetime64")
    assert (tmp_path / "data/traces.parquet").exists()

    # The library call returns the same tables, from the study or from its bundle.
    loaded = sdtt.results.load(reference.out)
    assert list(loaded) == ["transcripts", "messages", "judgements", "traces"]
    assert len(loaded["judgements"]) == len(judgements)
    bundle = tmp_path / "bundle"
    assert main(["study", "bundle", str(spec), "--out", str(bundle)]) == 0
    assert len(sdtt.results.load(bundle)["messages"]) == len(messages)


def test_a_study_writes_its_tables_as_tidy_rows_as_sdtt_score_does(
    reference: Reference, capsys: pytest.CaptureFixture[str]
) -> None:
    results = reference.out / "results"
    judged = str(reference.out / "judgements/llm.jsonl")
    # The study's [analysis] defaults: by turns, 200 bootstrap replicates, margin 0.1.
    shown = _score(capsys, judged, "--format", "csv", "--by", "turns", "--bootstrap", "200")
    assert (results / "pass-rates.csv").read_text("utf-8") == shown
    rows = pd.read_csv(results / "pass-rates.csv")
    assert {"conditions", "by turns"} == set(rows["table"])
    rate = rows.loc[rows["statistic"] == "pass_rate"].iloc[0]
    assert rate["ci_level"] == 0.95 and rate["ci_low"] <= rate["value"] <= rate["ci_high"]
    assert "bootstrap" in rate["ci_method"] or "Wilson" in rate["ci_method"]
    pooled = rows.loc[rows["statistic"] == "pass_rate_pooled"].iloc[0]
    assert pooled["ci_method"] == "Wilson, judgements taken as independent"
    assert json.loads((results / "pass-rates.json").read_text("utf-8"))[0]["statistic"] == (
        "pass_rate"
    )
    # Every table of the report, cell by cell, as the report shows it.
    figures = json.loads((reference.out / "report/figures.json").read_text("utf-8"))
    cells = pd.read_csv(results / "report-tables.csv", keep_default_na=False, dtype=str)
    assert set(cells["table"]) == {s["title"] for s in figures["sections"]}
    assert len(cells) == sum(
        len(row) for s in figures["sections"] for row in s["rows"] if len(row) <= len(s["header"])
    )


def test_csv_rows_are_spreadsheet_safe_and_the_format_options_are_checked(
    reference: Reference, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judged = reference.out / "judgements/llm.jsonl"
    records = [json.loads(line) for line in judged.read_text("utf-8").splitlines()]
    for record in records:
        record["shown"]["topic"] = "=HYPERLINK(1)"
    edited = tmp_path / "judgements.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    shown = _score(capsys, str(edited), "--format", "csv", "--by", "topic")
    rows = pd.read_csv(io.StringIO(shown))
    assert not rows["level"].dropna().astype(str).str.startswith("=").any()
    assert main(["score", str(judged), "--out", str(tmp_path / "x.csv")]) == 2
    assert "--out applies with --format json or csv" in " ".join(capsys.readouterr().err.split())
