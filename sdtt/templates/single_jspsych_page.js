// The single-item page: per item one screen with the item, a human/machine question per
// speaker (and its confidence) and the topic check, then the optional reason below the
// item again. A row's
// `answer` holds the screen's answers as JSON of question name to option code.
runStudyPage(({ study, jsPsych, timeline, shown }) => {
  const byId = {};
  for (const item of shown) { byId[item.id] = item; }
  const codesOf = (data) => {
    const item = byId[data.item];
    const answers = {};
    for (const question of item.questions) {
      const given = data.response ? data.response[question.name] : undefined;
      const index = question.options.indexOf(given);
      answers[question.name] = index < 0 ? null : item.codes[question.name][index];
    }
    data.answer = JSON.stringify(answers);
  };
  const screen = {
    type: jsPsychSurveyMultiChoice,
    preamble: () => jsPsych.evaluateTimelineVariable("view"),
    questions: () => jsPsych.evaluateTimelineVariable("questions"),
    data: {
      role: "single",
      item: jsPsych.timelineVariable("id"),
      question: jsPsych.timelineVariable("id"),
    },
    on_finish: codesOf,
  };
  const reason = {
    timeline: [{
      type: jsPsychSurveyText,
      // The item stays in view while the judge says why.
      preamble: () => jsPsych.evaluateTimelineVariable("view"),
      questions: () => [{
        name: jsPsych.evaluateTimelineVariable("reason_name"),
        prompt: study.reason_prompt,
        rows: 3,
        required: false,
      }],
      data: {
        role: "reason",
        item: jsPsych.timelineVariable("id"),
        question: jsPsych.timelineVariable("reason_name"),
      },
      on_finish: (data) => {
        const text = data.response ? data.response[data.question] : "";
        data.answer = text || "";
      },
    }],
    conditional_function: () => jsPsych.evaluateTimelineVariable("reason_name") !== null,
  };
  timeline.push({
    timeline: [screen, reason],
    timeline_variables: shown,
    randomize_order: true,
  });
});
