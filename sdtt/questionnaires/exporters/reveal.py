"""Reveal mode: each pair shown turn by turn, a 0-100 belief slider after every turn.

Only SurveyJS (its ``slider`` question) and jsPsych (``html-slider-response``) can do
this without custom code; every other format refuses with :class:`RevealNotSupported`.
Step ``t`` of a pair shows the first ``t`` turns of both chats (see
:mod:`sdtt.beliefs.reveal`) and asks for the belief named ``<pair id>belief<t>``: 100
means User B of chat 1 is surely the person (so chat 2 holds the AI), 0 that chat 1
holds the AI. The last step also asks the pair's topic check, when the study has one.
There is no separate A/B question: the last belief is the verdict.

SurveyJS shows one step per screen and the pairs in the built order (it shuffles
elements within a page, and a pair's steps must stay in sequence); use a judge design
(forms) to balance the order across judges. The jsPsych page shuffles the pairs per
judge itself when the study randomises order.
"""

from __future__ import annotations

import json
from typing import Any

from sdtt.beliefs.reveal import reveal_turns, revealed
from sdtt.errors import InputError
from sdtt.questionnaires.exporters import jspsych, surveyjs
from sdtt.questionnaires.layout import escape_html, pair_html, paragraphs_html
from sdtt.questionnaires.questionnaire import PairItem, Questionnaire

REVEAL_FORMATS = ("surveyjs", "jspsych")
REVEAL_FILENAMES = {"surveyjs": "surveyjs-reveal.json", "jspsych": "jspsych-reveal.html"}
BELIEF_TEXT = (
    "So far, how likely is it that User B in chat 1 is the person (and User B in chat 2 "
    "the AI)? 0 = chat 1's User B is surely the AI, 100 = chat 2's User B is surely the AI."
)
SLIDER_LABELS = ("Chat 1 is the AI", "Not sure", "Chat 2 is the AI")
REVEAL_NOTE = (
    "Each pair of chats is shown turn by turn. After every turn, set the slider to how "
    "likely you think it is that User B in chat 1 is the person. You cannot go back."
)
STEP_SUFFIX = "step"
BELIEF_SUFFIX = "belief"


class RevealNotSupported(InputError):
    """The chosen survey tool cannot show a pair turn by turn with a slider."""


def check_reveal_format(format_name: str) -> None:
    """Refuse reveal mode for a tool that cannot do it, saying which tools can."""
    if format_name not in REVEAL_FORMATS:
        raise RevealNotSupported(
            f"reveal mode is not supported by this tool ({format_name}).",
            hint="Export reveal mode to " + " or ".join(REVEAL_FORMATS) + ".",
        )


def belief_name(pair_id: str, turn: int) -> str:
    """The name of the belief asked after ``turn`` turns of a pair."""
    return f"{pair_id}{BELIEF_SUFFIX}{turn}"


def step_name(pair_id: str, turn: int) -> str:
    """The name of the screen (SurveyJS panel) showing step ``turn`` of a pair."""
    return f"{pair_id}{STEP_SUFFIX}{turn}"


def _step_header(turn: int, turns: int) -> str:
    return f'<p style="font-weight:bold;margin:0 0 8px 0;">Turn {turn} of {turns}</p>'


def _steps(item: PairItem) -> list[tuple[int, str]]:
    turns = reveal_turns(item)
    return [
        (turn, _step_header(turn, turns) + pair_html(revealed(item, turn)))
        for turn in range(1, turns + 1)
    ]


def surveyjs_definition(questionnaire: Questionnaire) -> dict[str, Any]:
    """The SurveyJS survey of reveal mode: a page per pair, a panel per step."""
    survey = surveyjs.survey_definition(questionnaire)
    pages = [page for page in survey["pages"] if page["name"] != surveyjs.PAIRS_PAGE]
    final = [page for page in pages if page["name"] == "final"]
    pages = [page for page in pages if page["name"] != "final"]
    pages[0]["elements"].append(
        {"type": "html", "name": "revealnote", "html": paragraphs_html(REVEAL_NOTE)}
    )
    for item in questionnaire.items:
        panels = []
        steps = _steps(item)
        for turn, html in steps:
            elements: list[dict[str, Any]] = [
                {"type": "html", "name": f"{item.id}view{turn}", "html": html},
                {
                    "type": "slider",
                    "name": belief_name(item.id, turn),
                    "title": BELIEF_TEXT,
                    "min": 0,
                    "max": 100,
                    "step": 1,
                    "isRequired": True,
                },
            ]
            if turn == len(steps) and item.topic is not None:
                elements.append(surveyjs._question(item.topic))
            panels.append(
                {
                    "type": "panel",
                    "name": step_name(item.id, turn),
                    "questionOrder": "initial",
                    "elements": elements,
                }
            )
        pages.append({"name": item.id + "pair", "questionOrder": "initial", "elements": panels})
    survey["pages"] = pages + final
    return survey


def export_surveyjs(questionnaire: Questionnaire) -> str:
    """The SurveyJS JSON text of reveal mode."""
    return json.dumps(surveyjs_definition(questionnaire), indent=2, ensure_ascii=False) + "\n"


