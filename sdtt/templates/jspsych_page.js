// The ordinary questionnaire page: per pair the A/B judgement and the topic check.
runStudyPage(({ study, jsPsych, timeline, shown, designed, button }) => {
  const values = {};
  for (const item of shown) {
    values[item.id] = item.judgement_codes;
    if (item.topic_codes) { values[item.id + "topic"] = item.topic_codes; }
  }
  const answer = (data) => {
    const codes = values[data.question];
    data.answer = codes && data.response !== null ? codes[data.response] : null;
  };

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
  timeline.push({
    timeline: [judgement, topic],
    timeline_variables: shown,
    randomize_order: study.randomise_order && !designed,
  });
});
