"""jsPsych: one self-contained HTML page (jsPsych 8 and its plugins inlined).

Host it anywhere static (a university web space, JATOS, Pavlovia, cognition.run) or open
it from disk. Trials: instructions, demographics (``survey-multi-choice`` and
``survey-text``), per pair a judgement and a topic check (``html-button-response``, the
pairs in random order per judge when the study randomises order), the strategy question.

Every trial's data carries ``role`` (intro, demographics, judgement, topic, strategy),
``item`` (the pair id) and ``answer`` (the option code), plus ``judge_id`` and the
Prolific URL parameters on every row. At the end the page shows a download button for
the CSV, posts the CSV to ``data_url`` when the export was given one, and links to the
Prolific completion URL. ``?simulate=data-only`` (or ``visual``) runs jsPsych's
simulation instead of a judge, for testing. Under a judge design the page shows one
form's pairs in the form's order: ``?form=N`` picks form N (give each judge group its own
link), otherwise a form is drawn at random; rows then carry ``design_form``.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from sdtt.questionnaires.layout import escape_html, pair_html, paragraphs_html
from sdtt.questionnaires.questionnaire import Question, Questionnaire

FILENAME = "jspsych.html"
MEDIA_TYPE = "text/html"
SCRIPT_FILES = (
    "jspsych.min.js",
    "plugin-html-button-response.min.js",
    "plugin-survey-multi-choice.min.js",
    "plugin-survey-text.min.js",
)

_PAGE_CSS = """
.jspsych-content { max-width: 960px; text-align: left; }
.jspsych-btn.choice { white-space: normal; max-width: 40em; text-align: left; margin: 6px; }
.question { font-weight: bold; margin: 16px 0 8px 0; }
"""

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

  const values = {};
  for (const item of study.items) {
    values[item.id] = item.judgement_codes;
    if (item.topic_codes) { values[item.id + "topic"] = item.topic_codes; }
  }
  const button = (label) => '<button class="jspsych-btn choice">' + label + "</button>";
  const answer = (data) => {
    const codes = values[data.question];
    data.answer = codes && data.response !== null ? codes[data.response] : null;
  };

  const timeline = [];
  timeline.push({
    type: jsPsychHtmlButtonResponse,
    stimulus: "<h2>" + study.title_html + "</h2>" + study.intro_html,
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
  const judgement = {
    type: jsPsychHtmlButtonResponse,
    stimulus: () =>
      jsPsych.evaluateTimelineVariable("view") +
      '<p class="question">' + jsPsych.evaluateTimelineVariable("judgement_html") + "</p>",
    choices: () => jsPsych.evaluateTimelineVariable("judgement_labels"),
    button_html: button,
    button_layout: "flex",
    data: {
      role: "judgement",
      item: jsPsych.timelineVariable("id"),
      question: jsPsych.timelineVariable("id"),
    },
    on_finish: answer,
  };
  const topic = {
    timeline: [{
      type: jsPsychHtmlButtonResponse,
      stimulus: () =>
        '<p class="question">' + jsPsych.evaluateTimelineVariable("topic_html") + "</p>",
      choices: () => jsPsych.evaluateTimelineVariable("topic_labels"),
      button_html: button,
      button_layout: "flex",
      data: {
        role: "topic",
        item: jsPsych.timelineVariable("id"),
        question: jsPsych.timelineVariable("topic_name"),
      },
      on_finish: answer,
    }],
    conditional_function: () => jsPsych.evaluateTimelineVariable("topic_labels") !== null,
  };
  let shown = study.items;
  if (study.forms.length) {
    // A judge design: ?form=N picks a form (one link per judge group), else a random one.
    const asked = parseInt(params.get("form") || "", 10);
    const index = asked >= 1 && asked <= study.forms.length
      ? asked - 1 : Math.floor(Math.random() * study.forms.length);
    const byId = {};
    for (const item of study.items) { byId[item.id] = item; }
    shown = study.forms[index].map((id) => byId[id]);
    jsPsych.data.addProperties({ design_form: index + 1 });
  }
  timeline.push({
    timeline: [judgement, topic],
    timeline_variables: shown,
    randomize_order: study.randomise_order && !study.forms.length,
  });
  if (study.strategy) {
    timeline.push({
      type: jsPsychSurveyText,
      questions: [study.strategy],
      data: { role: "strategy" },
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
        method: "POST",
        headers: { "Content-Type": "text/csv" },
        body: csv,
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


def _vendor(name: str) -> str:
    return (resources.files("sdtt.questionnaires.exporters") / "vendor" / name).read_text(
        encoding="utf-8"
    )


def _script_safe(text: str) -> str:
    """JavaScript that cannot close its ``<script>`` element early.

    Only ``</script`` and ``<!--`` matter to the HTML parser; inside JS strings, template
    literals and regular expressions a backslash before ``/`` or ``!`` changes nothing.
    """
    text = re.sub(r"</(script)", lambda m: "<\\/" + m.group(1), text, flags=re.IGNORECASE)
    return text.replace("<!--", "<\\!--")


def _json_for_html(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (no tag or comment can start)."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _survey_question(question: Question) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": question.name,
        "prompt": escape_html(question.text),
        "required": question.required,
    }
    if question.choices is not None:
        entry["options"] = [escape_html(c.label) for c in question.choices]
    elif question.multiline:
        entry["rows"] = 5
        entry["columns"] = 60
    return entry


def study_data(questionnaire: Questionnaire, data_url: str | None = None) -> dict[str, Any]:
    """What the page's script reads: texts (already escaped) and the pairs."""
    items = []
    for item in questionnaire.items:
        topic = item.topic
        items.append(
            {
                "id": item.id,
                "view": pair_html(item),
                "judgement_html": escape_html(item.judgement.text),
                "judgement_labels": [escape_html(c.label) for c in item.judgement.choices or ()],
                "judgement_codes": [c.value for c in item.judgement.choices or ()],
                "topic_name": None if topic is None else topic.name,
                "topic_html": None if topic is None else escape_html(topic.text),
                "topic_labels": None
                if topic is None
                else [escape_html(c.label) for c in topic.choices or ()],
                "topic_codes": None if topic is None else [c.value for c in topic.choices or ()],
            }
        )
    return {
        "id": questionnaire.id,
        "title_html": escape_html(questionnaire.title),
        "intro_html": paragraphs_html(questionnaire.intro),
        "end_html": paragraphs_html(questionnaire.end_text),
        "choice_demographics": [
            _survey_question(q) for q in questionnaire.demographics if q.choices is not None
        ],
        "text_demographics": [
            _survey_question(q) for q in questionnaire.demographics if q.choices is None
        ],
        "items": items,
        "forms": [form.items for form in questionnaire.forms],
        "strategy": None
        if questionnaire.strategy is None
        else _survey_question(questionnaire.strategy),
        "randomise_order": questionnaire.randomise_order,
        "capture_prolific": questionnaire.capture_prolific,
        "completion_url": questionnaire.completion_url,
        "data_url": data_url,
    }


def export(questionnaire: Questionnaire, *, data_url: str | None = None) -> str:
    """The self-contained page."""
    scripts = "\n".join(
        f"<script>\n{_script_safe(_vendor(name))}</script>" for name in SCRIPT_FILES
    )
    data = _json_for_html(study_data(questionnaire, data_url))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape_html(questionnaire.title)}</title>\n"
        f"<style>\n{_vendor('jspsych.css')}{_PAGE_CSS}</style>\n"
        f"{scripts}\n</head>\n<body>\n"
        f'<script type="application/json" id="study-data">{data}</script>\n'
        f"<script>{_PAGE_SCRIPT}</script>\n</body>\n</html>\n"
    )