_PAGE_SCRIPT = r"""
(function () {
  "use strict";
  const study = JSON.parse(document.getElementById("study-data").textContent);
  const params = new URLSearchParams(window.location.search);
  const jsPsych = initJsPsych({ on_finish: finish });
  const prolific = {};
  if (study.capture_prolific) {
    for (const name of ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"]) {
      prolific[name] = params.get(name) || "";
    }
  }
  const judgeId = prolific.PROLIFIC_PID || jsPsych.randomization.randomID(12);
  jsPsych.data.addProperties(Object.assign({ judge_id: judgeId, form: study.id }, prolific));
  const button = (label) => '<button class="jspsych-btn choice">' + label + "</button>";

  const timeline = [];
  timeline.push({
    type: jsPsychHtmlButtonResponse,
    stimulus: "<h2>" + study.title_html + "</h2>" + study.intro_html + study.note_html,
    choices: ["Start"],
    data: { role: "intro" },
  });
  if (study.choice_demographics.length) {
    timeline.push({
      type: jsPsychSurveyMultiChoice,
      preamble: "<h3>About you</h3>",
      questions: study.choice_demographics,
      data: { role: "demographics" },
    });
  }
  if (study.text_demographics.length) {
    timeline.push({
      type: jsPsychSurveyText,
      questions: study.text_demographics,
      data: { role: "demographics" },
    });
  }
  let shown = study.items;
  if (study.forms.length) {
    const asked = parseInt(params.get("form") || "", 10);
    const index = asked >= 1 && asked <= study.forms.length
      ? asked - 1 : Math.floor(Math.random() * study.forms.length);
    const byId = {};
    for (const item of study.items) { byId[item.id] = item; }
    shown = study.forms[index].map((id) => byId[id]);
    jsPsych.data.addProperties({ design_form: index + 1 });
  } else if (study.randomise_order) {
    shown = jsPsych.randomization.shuffle(shown);
  }
  for (const item of shown) {
    for (const step of item.steps) {
      timeline.push({
        type: jsPsychHtmlSliderResponse,
        stimulus: step.view + '<p class="question">' + study.belief_html + "</p>",
        labels: study.labels,
        min: 0, max: 100, step: 1, slider_start: 50,
        require_movement: true,
        slider_width: 600,
        button_label: "Next",
        data: { role: "belief", item: item.id, question: step.name, turn: step.turn },
      });
    }
    if (item.topic_labels) {
      timeline.push({
        type: jsPsychHtmlButtonResponse,
        stimulus: '<p class="question">' + item.topic_html + "</p>",
        choices: item.topic_labels,
        button_html: button,
        button_layout: "flex",
        data: { role: "topic", item: item.id, question: item.topic_name },
        on_finish: (data) => {
          data.answer = data.response !== null ? item.topic_codes[data.response] : null;
        },
      });
    }
  }
  if (study.strategy) {
    timeline.push({
      type: jsPsychSurveyText, questions: [study.strategy], data: { role: "strategy" },
    });
  }

  function finish() {
    const csv = jsPsych.data.get().csv();
    window.studyResultCsv = csv;
    const display = jsPsych.getDisplayElement();
    const blob = new Blob([csv], { type: "text/csv" });
    const parts = [study.end_html];
    parts.push('<p><a class="jspsych-btn" id="download" download="responses-' +
      encodeURIComponent(judgeId) + '.csv">Download your answers (CSV)</a></p>');
    if (study.completion_url) {
      parts.push('<p><a class="jspsych-btn" id="complete">Finish</a></p>');
    }
    display.innerHTML = '<div class="jspsych-content">' + parts.join("") + "</div>";
    display.querySelector("#download").href = URL.createObjectURL(blob);
    if (study.completion_url) {
      display.querySelector("#complete").href = study.completion_url;
    }
    if (study.data_url) {
      window.studyUpload = fetch(study.data_url, {
        method: "POST", headers: { "Content-Type": "text/csv" }, body: csv,
      }).catch(() => null);
    }
    window.studyDone = true;
  }

  const mode = params.get("simulate");
  if (mode === "data-only" || mode === "visual") {
    jsPsych.simulate(timeline, mode);
  } else {
    jsPsych.run(timeline);
  }
})();
"""

JSPSYCH_SCRIPTS = (*jspsych.SCRIPT_FILES, "plugin-html-slider-response.min.js")


def jspsych_data(questionnaire: Questionnaire, data_url: str | None = None) -> dict[str, Any]:
    """What the reveal page's script reads: the ordinary study data plus each pair's steps."""
    data = jspsych.study_data(questionnaire, data_url)
    by_id = {item.id: item for item in questionnaire.items}
    for entry in data["items"]:
        item = by_id[entry["id"]]
        entry["steps"] = [
            {"turn": turn, "name": belief_name(item.id, turn), "view": html}
            for turn, html in _steps(item)
        ]
        # The reveal page asks no A/B question and shows no whole pair.
        for name in ("view", "judgement_html", "judgement_labels", "judgement_codes"):
            del entry[name]
    data["belief_html"] = escape_html(BELIEF_TEXT)
    data["labels"] = [escape_html(label) for label in SLIDER_LABELS]
    data["note_html"] = paragraphs_html(REVEAL_NOTE)
    return data


def export_jspsych(questionnaire: Questionnaire, *, data_url: str | None = None) -> str:
    """The self-contained jsPsych page of reveal mode."""
    scripts = "\n".join(
        f"<script>\n{jspsych._script_safe(jspsych._vendor(name))}</script>"
        for name in JSPSYCH_SCRIPTS
    )
    data = jspsych._json_for_html(jspsych_data(questionnaire, data_url))
    title = escape_html(questionnaire.title)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n"
        f"<style>\n{jspsych._vendor('jspsych.css')}{jspsych._PAGE_CSS}</style>\n"
        f"{scripts}\n</head>\n<body>\n"
        f'<script type="application/json" id="study-data">{data}</script>\n'
        f"<script>{_PAGE_SCRIPT}</script>\n</body>\n</html>\n"
    )
