"""A survey tool is one SurveyTool record: registering one is all the commands need.

The toy tool below is registered in ``TOOLS`` and nowhere else, yet ``questionnaire
export`` (plain and reveal mode), ``responses import`` and ``align export/import`` offer
and use it. What it reads is the same answers as the long CSV in another shape, so its
judgements and ratings must equal those of the CSV reader.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path

import pytest

from sdtt.align.ratings import read_ratings
from sdtt.align.task import save_rating_task
from sdtt.cli import main
from sdtt.surveys.answer_files import JudgeAnswers
from sdtt.surveys.tool import ExportOptions, RatingFormat, RevealExport, SurveyTool
from sdtt.surveys.tools import MODULES, TOOLS
from sdtt.tasks.judgements import Judgement, read_judgements
from sdtt.tasks.questionnaire import Questionnaire, save_study
from sdtt.tasks.rating_task import RatingAnswer, RatingTask
from tests.align.helpers import build
from tests.questionnaires.helpers import fixture_study

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def _write(questionnaire: Questionnaire, options: ExportOptions) -> str:
    return json.dumps({"pairs": [item.id for item in questionnaire.items]}) + "\n"


def _write_reveal(questionnaire: Questionnaire, options: ExportOptions) -> str:
    return json.dumps({"reveal": [item.id for item in questionnaire.items]}) + "\n"


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _read(path: Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    judges: dict[str, JudgeAnswers] = {}
    for number, row in enumerate(_rows(path), start=1):
        judge = judges.setdefault(
            row["judge"], JudgeAnswers(row["judge"], where=f"{path}:{number}")
        )
        judge.answers[row["question"]] = row["answer"]
        if row.get("seconds"):
            judge.seconds[row["question"]] = float(row["seconds"])
    return list(judges.values())


def _write_rating(task: RatingTask) -> dict[str, str]:
    return {"toy-rating.json": json.dumps([pair.id for pair in task.pairs])}


def _read_rating(path: Path, task: RatingTask) -> list[RatingAnswer]:
    return [(r["judge"], r["question"], r["answer"], None, "") for r in _rows(path)]


TOY = SurveyTool(
    "toy",
    "toy survey JSON",
    "toy.json",
    _write,
    read=_read,
    answers="toy answers as JSON Lines",
    reveal=RevealExport("toy-reveal.json", _write_reveal),
    rating=RatingFormat(_write_rating, _read_rating),
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The toy tool registered, and the working directory a fresh folder."""
    monkeypatch.setitem(TOOLS, TOY.name, TOY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _as_toy(long_csv: Path, toy_file: Path) -> None:
    """The long CSV's answers in the toy tool's shape."""
    with long_csv.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    lines = [
        json.dumps(
            {
                "judge": row["judge_id"],
                "question": row["question"],
                "answer": row["answer"],
                "seconds": row.get("seconds", ""),
            }
        )
        for row in rows
    ]
    toy_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _without_source(judgements: list[Judgement]) -> list[dict[str, object]]:
    return [j.model_dump(exclude={"source"}) for j in judgements]


def test_a_registered_tool_is_exported_and_imported_by_the_commands(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(toy / "study", study.questionnaire, study.key)
    assert main(["questionnaire", "export", "study", "--format", "toy", "--out", "plain"]) == 0
    shown = json.loads((toy / "plain" / "toy.json").read_text(encoding="utf-8"))
    assert shown == {"pairs": [item.id for item in study.questionnaire.items]}
    # Reveal mode's default formats are the tools that can reveal: the toy among them.
    assert main(["questionnaire", "export", "study", "--reveal", "--out", "reveal"]) == 0
    assert (toy / "reveal" / "toy-reveal.json").exists()
    assert not (toy / "reveal" / "toy.json").exists()

    _as_toy(FIXTURES / "generic-answers.csv", toy / "answers.jsonl")
    for name, answers in (
        ("toy", toy / "answers.jsonl"),
        ("csv", FIXTURES / "generic-answers.csv"),
    ):
        argv = ["responses", "import", str(answers), "--study", "study", "--format", name]
        assert main([*argv, "--out", f"{name}.jsonl"]) == 0
    toy_judgements = read_judgements(toy / "toy.jsonl")
    assert toy_judgements and {j.source for j in toy_judgements} == {"toy:answers.jsonl"}
    assert _without_source(toy_judgements) == _without_source(read_judgements(toy / "csv.jsonl"))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["responses", "import", "--help"])
    assert "toy: toy answers as JSON Lines" in " ".join(capsys.readouterr().out.split())


def test_a_registered_tool_fields_rating_tasks(toy: Path) -> None:
    built = build(toy)
    save_rating_task(toy / "task", built.task, built.key)
    assert main(["align", "export", "task", "--format", "toy"]) == 0
    listed = json.loads((toy / "task" / "export" / "toy-rating.json").read_text(encoding="utf-8"))
    assert listed == [pair.id for pair in built.task.pairs]

    rows = [
        ("judge1", pair.id, str(1 + number % 7)) for number, pair in enumerate(built.task.pairs)
    ]
    (toy / "answers.jsonl").write_text(
        "".join(json.dumps({"judge": j, "question": q, "answer": a}) + "\n" for j, q, a in rows),
        encoding="utf-8",
    )
    with (toy / "answers.csv").open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([("judge_id", "question", "answer"), *rows])
    for name, answers in (("toy", "answers.jsonl"), ("csv", "answers.csv")):
        out = f"{name}-ratings.jsonl"
        assert main(["align", "import", "task", answers, "--format", name, "--out", out]) == 0
    toy_ratings = read_ratings(toy / "toy-ratings.jsonl")
    csv_ratings = read_ratings(toy / "csv-ratings.jsonl")
    assert [(r.pair_id, r.rating) for r in toy_ratings] == [(q, int(a)) for _, q, a in rows]
    assert [(r.pair_id, r.rating) for r in toy_ratings] == [
        (r.pair_id, r.rating) for r in csv_ratings
    ]


def test_a_reader_comes_with_its_help_text() -> None:
    with pytest.raises(ValueError, match="toy"):
        SurveyTool("toy", "toy survey JSON", "toy.json", _write, read=_read)
    with pytest.raises(ValueError, match="toy"):
        SurveyTool("toy", "toy survey JSON", "toy.json", _write, answers="toy answers")


def test_no_two_tools_write_the_same_file() -> None:
    study = fixture_study().questionnaire
    built_files = [tool.filename for tool in TOOLS.values()]
    built_files += [tool.reveal.filename for tool in TOOLS.values() if tool.reveal]
    assert len(built_files) == len(set(built_files))
    assert all(tool.write(study, ExportOptions()) for tool in TOOLS.values())


KNOWN_NAMES: dict[str, str] = {
    # build_demo_questionnaire's default: what the demo writes, a choice rather than a
    # table of what tools can do.
    "sdtt/questionnaires/pipeline.py": "the demo's export formats",
}
"""Modules allowed to name several survey tools together, each with its reason."""


def _tool_name_tables(path: Path) -> list[int]:
    """Lines of ``path`` that list two or more tool names or compare with one."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            values, least = node.elts, 2
        elif isinstance(node, ast.Dict):
            values, least = [key for key in node.keys if key is not None], 2
        elif isinstance(node, ast.Compare):
            values, least = [node.left, *node.comparators], 1
        else:
            continue
        named = [v for v in values if isinstance(v, ast.Constant) and v.value in TOOLS]
        if len(named) >= least:
            lines.append(node.lineno)
    return lines


def test_only_the_registry_knows_which_tools_exist() -> None:
    """Lists of tool names, or checks for one tool by name, outside ``tools.py`` would be
    a second table a new tool has to be added to."""
    found = {}
    for path in sorted((ROOT / "sdtt").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "sdtt/surveys/tools.py":
            continue
        lines = _tool_name_tables(path)
        if lines:
            found[relative] = lines
    assert set(found) == set(KNOWN_NAMES), found


def test_architecture_names_the_files_of_a_survey_tool() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    bullet = text.split("- **A survey tool**", 1)[1].split("\n- **", 1)[0]
    paths = re.findall(r"`(sdtt/[^`]+)`", bullet)
    assert "sdtt/surveys/tools.py" in paths
    assert "sdtt/surveys/<tool>.py" in paths
    for path in paths:
        if "<tool>" in path:
            for module in MODULES:
                assert (ROOT / path.replace("<tool>", module.__name__.rsplit(".", 1)[1])).exists()
        else:
            assert (ROOT / path).exists(), path
