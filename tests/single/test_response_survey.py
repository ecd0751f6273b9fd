"""Word associations and captions through the single-item survey, offline: responses
(machine from a mock model, human from CSV, catch) -> ``items`` -> ``sdtt single build``
-> SurveyJS export -> fabricated judges' answers imported -> scored by class.

The fabricated judges answer at random (seeded); the test knows who wrote what only from
what it gave (the human CSV, the mock's scripted words, catch items repeating something)
and reads what each judge saw from the exported survey, so its own count of p(H|H) and
p(M|M) does not go through sdtt's key.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import random
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from sdtt.cli import main
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.model import get_model
from sdtt.single.items import read_items
from sdtt.single.response import write_responses
from sdtt.single.wordassoc import machine_associations

HUMAN = {"bread": "butter", "cold": "winter", "run": "fast", "happy": "smile", "book": "read",
         "river": "water"}  # fmt: skip
MACHINE = {"bread": "toast", "cold": "freeze", "run": "jog", "happy": "joy", "book": "novel",
           "river": "stream"}  # fmt: skip
VIEW = re.compile(r"<b>(\w+):</b> <span[^>]*>(.*?)</span>")
IMAGE = re.compile(r'<img src="([^"]+)"')


def sdtt(capsys: pytest.CaptureFixture[str], *args: object) -> str:
    code = main([str(arg) for arg in args])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 0, text
    return " ".join(text.split())


def panels(export: Path) -> list[list[tuple[str, str]]]:
    """Per SurveyJS form: each item's verdict question name and the HTML a judge sees."""
    forms = []
    for path in sorted(export.glob("single-surveyjs-form-*.json")):
        survey = json.loads(path.read_text(encoding="utf-8"))
        (items_page,) = [page for page in survey["pages"] if page["name"] == "items"]
        forms.append(
            [
                (panel["elements"][1]["name"], panel["elements"][0]["html"])
                for panel in items_page["elements"]
            ]
        )
    return forms


def judge_and_count(
    forms: list[list[tuple[str, str]]], truth_of: Callable[[str], str], judges_per_form: int
) -> tuple[list[dict[str, str]], dict[str, list[str]]]:
    """Random verdicts from ``judges_per_form`` judges per form (SurveyJS results), and
    what was said per truth ("human", "machine", "catch") by the test's own reckoning."""
    rng = random.Random(7)
    results: list[dict[str, str]] = []
    said: dict[str, list[str]] = {"human": [], "machine": [], "catch": []}
    for number, form in enumerate(forms, start=1):
        for judge in range(judges_per_form):
            result = {"PROLIFIC_PID": f"judge{number}-{judge}"}
            for name, shown in form:
                verdict = rng.choice(["human", "machine"])
                result[name] = verdict
                said[truth_of(shown)].append(verdict)
            results.append(result)
    return results, said


def score_rows(
    capsys: pytest.CaptureFixture[str], study: Path, tmp_path: Path
) -> dict[str, dict[str, str]]:
    rows_file = tmp_path / "rows.csv"
    out = sdtt(capsys, "single", "score", study, "--bootstrap", "50", "--csv", rows_file)
    rows = list(csv.DictReader(rows_file.read_text(encoding="utf-8").splitlines()))
    # Items without cuts: one row per class, no per-cut row repeating it.
    assert {r["cut"] for r in rows} == {"all"}
    table = {r["class"]: r for r in rows if r["judges"] == "human"}
    table["out"] = {"text": out}
    return table


