"""A study's LLM cohorts (``[cohorts.NAME]``): the rating task from its questionnaire,
the cohorts' ratings through the cost ledger, their table in the report and in verify."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.study.bundle import MANIFEST, sha256_of, write_bundle
from sdtt.study.ledger import LEDGER_FILE, read_ledger
from sdtt.study.spec import read_spec
from sdtt.study.status import study_status
from sdtt.study.verify import verify_bundle
from tests.study.helpers import CountingMocks, run_study, write_spec
from tests.study.test_cost import PRICE, dollars

COHORT = """
[align]
items_per_source = 3

[cohorts.mini]
models = ["mock/chatty"]
temperatures = [0.7, 1.5]
participants = 3
"""
TABLE = "Cohorts: inter-individual agreement"


def cohort_spec(folder: Path, cohort: str = COHORT) -> Path:
    spec = write_spec(folder)
    spec.write_text(spec.read_text("utf-8") + cohort, "utf-8")
    return spec


def section(figures: dict[str, object], title: str) -> dict[str, list[list[str]]]:
    found = [s for s in figures["sections"] if s["title"] == title]  # type: ignore[attr-defined]
    assert len(found) == 1, [s["title"] for s in figures["sections"]]  # type: ignore[attr-defined]
    return found[0]  # type: ignore[no-any-return]


def test_a_bad_cohort_is_one_error_naming_file_line_and_field(tmp_path: Path) -> None:
    spec = cohort_spec(tmp_path, COHORT + 'prompts = ["shouty"]\n')
    with pytest.raises(InputError, match="shouty") as caught:
        read_spec(spec)
    assert caught.value.field == "cohorts.mini.prompts"
    lines = spec.read_text("utf-8").splitlines()
    assert caught.value.line == lines.index('prompts = ["shouty"]') + 1


def test_two_sections_naming_one_cohort_are_refused(tmp_path: Path) -> None:
    twice = COHORT + '\n[cohorts.again]\nmodels = ["mock/chatty"]\ntemperatures = [0.7]\n'
    spec = cohort_spec(tmp_path, twice)
    with pytest.raises(InputError, match=r"also in \[cohorts.mini\]") as caught:
        read_spec(spec)
    assert caught.value.field == "cohorts.again"
    assert caught.value.line == spec.read_text("utf-8").splitlines().index("[cohorts.again]") + 1


def test_cohorts_rate_the_questionnaires_chats_and_a_rerun_calls_nothing(
    tmp_path: Path,
) -> None:
    spec = cohort_spec(tmp_path)
    first = CountingMocks()
    assert run_study(spec, first).finished
    out = tmp_path / "out"
    task = json.loads((out / "align" / "rating-task.json").read_text("utf-8"))
    ratings = [
        json.loads(line)
        for line in (out / "align" / "ratings" / "mini.jsonl").read_text("utf-8").splitlines()
    ]
    # Every participant of both cohorts rated every pair once.
    per_cohort = Counter(r["cohort"] for r in ratings)
    assert sorted(per_cohort) == [
        "mock/chatty t=0.7 prompt=plain",
        "mock/chatty t=1.5 prompt=plain",
    ]
    assert set(per_cohort.values()) == {3 * len(task["pairs"])}
    # Each call went through the ledger, as the cohort's.
    align_calls = [r for r in read_ledger(out / LEDGER_FILE) if r["stage"] == "align"]
    assert Counter(r["condition"] for r in align_calls) == per_cohort
    # The report shows one row per cohort: its participants and usable ratings.
    figures = json.loads((out / "report" / "figures.json").read_text("utf-8"))
    rows = {row[0]: row for row in section(figures, TABLE)["rows"]}
    usable = Counter(r["cohort"] for r in ratings if r["rating"] is not None)
    assert {name: (row[1], row[2]) for name, row in rows.items()} == {
        name: ("3", str(count)) for name, count in usable.items()
    }
    again = CountingMocks()
    assert run_study(spec, again).finished
    assert again.calls == []
    status = study_status(read_spec(spec))
    shown = {step.id: state for step, state in status.steps}
    assert shown["rating task"] == shown["cohort mini"] == "done"


def test_a_cohort_added_later_rates_and_the_study_resumes_without_a_repeat(
    tmp_path: Path,
) -> None:
    spec = write_spec(tmp_path)
    before = CountingMocks()
    assert run_study(spec, before).finished
    spec.write_text(spec.read_text("utf-8") + COHORT, "utf-8")
    status = study_status(read_spec(spec))
    shown = {step.id: state for step, state in status.steps}
    assert shown["rating task"] == shown["cohort mini"] == "missing"
    after = CountingMocks()
    assert run_study(spec, after).finished
    assert after.calls  # the cohorts' calls, and only new ones
    assert not set(after.calls) & set(before.calls)
    assert max(after.counted().values()) == 1
    figures = json.loads((tmp_path / "out" / "report" / "figures.json").read_text("utf-8"))
    assert len(section(figures, TABLE)["rows"]) == 2  # the report was made again


def test_verify_catches_an_altered_rating(tmp_path: Path) -> None:
    spec = cohort_spec(tmp_path)
    assert run_study(spec, CountingMocks()).finished
    bundle = write_bundle(read_spec(spec), tmp_path / "bundle")
    assert verify_bundle(bundle).ok
    name = "study/align/ratings/mini.jsonl"
    lines = (bundle / name).read_text("utf-8").splitlines()
    record = json.loads(lines[0])
    task = json.loads((bundle / "study/align/rating-task.json").read_text("utf-8"))
    low, high = task["scale_min"], task["scale_max"]
    record["rating"] = high if record["rating"] != high else low
    lines[0] = json.dumps(record)
    (bundle / name).write_text("\n".join(lines) + "\n", "utf-8")
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    manifest["files"][name]["sha256"] = sha256_of(bundle / name)  # only the figures tell
    (bundle / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    result = verify_bundle(bundle)
    assert not result.ok
    assert any(TABLE in p and "report says" in p for p in result.problems), result.problems


def test_the_budget_stops_a_cohort_and_a_raised_budget_finishes_it(tmp_path: Path) -> None:
    whole = CountingMocks()
    assert run_study(cohort_spec(tmp_path / "whole", COHORT + PRICE), whole).finished
    records = read_ledger(tmp_path / "whole/out" / LEDGER_FILE)
    rated = [r for r in records if r["stage"] == "align"]
    cohorts = sum(dollars(r) for r in rated)
    # The study is made first without its cohorts (a budget bounds a chat's every call
    # by its whole max_tokens, far above what a mock spends), then they are added.
    spec = write_spec(tmp_path / "tight", extra=PRICE)
    tight = CountingMocks()
    assert run_study(spec, tight).finished
    spent = sum(dollars(r) for r in read_ledger(tmp_path / "tight/out" / LEDGER_FILE))
    # Three quarters of what the cohorts cost: room for some of their calls (each is held
    # to its whole max_tokens until it answers), not for all.
    budget = spent + cohorts * 3 / 4
    text = spec.read_text("utf-8").replace("seed = 3", f"seed = 3\nbudget = {budget!r}")
    spec.write_text(text + COHORT, "utf-8")
    result = run_study(spec, tight)
    assert result.budget is not None and not result.finished
    assert "cohort mini" in [s.id for s in result.undone]
    records = read_ledger(tmp_path / "tight/out" / LEDGER_FILE)
    assert sum(dollars(r) for r in records) <= budget
    assert 0 < sum(r["stage"] == "align" for r in records) < len(rated)  # stopped midway
    spec.write_text(spec.read_text("utf-8").replace(f"budget = {budget!r}", "budget = 1.0"))
    rest = CountingMocks()
    assert run_study(spec, rest).finished
    assert tight.counted() + rest.counted() == whole.counted()
    figures = json.loads((tmp_path / "tight/out/report/figures.json").read_text("utf-8"))
    again = json.loads((tmp_path / "whole/out/report/figures.json").read_text("utf-8"))
    assert section(figures, TABLE) == section(again, TABLE)
