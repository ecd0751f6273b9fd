// What every jsPsych questionnaire page shares: who the judge is, the introduction and
// demographics, the form of a judge design, the strategy question, and the end page with
// the CSV download, the upload and the completion link. A page adds the trials of its
// pairs through addPairs({ study, jsPsych, timeline, shown, designed, button }).
function runStudyPage(addPairs) {
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
    stimulus: "<h2>" + study.title_html + "</h2>" + study.intro_html + (study.note_html || ""),
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
  const designed = study.forms.length > 0;
  if (designed) {
    // A judge design: ?form=N picks a form (one link per judge group), else a random one.
    const asked = parseInt(params.get("form") || "", 10);
    const index = asked >= 1 && asked <= study.forms.length
      ? asked - 1 : Math.floor(Math.random() * study.forms.length);
    shown = unscramble(study.forms[index][0], study.forms[index][1]);
    jsPsych.data.addProperties({ design_form: index + 1 });
  }

  // A form's pairs, stored XOR-ed with its own key stream (mulberry32 seeded with the
  // FNV-1a hash of the key, as the exporter writes them), so that no pair looks the
  // same in two forms of the page source.
  function unscramble(key, data) {
    let state = 2166136261;
    for (let i = 0; i < key.length; i++) {
      state = Math.imul(state ^ key.charCodeAt(i), 16777619) >>> 0;
    }
    const raw = atob(data);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) {
      state = (state + 0x6D2B79F5) >>> 0;
      let t = Math.imul(state ^ (state >>> 15), state | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      bytes[i] = raw.charCodeAt(i) ^ ((t ^ (t >>> 14)) & 255);
    }
    return JSON.parse(new TextDecoder().decode(bytes));
  }
  addPairs({ study, jsPsych, timeline, shown, designed, button });
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
}
