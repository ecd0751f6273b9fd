// Runs a SurveyJS questionnaire exported by sdtt on your own web page.
//
// Load survey-core, survey-js-ui and this file, then call
//   runStudySurvey(surveyJson, document.getElementById("surveyElement"), saveResult);
// It records Prolific's URL parameters (PROLIFIC_PID, STUDY_ID, SESSION_ID) and the
// seconds spent on each screen (each pair), and on completion calls saveResult(result)
// with the survey data plus those fields. Store `result` as JSON (one object per judge,
// or an array of them); `sdtt responses import --format surveyjs` reads it.
//
// The pair order needs no help from this script: the exported JSON has SurveyJS shuffle
// the pairs for every judge by itself (when the study randomises order).
"use strict";

function runStudySurvey(surveyJson, element, saveResult) {
  const json = JSON.parse(JSON.stringify(surveyJson));
  const params = new URLSearchParams(window.location.search);
  const prolific = {};
  for (const name of ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"]) {
    if (params.get(name)) { prolific[name] = params.get(name); }
  }

  const survey = new Survey.Model(json);
  const seconds = {};
  let pageName = null;
  let enteredAt = performance.now();
  const leavePage = () => {
    if (pageName !== null) {
      seconds[pageName] = (seconds[pageName] || 0) + (performance.now() - enteredAt) / 1000;
    }
  };
  const enterPage = (name) => {
    pageName = name;
    enteredAt = performance.now();
  };
  // One pair per screen: the current element (a pair's panel) names the screen.
  const screenName = () =>
    survey.currentElementName || (survey.currentPage ? survey.currentPage.name : null);
  enterPage(screenName());
  survey.onCurrentPageChanged.add(() => { leavePage(); enterPage(screenName()); });
  survey.onComplete.add((sender) => {
    leavePage();
    pageName = null;
    const rounded = {};
    for (const name of Object.keys(seconds)) { rounded[name] = Math.round(seconds[name] * 1000) / 1000; }
    saveResult(Object.assign({}, sender.data, prolific, { page_seconds: rounded }));
  });
  survey.render(element);
  return survey;
}

if (typeof module !== "undefined") { module.exports = { runStudySurvey }; }