def check_scores(table: dict[str, dict[str, str]], said: dict[str, list[str]]) -> None:
    """p(H|H) and p(M|M) as the test counted them, with Wilson intervals from statsmodels,
    and the catch items reported as attention checks."""
    hh = said["human"].count("human")
    mm = said["machine"].count("machine")
    p_hh, p_mm = hh / len(said["human"]), mm / len(said["machine"])
    for klass, (hits, total, column) in {
        "all": (hh, len(said["human"]), "p_hh"),
        "H": (hh, len(said["human"]), "p_hh"),
        "M": (mm, len(said["machine"]), "p_mm"),
    }.items():
        row = table[klass]
        assert float(row[column]) == pytest.approx(hits / total), klass
        low, high = proportion_confint(hits, total, method="wilson")
        assert float(row[f"{column}_low"]) == pytest.approx(low)
        assert float(row[f"{column}_high"]) == pytest.approx(high)
    assert float(table["all"]["p_mm"]) == pytest.approx(p_mm)
    assert float(table["all"]["detectability"]) == pytest.approx((p_hh + p_mm) / 2)
    # Catch answers count only as attention checks, never as trials.
    assert int(table["all"]["trials"]) == len(said["human"]) + len(said["machine"])
    caught = said["catch"].count("machine")
    assert said["catch"], "every form shows a catch item"
    assert (
        f"catch items' machines called machines: human: {caught} of {len(said['catch'])}"
        in (table["out"]["text"])
    )


@pytest.mark.trio
async def test_word_associations_are_judged_in_a_survey_and_scored_by_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cues = tmp_path / "cues.txt"
    cues.write_text("\n".join(HUMAN) + "\n", encoding="utf-8")

    def script(prompt: Prompt, config: GenerateConfig) -> str:
        return MACHINE[prompt.task.rsplit(" ", 1)[-1].rstrip("?")].title() + "."

    async with get_model("mock/test", replies=script) as model:
        write_responses(tmp_path / "machine.jsonl", await machine_associations(model, list(HUMAN)))
    humans = tmp_path / "humans.csv"
    rows = [f"{cue},{word},p{n}" for n, (cue, word) in enumerate(HUMAN.items())]
    # A stop word: disqualified by post-processing, never shown.
    humans.write_text("cue,association,participant\n" + "\n".join([*rows, "bread,the,p9"]) + "\n")
    sdtt(capsys, "wordassoc", "import", humans, "--cues", cues, "-o", tmp_path / "human.jsonl")
    sdtt(capsys, "wordassoc", "catch", "--count", "2", "--cues", cues, "-o", tmp_path / "c.jsonl")
    items = tmp_path / "items.jsonl"
    out = sdtt(capsys, "wordassoc", "items", *(tmp_path / f for f in ("machine.jsonl",
               "human.jsonl", "c.jsonl")), "-o", items)  # fmt: skip
    assert "12 items (6 human, 6 machine) on 6 stimuli, and 2 catch items" in out
    assert "Left out, disqualified by post-processing: 1 stop word" in out
    catch = [item for item in read_items(items) if item.catch]
    assert [item.truth for item in catch] == [{"Association": "machine"}] * 2

    study = tmp_path / "study"
    out = sdtt(capsys, "single", "build", items, "-o", study, "--forms", "4", "--per-judge",
               "5", "--catch-per-judge", "1")  # fmt: skip
    assert "12 items from 6 sources (6 H, 6 M), 2 catch items, 4 form(s) of 6" in out
    sdtt(capsys, "single", "export", study, "--format", "surveyjs")
    forms = panels(study / "export")

    def shown(view: str) -> dict[str, str]:
        return {label: html.unescape(text) for label, text in VIEW.findall(view)}

    for form in forms:
        cues_shown = [shown(view)["Cue"] for _, view in form]
        # One response per cue a judge: never two answers to one cue.
        assert len(cues_shown) == 6 and len(set(cues_shown)) == 6

    def truth_of(view: str) -> str:
        pair = shown(view)
        if pair["Association"] == pair["Cue"]:
            return "catch"
        return "human" if HUMAN[pair["Cue"]] == pair["Association"] else "machine"

    results, said = judge_and_count(forms, truth_of, judges_per_form=3)
    assert all(view.count("Association") == 1 for form in forms for _, view in form)
    answers = tmp_path / "results.json"
    answers.write_text(json.dumps(results), encoding="utf-8")
    out = sdtt(capsys, "single", "import", study, answers, "--format", "surveyjs")
    assert "72 answer(s) from 12 judge(s)" in out
    check_scores(score_rows(capsys, study, tmp_path), said)


