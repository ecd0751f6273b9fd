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
