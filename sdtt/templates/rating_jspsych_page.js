(function () {
  "use strict";
  const task = JSON.parse(document.getElementById("task-data").textContent);
  const params = new URLSearchParams(window.location.search);
  const jsPsych = initJsPsych({ on_finish: finish });
  const judgeId = params.get("PROLIFIC_PID") || jsPsych.randomization.randomID(12);
  jsPsych.data.addProperties({ judge_id: judgeId, task: task.id });
  let shown = task.pairs;
  if (task.forms.length) {
    const asked = parseInt(params.get("form") || "", 10);
    const index = asked >= 1 && asked <= task.forms.length
      ? asked - 1 : Math.floor(Math.random() * task.forms.length);
    const byId = {};
    for (const pair of task.pairs) { byId[pair.id] = pair; }
    shown = task.forms[index].map((id) => byId[id]);
    jsPsych.data.addProperties({ design_form: index + 1 });
  }
  const timeline = [{
    type: jsPsychHtmlButtonResponse,
    stimulus: "<h2>" + task.title_html + "</h2>" + task.intro_html,
    choices: ["Start"],
    data: { role: "intro" },
  }];
  timeline.push({
    timeline: [{
      type: jsPsychHtmlButtonResponse,
      stimulus: () => jsPsych.evaluateTimelineVariable("view") +
        '<p class="question">' + task.question_html + "</p>",
      choices: task.labels,
      button_html: (label) => '<button class="jspsych-btn choice">' + label + "</button>",
      button_layout: "flex",
      data: { role: "rating", question: jsPsych.timelineVariable("id") },
      on_finish: (data) => {
        data.answer = data.response === null ? null : task.values[data.response];
      },
    }],
    timeline_variables: shown,
    randomize_order: true,
  });

  function finish() {
    const csv = jsPsych.data.get().csv();
    window.studyResultCsv = csv;
    const display = jsPsych.getDisplayElement();
    const blob = new Blob([csv], { type: "text/csv" });
    display.innerHTML = '<div class="jspsych-content">' + task.end_html +
      '<p><a class="jspsych-btn" id="download" download="ratings-' +
      encodeURIComponent(judgeId) + '.csv">Download your answers (CSV)</a></p></div>';
    display.querySelector("#download").href = URL.createObjectURL(blob);
    window.studyDone = true;
  }

  const mode = params.get("simulate");
  if (mode === "data-only" || mode === "visual") {
    jsPsych.simulate(timeline, mode);
  } else {
    jsPsych.run(timeline);
  }
})();