def png(red: int, green: int, blue: int, size: int = 8) -> bytes:
    """A small one-colour PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    raw = b"".join(b"\x00" + bytes((red, green, blue)) * size for _ in range(size))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


CAPTIONS = {
    "0001.png": "A red square on its own",
    "0002.png": "green, like <b>grass</b> & {moss}",
    "0003.png": "Blue as the sea",
    "0004.png": "grey square i think",
}
COLOURS = {"0001.png": (200, 0, 0), "0002.png": (0, 160, 0), "0003.png": (0, 0, 200),
           "0004.png": (120, 120, 120)}  # fmt: skip


def test_captions_are_judged_in_a_survey_with_their_images_embedded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = tmp_path / "images"
    images.mkdir()
    for name, colour in COLOURS.items():
        (images / name).write_bytes(png(*colour))
    humans = tmp_path / "humans.csv"
    with humans.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "caption"])
        writer.writerows(CAPTIONS.items())
    sdtt(capsys, "captions", "generate", "--model", "mock/short", "--images", images, "-o",
         tmp_path / "machine.jsonl")  # fmt: skip
    sdtt(capsys, "captions", "import", humans, "--images", images, "-o", tmp_path / "h.jsonl")
    sdtt(
        capsys, "captions", "catch", "--count", "2", "--images", images, "-o", tmp_path / "c.jsonl"
    )
    items = tmp_path / "items.jsonl"
    out = sdtt(capsys, "captions", "items", *(tmp_path / f for f in ("machine.jsonl", "h.jsonl",
               "c.jsonl")), "--images", images, "-o", items)  # fmt: skip
    assert "8 items (4 human, 4 machine) on 4 stimuli, and 2 catch items" in out

    study = tmp_path / "study"
    sdtt(capsys, "single", "build", items, "-o", study, "--forms", "3", "--per-judge", "3",
         "--catch-per-judge", "1")  # fmt: skip
    sdtt(capsys, "single", "export", study, "--format", "surveyjs")
    forms = panels(study / "export")
    by_bytes = {(images / name).read_bytes(): name for name in COLOURS}

    def shown(view: str) -> tuple[str, str]:
        (src,) = IMAGE.findall(view)
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix), "images are embedded, the survey is self-contained"
        (caption,) = [html.unescape(text) for label, text in VIEW.findall(view)]
        return by_bytes[base64.b64decode(src[len(prefix) :])], caption

    for form in forms:
        names = [shown(view)[0] for _, view in form]
        assert len(names) == 4 and len(set(names)) == 4
    # The caption is text: its markup is escaped, braces too (SurveyJS placeholders).
    views = [view for form in forms for _, view in form]
    planted = next(view for view in views if "grass" in view)
    assert "<b>grass" not in planted and "{moss}" not in planted

    def truth_of(view: str) -> str:
        name, caption = shown(view)
        if len(set(caption.split())) == 1 and len(caption.split()) == 4:
            return "catch"
        return "human" if CAPTIONS[name] == caption else "machine"

    results, said = judge_and_count(forms, truth_of, judges_per_form=4)
    answers = tmp_path / "results.json"
    answers.write_text(json.dumps(results), encoding="utf-8")
    out = sdtt(capsys, "single", "import", study, answers, "--format", "surveyjs")
    assert "48 answer(s) from 12 judge(s)" in out
    check_scores(score_rows(capsys, study, tmp_path), said)


def test_linked_images_need_an_http_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images = tmp_path / "images"
    images.mkdir()
    (images / "0001.png").write_bytes(png(1, 2, 3))
    sdtt(
        capsys, "captions", "catch", "--count", "1", "--images", images, "-o", tmp_path / "c.jsonl"
    )
    out = sdtt(capsys, "captions", "items", tmp_path / "c.jsonl", "--image-base",
               "https://example.org/pics/", "-o", tmp_path / "items.jsonl")  # fmt: skip
    (item,) = read_items(tmp_path / "items.jsonl")
    assert item.image == "https://example.org/pics/0001.png"
    assert "0 items" in out
    code = main(["captions", "items", str(tmp_path / "c.jsonl"), "--image-base", "pics",
                 "-o", str(tmp_path / "other.jsonl")])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "--image-base 'pics' is not an http(s) URL" in " ".join(err.split())
    assert not (tmp_path / "other.jsonl").exists()
