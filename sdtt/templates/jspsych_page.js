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
