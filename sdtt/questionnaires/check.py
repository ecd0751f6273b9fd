"""Structural checks of survey files, for formats no tool can validate offline.

Qualtrics publishes no schema for ``.qsf`` files and LimeSurvey none for its
tab-separated import, so these checks test what an import depends on: that everything
referred to exists, counts agree and names are unique. ``sdtt questionnaire check FILE``
runs them on any file (also one edited by hand after export).
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.files import checked_text, parse_json, read_file_bytes

QSF_ELEMENT_KINDS = {"BL", "FL", "SO", "SCO", "PROJ", "STAT", "QC", "SQ", "RS", "QO", "PL", "SV"}
QSF_QUESTION_KINDS = {
    ("DB", "TB"),
    ("DB", "GRB"),
    ("MC", "SAVR"),
    ("MC", "SAHR"),
    ("MC", "DL"),
    ("MC", "MAVR"),
    ("TE", "SL"),
    ("TE", "ML"),
    ("TE", "ESTB"),
    ("TE", "FORM"),
    ("Timing", "PageTimer"),
    ("Meta", "Browser"),
}
FLOW_BLOCK_TYPES = {"Block", "Standard"}
CHECKED_SUFFIXES = (".qsf", ".json", ".txt", ".tsv")
CHECKED_TYPES = "Qualtrics .qsf, SurveyJS .json and LimeSurvey .txt/.tsv files"
"""What :func:`check_file` checks, for messages."""
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,19}$")
_ANSWER_CODE = re.compile(r"^[A-Za-z0-9]{1,5}$")


def _flow_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for key in ("Flow", "ElseFlow"):
        children = node.get(key)
        if isinstance(children, list):
            for child in children:
                if isinstance(child, dict):
                    yield from _flow_nodes(child)


def check_qsf(document: Any) -> list[str]:
    """Problems of a Qualtrics survey file (empty when it is consistent)."""
    if not isinstance(document, dict):
        return ["the file is not a JSON object"]
    problems: list[str] = []
    entry = document.get("SurveyEntry")
    elements = document.get("SurveyElements")
    if not isinstance(entry, dict) or not entry.get("SurveyID"):
        problems.append("SurveyEntry with a SurveyID is missing")
        entry = {}
    if not isinstance(elements, list):
        return [*problems, "SurveyElements is missing or not a list"]
    survey_id = entry.get("SurveyID")
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for index, element in enumerate(elements):
        if not isinstance(element, dict):
            problems.append(f"SurveyElements[{index}] is not an object")
            continue
        kind = element.get("Element")
        if kind not in QSF_ELEMENT_KINDS:
            problems.append(f"SurveyElements[{index}] has unknown Element {kind!r}")
        if survey_id and element.get("SurveyID") != survey_id:
            problems.append(
                f"SurveyElements[{index}] belongs to survey {element.get('SurveyID')!r}"
            )
        by_kind.setdefault(str(kind), []).append(element)
    for kind in ("BL", "FL", "QC"):
        if len(by_kind.get(kind, [])) != 1:
            problems.append(
                f"there must be exactly one {kind} element, found {len(by_kind.get(kind, []))}"
            )
    if problems:
        return problems

    questions: dict[str, dict[str, Any]] = {}
    tags: Counter[str] = Counter()
    for element in by_kind.get("SQ", []):
        payload = element.get("Payload")
        if not isinstance(payload, dict):
            problems.append(f"question {element.get('PrimaryAttribute')!r} has no payload")
            continue
        qid = payload.get("QuestionID")
        if qid != element.get("PrimaryAttribute"):
            problems.append(
                f"question {qid!r}: PrimaryAttribute {element.get('PrimaryAttribute')!r} differs"
            )
        if qid in questions:
            problems.append(f"question id {qid!r} is used twice")
        questions[str(qid)] = payload
        tag = payload.get("DataExportTag")
        if not isinstance(tag, str) or not tag:
            problems.append(f"question {qid!r} has no DataExportTag")
        else:
            tags[tag] += 1
        kind = (payload.get("QuestionType"), payload.get("Selector"))
        if kind not in QSF_QUESTION_KINDS:
            problems.append(f"question {qid!r} has unknown type/selector {kind}")
        if "QuestionText" not in payload:
            problems.append(f"question {qid!r} has no QuestionText")
        choices = payload.get("Choices")
        if payload.get("QuestionType") == "MC":
            if not isinstance(choices, dict) or not choices:
                problems.append(f"question {qid!r} has no choices")
                continue
            order = [str(key) for key in payload.get("ChoiceOrder", [])]
            if sorted(order) != sorted(choices):
                problems.append(f"question {qid!r}: ChoiceOrder does not list exactly its choices")
            next_id = payload.get("NextChoiceId")
            if not isinstance(next_id, int) or any(
                key.isdigit() and int(key) >= next_id for key in choices
            ):
                problems.append(f"question {qid!r}: NextChoiceId must exceed every choice id")
            recode = payload.get("RecodeValues")
            if recode is not None and set(recode) != set(choices):
                problems.append(f"question {qid!r}: RecodeValues do not match its choices")
    for tag, count in tags.items():
        if count > 1:
            problems.append(f"DataExportTag {tag!r} is used by {count} questions")

    declared_count = by_kind["QC"][0].get("SecondaryAttribute")
    if str(declared_count) != str(len(questions)):
        problems.append(f"QC says {declared_count} questions but the file has {len(questions)}")

    blocks_payload = by_kind["BL"][0].get("Payload")
    blocks = list(blocks_payload.values()) if isinstance(blocks_payload, dict) else blocks_payload
    if not isinstance(blocks, list):
        return [*problems, "the BL payload is not a list of blocks"]
    block_ids: set[str] = set()
    placed: Counter[str] = Counter()
    for block in blocks:
        block_id = block.get("ID")
        if block_id in block_ids:
            problems.append(f"block id {block_id!r} is used twice")
        block_ids.add(str(block_id))
        for item in block.get("BlockElements", []):
            if item.get("Type") == "Question":
                qid = str(item.get("QuestionID"))
                if qid not in questions:
                    problems.append(f"block {block_id!r} refers to missing question {qid!r}")
                placed[qid] += 1
            elif item.get("Type") != "Page Break":
                problems.append(
                    f"block {block_id!r} has an element of unknown type {item.get('Type')!r}"
                )
    for qid in questions:
        if placed[qid] != 1:
            problems.append(f"question {qid!r} is in {placed[qid]} blocks (must be exactly one)")

    flow = by_kind["FL"][0].get("Payload")
    if not isinstance(flow, dict) or flow.get("Type") != "Root":
        return [*problems, "the FL payload is not a Root flow"]
    flow_ids: Counter[str] = Counter()
    shown: set[str] = set()
    numbers: list[int] = []
    for node in _flow_nodes(flow):
        flow_id = str(node.get("FlowID"))
        flow_ids[flow_id] += 1
        if re.fullmatch(r"FL_\d+", flow_id):
            numbers.append(int(flow_id[3:]))
        if node.get("Type") in FLOW_BLOCK_TYPES:
            if node.get("ID") not in block_ids:
                problems.append(f"flow {flow_id} shows missing block {node.get('ID')!r}")
            shown.add(str(node.get("ID")))
        if node.get("Type") == "BlockRandomizer":
            children = node.get("Flow", [])
            subset = node.get("SubSet")
            if not str(subset).isdigit() or not 1 <= int(str(subset)) <= len(children):
                problems.append(
                    f"flow {flow_id}: SubSet {subset!r} does not fit its {len(children)} blocks"
                )
        if node.get("Type") == "EmbeddedData":
            for field in node.get("EmbeddedData", []):
                if not field.get("Field"):
                    problems.append(f"flow {flow_id}: an embedded data entry has no Field")
    for flow_id, uses in flow_ids.items():
        if uses > 1:
            problems.append(f"FlowID {flow_id} is used {uses} times")
    declared = flow.get("Properties", {}).get("Count")
    if numbers and isinstance(declared, int) and declared < max(numbers):
        problems.append(f"flow Properties.Count {declared} is below the highest FlowID number")
    for block in blocks:
        if (
            block.get("Type") != "Trash"
            and block.get("BlockElements")
            and block.get("ID") not in shown
        ):
            problems.append(f"block {block.get('ID')!r} has questions but is not in the flow")
    return problems


def check_limesurvey(text: str) -> list[str]:
    """Problems of a LimeSurvey tab-separated import file."""
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    problems: list[str] = []
    if not rows:
        return ["the file has no rows"]
    columns = set(rows[0])
    for required in ("class", "type/scale", "name", "text", "language"):
        if required not in columns:
            problems.append(f"column {required!r} is missing")
    if problems:
        return problems
    settings = {row["name"] for row in rows if row["class"] == "S"}
    if "language" not in settings:
        problems.append("no S row sets the survey language")
    if not any(row["class"] == "SL" and row["name"] == "surveyls_title" for row in rows):
        problems.append("no SL row gives the survey title")
    codes: Counter[str] = Counter()
    current: dict[str, str] | None = None
    answers: Counter[str] = Counter()
    in_group = False

    def close_question() -> None:
        if current is not None and current["type/scale"] in ("L", "!") and not answers:
            problems.append(f"list question {current['name']!r} has no answer options")

    for number, row in enumerate(rows, start=2):
        kind = row["class"]
        if kind not in ("S", "SL", "G", "Q", "SQ", "A"):
            problems.append(f"line {number}: unknown class {kind!r}")
        if kind == "G":
            close_question()
            current, answers, in_group = None, Counter(), True
        elif kind == "Q":
            close_question()
            if not in_group:
                problems.append(f"line {number}: question before any group")
            if not _CODE.match(row["name"]):
                problems.append(
                    f"line {number}: question code {row['name']!r} must be a letter and up to "
                    "19 letters or digits"
                )
            codes[row["name"]] += 1
            current, answers = row, Counter()
        elif kind == "A":
            if current is None:
                problems.append(f"line {number}: answer option outside a question")
                continue
            if not _ANSWER_CODE.match(row["name"]):
                problems.append(
                    f"line {number}: answer code {row['name']!r} must be 1-5 letters or digits"
                )
            answers[row["name"]] += 1
            if answers[row["name"]] > 1:
                problems.append(
                    f"line {number}: answer code {row['name']!r} repeats in question "
                    f"{current['name']!r}"
                )
        for value in row.values():
            if value is not None and ("\n" in value or "\r" in value):
                problems.append(f"line {number}: a field holds a line break")
                break
    close_question()
    for code, uses in codes.items():
        if uses > 1:
            problems.append(f"question code {code!r} is used {uses} times")
    return problems


def check_surveyjs(survey: Any) -> list[str]:
    """Basic problems of a SurveyJS survey JSON (the Node tests run SurveyJS itself)."""
    if not isinstance(survey, dict) or not isinstance(survey.get("pages"), list):
        return ["the survey has no 'pages' list"]
    problems: list[str] = []
    names: Counter[str] = Counter()

    def walk(elements: Any) -> None:
        for element in elements if isinstance(elements, list) else []:
            names[str(element.get("name"))] += 1
            kind = element.get("type")
            if kind == "panel":
                walk(element.get("elements"))
                continue
            # "slider": the belief question of reveal mode.
            known = ("html", "radiogroup", "dropdown", "text", "comment", "checkbox", "slider")
            if kind not in known:
                problems.append(f"element {element.get('name')!r} has unexpected type {kind!r}")
            if kind in ("radiogroup", "dropdown") and not element.get("choices"):
                problems.append(f"question {element.get('name')!r} has no choices")

    for page in survey["pages"]:
        names[str(page.get("name"))] += 1
        walk(page.get("elements", []))
    for name, uses in names.items():
        if uses > 1:
            problems.append(f"name {name!r} is used {uses} times (pages and questions must differ)")
    return problems


def check_file(path: str | Path) -> list[str]:
    """Check a ``.qsf``, LimeSurvey ``.txt``/``.tsv`` or SurveyJS ``.json`` file.

    Raises :class:`InputError` for any other file type, naming the types it checks.
    """
    path = Path(path)
    try:
        text = read_file_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text.", path=path, hint="Re-save it as UTF-8.") from None
    text = checked_text(text, path, what="survey")
    suffix = path.suffix.lower()
    if suffix not in CHECKED_SUFFIXES:
        raise InputError(
            f"'questionnaire check' cannot check {suffix or 'extension-less'} files.",
            path=path,
            hint=f"It checks {CHECKED_TYPES}; give one of those (jsPsych pages, CSV and "
            "printable exports are checked by sdtt's tests, not by this command).",
        )
    if suffix in (".txt", ".tsv"):
        header = text.split("\n", 1)[0].rstrip("\r").split("\t")
        if not {"class", "name"} <= set(header):
            raise InputError(
                "is not a LimeSurvey tab-separated file (its first line names no 'class' "
                "and 'name' columns).",
                path=path,
                line=1,
                hint="Give the .txt file sdtt or LimeSurvey exported.",
            )
        try:
            return check_limesurvey(text)
        except csv.Error as error:
            raise InputError(
                f"is not a valid tab-separated file ({error}).",
                path=path,
                hint="Export it from sdtt or LimeSurvey again.",
            ) from None
    document = parse_json(text, path)
    if suffix == ".qsf" or (isinstance(document, dict) and "SurveyElements" in document):
        return check_qsf(document)
    return check_surveyjs(document)
