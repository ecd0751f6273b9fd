"""Qualtrics: the survey file (``.qsf``, JSON) and its response CSV.

The file: import it with "Create project > From a file". An introduction block
(instructions, page break, demographics), one block per pair (the chats as a
descriptive-text question, the judgement and topic check as single-answer
multiple-choice questions, and a page timer), and a final block with the strategy
question. The survey flow captures Prolific's URL parameters as embedded data, then shows
the pair blocks through a block randomizer (every judge gets every pair, in a random
order) when the study randomises order. Under a judge design, a randomizer draws ``k``
pairs per judge (evenly presented, recorded as embedded data ``<pair>show``) and a second
one shows the drawn pairs and the catch pairs in a random order, each drawn pair as one
of its two views (bot first or second, evenly); so a catch pair sits at a random place,
like any pair. Qualtrics balances the counts as judges arrive; it cannot keep two pairs
that share a conversation apart, which the per-form files (``form-NN/qualtrics.qsf``)
do. Question export tags are sdtt's question names, so response columns are the pair
ids; choice recode values are the option positions (1, 2, ...).

The responses ("Data & Analysis > Export data > CSV") have three header rows: column
names (export tags), question texts, and ``{"ImportId": ...}`` objects. Both "use choice
text" and "use numeric values" exports work. Preview, test and spam responses and
unfinished ones are kept but excluded. The judge id is ``PROLIFIC_PID`` when captured,
else ``ResponseId``; the response time of a pair is its page timer's "Page Submit".

Qualtrics publishes no schema for ``.qsf`` files, so :func:`check` tests what an import
depends on: that everything referred to exists, counts agree and names are unique.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.seeds import seeded_rng
from sdtt.surveys.answer_files import JudgeAnswers, read_csv_rows
from sdtt.surveys.tool import SurveyTool
from sdtt.tasks.layout import escape_html, pair_html, paragraphs_html, plain_label
from sdtt.tasks.questionnaire import Question, Questionnaire

FILENAME = "qualtrics.qsf"
MEDIA_TYPE = "application/json"
PROLIFIC_FIELDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
TIMER_CHOICES = ("First Click", "Last Click", "Page Submit", "Click Count")
_ID_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def qualtrics_id(prefix: str, seed: str) -> str:
    """A Qualtrics-style id (``SV_``/``BL_`` and 15 characters) derived from ``seed``."""
    digest = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big")
    chars = []
    for _ in range(15):
        digest, index = divmod(digest, len(_ID_ALPHABET))
        chars.append(_ID_ALPHABET[index])
    return prefix + "".join(chars)


class _Builder:
    def __init__(self, survey_id: str) -> None:
        self.survey_id = survey_id
        self.questions: list[dict[str, Any]] = []
        self.flow_count = 1

    def flow_id(self) -> str:
        self.flow_count += 1
        return f"FL_{self.flow_count}"

    def add(self, payload: dict[str, Any], description: str) -> str:
        qid = f"QID{len(self.questions) + 1}"
        payload = {
            **payload,
            "QuestionID": qid,
            "QuestionDescription": description[:100],
            "Language": [],
            "DataVisibility": {"Private": False, "Hidden": False},
        }
        payload.setdefault("Configuration", {"QuestionDescriptionOption": "UseText"})
        self.questions.append(
            {
                "SurveyID": self.survey_id,
                "Element": "SQ",
                "PrimaryAttribute": qid,
                "SecondaryAttribute": description[:100],
                "TertiaryAttribute": None,
                "Payload": payload,
            }
        )
        return qid

    def text(self, tag: str, html: str, description: str) -> str:
        return self.add(
            {
                "QuestionText": html,
                "DefaultChoices": False,
                "DataExportTag": tag,
                "QuestionType": "DB",
                "Selector": "TB",
                "ChoiceOrder": [],
                "Validation": {"Settings": {"Type": "None"}},
                "GradingData": [],
                "NextChoiceId": 1,
                "NextAnswerId": 1,
            },
            description,
        )

    def question(self, question: Question) -> str:
        force = "ON" if question.required else "OFF"
        common = {
            "QuestionText": escape_html(question.text),
            "DefaultChoices": False,
            "DataExportTag": question.name,
            "Validation": {
                "Settings": {"ForceResponse": force, "ForceResponseType": "ON", "Type": "None"}
            },
            "GradingData": [],
        }
        if question.choices is None:
            return self.add(
                {
                    **common,
                    "QuestionType": "TE",
                    "Selector": "ESTB" if question.multiline else "SL",
                    "Configuration": {
                        "QuestionDescriptionOption": "UseText",
                        "InputWidth": 680,
                        "InputHeight": 120 if question.multiline else 29,
                    },
                    "DefaultChoices": False,
                    "NextChoiceId": 4,
                    "NextAnswerId": 1,
                    "SearchSource": {"AllowFreeResponse": "false"},
                },
                plain_label(question.text),
            )
        keys = [str(i) for i in range(1, len(question.choices) + 1)]
        return self.add(
            {
                **common,
                "QuestionType": "MC",
                "Selector": "SAVR",
                "SubSelector": "TX",
                "Choices": {
                    key: {"Display": escape_html(choice.label)}
                    for key, choice in zip(keys, question.choices, strict=True)
                },
                "ChoiceOrder": keys,
                "RecodeValues": {key: key for key in keys},
                "NextChoiceId": len(keys) + 1,
                "NextAnswerId": 1,
            },
            plain_label(question.text),
        )

    def timer(self, tag: str) -> str:
        return self.add(
            {
                "QuestionText": "Timing",
                "DefaultChoices": False,
                "DataExportTag": tag,
                "QuestionType": "Timing",
                "Selector": "PageTimer",
                "Configuration": {
                    "QuestionDescriptionOption": "UseText",
                    "MinSeconds": "0",
                    "MaxSeconds": "0",
                },
                "Choices": {
                    str(i): {"Display": name} for i, name in enumerate(TIMER_CHOICES, start=1)
                },
                "GradingData": [],
                "NextChoiceId": len(TIMER_CHOICES) + 1,
                "NextAnswerId": 1,
            },
            "Timing",
        )


def _element(
    survey_id: str, element: str, primary: str, payload: Any, secondary: Any = None
) -> dict[str, Any]:
    return {
        "SurveyID": survey_id,
        "Element": element,
        "PrimaryAttribute": primary,
        "SecondaryAttribute": secondary,
        "TertiaryAttribute": None,
        "Payload": payload,
    }


def _block(
    block_id: str, kind: str, description: str, elements: list[dict[str, str]]
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "Type": kind,
        "Description": description,
        "ID": block_id,
        "BlockElements": elements,
    }
    if kind == "Standard":
        block["SubType"] = ""
    return block


def _q(qid: str) -> dict[str, str]:
    return {"Type": "Question", "QuestionID": qid}


def _shown_field(pair: str) -> str:
    """Embedded data field that the draw sets to 1 for a pair a judge will see."""
    return pair + "show"


def _is_one(field: str) -> dict[str, Any]:
    """Branch logic: embedded data ``field`` equals 1."""
    return {
        "0": {
            "0": {
                "LogicType": "EmbeddedField",
                "LeftOperand": field,
                "Operator": "EqualTo",
                "RightOperand": "1",
                "_HiddenExpression": False,
                "Type": "Expression",
                "Description": f"If {field} Is Equal to 1",
            },
            "Type": "If",
        },
        "Type": "BooleanExpression",
    }


def _design_flow(
    questionnaire: Questionnaire, nodes: dict[str, dict[str, Any]], builder: _Builder
) -> list[dict[str, Any]]:
    """Pair blocks under a judge design, assigned by Qualtrics itself.

    First a randomizer draws ``k`` pairs per judge (evenly presented) by setting an
    embedded data field per drawn pair. Then a second randomizer presents, in a random
    order, every pair and the catch pairs: a pair is a group whose branch shows it only
    when it was drawn, through a randomizer that picks one of its two views (bot first
    or second, evenly). So each judge sees ``k`` pairs and the catch pairs, and a catch
    pair is as likely at any place as a test pair; no block can be drawn twice.
    """
    views: dict[str, list[dict[str, Any]]] = {}
    catches: list[dict[str, Any]] = []
    for item in questionnaire.items:
        if item.pair is None:
            catches.append(nodes[item.id])
        else:
            views.setdefault(item.pair, []).append(nodes[item.id])
    per_judge = len(questionnaire.forms[0].items) - len(catches)
    draws = [
        {
            "Type": "EmbeddedData",
            "FlowID": builder.flow_id(),
            "EmbeddedData": [
                {
                    "Description": _shown_field(pair),
                    "Type": "Custom",
                    "Field": _shown_field(pair),
                    "VariableType": "String",
                    "DataVisibility": [],
                    "AnalyzeText": False,
                    "Value": "1",
                }
            ],
        }
        for pair in views
    ]
    draw = {
        "Type": "BlockRandomizer",
        "FlowID": builder.flow_id(),
        "SubSet": per_judge,
        "EvenPresentation": True,
        "Flow": draws,
    }
    groups: list[dict[str, Any]] = []
    for number, (pair, pair_views) in enumerate(views.items(), start=1):
        branch = {
            "Type": "Branch",
            "FlowID": builder.flow_id(),
            "Description": "New Branch",
            "BranchLogic": _is_one(_shown_field(pair)),
            "Flow": [
                {
                    "Type": "BlockRandomizer",
                    "FlowID": builder.flow_id(),
                    "SubSet": 1,
                    "EvenPresentation": True,
                    "Flow": pair_views,
                }
            ],
        }
        groups.append(
            {
                "Type": "Group",
                "FlowID": builder.flow_id(),
                "Description": f"Pair {number}",
                "Flow": [branch],
            }
        )
    order = {
        "Type": "BlockRandomizer",
        "FlowID": builder.flow_id(),
        "SubSet": len(groups) + len(catches),
        "EvenPresentation": True,
        "Flow": [*groups, *catches],
    }
    return [draw, order]


def survey_file(questionnaire: Questionnaire) -> dict[str, Any]:
    """The QSF document as a dict."""
    survey_id = qualtrics_id("SV_", questionnaire.id)
    builder = _Builder(survey_id)
    blocks: list[dict[str, Any]] = []

    intro_elements = [
        _q(builder.text("intro", paragraphs_html(questionnaire.intro), "Instructions"))
    ]
    if questionnaire.demographics:
        intro_elements.append({"Type": "Page Break"})
        intro_elements += [_q(builder.question(q)) for q in questionnaire.demographics]
    intro_id = qualtrics_id("BL_", questionnaire.id + ":intro")
    blocks.append(_block(intro_id, "Default", "Introduction", intro_elements))

    pair_blocks: list[str] = []
    block_of: dict[str, str] = {}
    items = list(questionnaire.items)
    if questionnaire.forms:
        # Question ids (QID1, QID2, ...) are in the survey page's HTML, and the catch pairs
        # are built last: in item order their ids would always be a judge's highest.
        seeded_rng(questionnaire.id, "blocks").shuffle(items)
    for number, item in enumerate(items, start=1):
        elements = [
            _q(builder.text(item.view_name, pair_html(item), f"Pair {number} chats")),
            _q(builder.question(item.judgement)),
        ]
        if item.topic is not None:
            elements.append(_q(builder.question(item.topic)))
        elements.append(_q(builder.timer(item.time_name)))
        block_id = qualtrics_id("BL_", f"{questionnaire.id}:{item.id}")
        blocks.append(_block(block_id, "Standard", f"Pair {number}", elements))
        pair_blocks.append(block_id)
        block_of[item.id] = block_id

    final_id: str | None = None
    if questionnaire.strategy is not None:
        final_id = qualtrics_id("BL_", questionnaire.id + ":final")
        blocks.append(
            _block(final_id, "Standard", "Final", [_q(builder.question(questionnaire.strategy))])
        )
    blocks.append(
        _block(
            qualtrics_id("BL_", questionnaire.id + ":trash"),
            "Trash",
            "Trash / Unused Questions",
            [],
        )
    )

    flow: list[dict[str, Any]] = []
    if questionnaire.capture_prolific:
        flow.append(
            {
                "Type": "EmbeddedData",
                "FlowID": builder.flow_id(),
                "EmbeddedData": [
                    {
                        "Description": name,
                        "Type": "Recipient",
                        "Field": name,
                        "VariableType": "String",
                        "DataVisibility": [],
                        "AnalyzeText": False,
                    }
                    for name in PROLIFIC_FIELDS
                ],
            }
        )
    flow.append({"ID": intro_id, "Type": "Block", "FlowID": builder.flow_id()})
    pair_nodes = [{"ID": b, "Type": "Standard", "FlowID": builder.flow_id()} for b in pair_blocks]
    if questionnaire.forms:
        flow += _design_flow(
            questionnaire,
            dict(zip(block_of, pair_nodes, strict=True)),
            builder,
        )
    elif questionnaire.randomise_order and len(pair_nodes) > 1:
        flow.append(
            {
                "Type": "BlockRandomizer",
                "FlowID": builder.flow_id(),
                "SubSet": len(pair_nodes),
                "EvenPresentation": True,
                "Flow": pair_nodes,
            }
        )
    else:
        flow += pair_nodes
    if final_id is not None:
        flow.append({"ID": final_id, "Type": "Standard", "FlowID": builder.flow_id()})

    options: dict[str, Any] = {
        "BackButton": "false",
        "SaveAndContinue": "true",
        "SurveyProtection": "PublicSurvey",
        "BallotBoxStuffingPrevention": "false",
        "NoIndex": "Yes",
        "SecureResponseFiles": "true",
        "SurveyExpiration": "None",
        "SurveyTermination": "DefaultMessage",
        "Header": "",
        "Footer": "",
        "ProgressBarDisplay": "Text",
        "PartialData": "+1 week",
        "ValidationMessage": "",
        "PreviousButton": "",
        "NextButton": " → ",
        "SurveyTitle": escape_html(questionnaire.title),
        "NewScoring": 1,
    }
    if questionnaire.completion_url:
        options["SurveyTermination"] = "Redirect"
        options["EOSRedirectURL"] = questionnaire.completion_url

    elements = [
        _element(survey_id, "BL", "Survey Blocks", blocks),
        _element(
            survey_id,
            "FL",
            "Survey Flow",
            {
                "Flow": flow,
                "Properties": {"Count": builder.flow_count},
                "FlowID": "FL_1",
                "Type": "Root",
            },
        ),
        _element(survey_id, "SO", "Survey Options", options),
        _element(survey_id, "QC", "Survey Question Count", None, str(len(builder.questions))),
        *builder.questions,
    ]
    return {
        "SurveyEntry": {
            "SurveyID": survey_id,
            # Qualtrics shows names and titles as HTML and pipes ${...} in them.
            "SurveyName": escape_html(questionnaire.title),
            "SurveyDescription": None,
            "SurveyOwnerID": "UR_" + survey_id[3:],
            "SurveyBrandID": "",
            "DivisionID": None,
            "SurveyLanguage": "EN",
            "SurveyActiveResponseSet": "RS_" + survey_id[3:],
            "SurveyStatus": "Inactive",
            "SurveyStartDate": "0000-00-00 00:00:00",
            "SurveyExpirationDate": "0000-00-00 00:00:00",
            "SurveyCreationDate": "2000-01-01 00:00:00",
            "CreatorID": "UR_" + survey_id[3:],
            "LastModified": "2000-01-01 00:00:00",
            "LastAccessed": "0000-00-00 00:00:00",
            "LastActivated": "0000-00-00 00:00:00",
            "Deleted": None,
        },
        "SurveyElements": elements,
    }


def export(questionnaire: Questionnaire) -> str:
    """The QSF text."""
    return json.dumps(survey_file(questionnaire), indent=2, ensure_ascii=False) + "\n"


PREVIEW_STATUSES = {"survey preview", "survey test", "spam", "1", "2", "8", "9"}


def _finished(value: str) -> bool:
    return value.strip().lower() in ("", "true", "1")


def read_answers(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a Qualtrics response CSV."""
    path = Path(path)
    rows = read_csv_rows(path, delimiters=",\t")
    if len(rows) < 3 or not rows[2] or not rows[2][0].lstrip().startswith('{"ImportId"'):
        raise InputError(
            "does not look like a Qualtrics response export (the third row should hold "
            '{"ImportId": ...} entries).',
            path=path,
            hint="Export from Data & Analysis as CSV, keeping the header rows.",
        )
    header = [name.strip() for name in rows[0]]
    column = {name: index for index, name in enumerate(header)}
    known = set(questionnaire.question_names())
    if not known & set(header):
        raise InputError(
            "has no column of this questionnaire's questions.",
            path=path,
            hint="Was it exported from the survey imported from this study's qualtrics.qsf?",
        )
    respondents: list[JudgeAnswers] = []
    for line, row in enumerate(rows[3:], start=4):
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            index = column.get(name)
            return row[index].strip() if index is not None and index < len(row) else ""

        answers = {name: cell(name) for name in header if name in known}
        seconds: dict[str, float] = {}
        for item in questionnaire.items:
            submit = cell(f"{item.time_name}_Page Submit")
            try:
                if submit:
                    seconds[item.id] = float(submit)
            except ValueError:
                raise InputError(
                    f"page timer {submit!r} is not a number.",
                    path=path,
                    line=line,
                    field=f"{item.time_name}_Page Submit",
                ) from None
        flags = []
        if cell("Status").lower() in PREVIEW_STATUSES:
            flags.append("preview, test or spam response")
        if not _finished(cell("Finished")):
            flags.append("did not finish")
        judge_id = cell(PROLIFIC_FIELDS[0]) or cell("ResponseId") or f"{path.stem}-{line}"
        respondents.append(
            JudgeAnswers(
                judge_id=judge_id,
                answers=answers,
                seconds=seconds,
                flags=flags,
                where=f"{path}:{line}",
                numeric_choices=True,
            )
        )
    return respondents


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


def _flow_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for key in ("Flow", "ElseFlow"):
        children = node.get(key)
        if isinstance(children, list):
            for child in children:
                if isinstance(child, dict):
                    yield from _flow_nodes(child)


def check(document: Any) -> list[str]:
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


ENTRIES = (
    SurveyTool(
        "qualtrics",
        "Qualtrics survey file (.qsf)",
        FILENAME,
        lambda questionnaire, options: export(questionnaire),
        read=read_answers,
        answers="Qualtrics response CSV with its three header rows",
        design_native=True,
        draws_blind=True,
    ),
)
"""Qualtrics as :mod:`sdtt.surveys.tools` lists it."""
