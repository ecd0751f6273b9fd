// The reveal page: each pair grows one turn at a time, with a belief slider after every
// turn, then the topic check.
runStudyPage(({ study, jsPsych, timeline, shown, designed, button }) => {
  if (!designed && study.randomise_order) {
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
});
