// Runs a SurveyJS questionnaire exported by sdtt on your own web page.
//
// Load survey-core, survey-js-ui and this file, then call
//   runStudySurvey(surveyJson, document.getElementById("surveyElement"), saveResult);
// It shuffles the pair pages for each judge (SurveyJS cannot shuffle pages itself),
// records Prolific's URL parameters (PROLIFIC_PID, STUDY_ID, SESSION_ID) and the seconds
// spent on each page, and on completion calls saveResult(result) with the survey data
// plus those fields. Store `result` as JSON (one object per judge, or an array of them);
// `sdtt responses import --format surveyjs` reads it.
//
// Options (4th argument): { shuffle: true } to shuffle pair pages (default true).
"use strict";

function runStudySurvey(surveyJson, element, saveResult, options) {
  const settings = Object.assign({ shuffle: true }, options || {});
  const json = JSON.parse(JSON.stringify(surveyJson));
  const isPairPage = (page) => /^p[a-z0-9]+page$/.test(page.name);
  const slots = [];
  json.pages.forEach((page, index) => { if (isPairPage(page)) slots.push(index); });
  const pairPages = slots.map((index) => json.pages[index]);
  if (settings.shuffle) {
    for (let i = pairPages.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [pairPages[i], pairPages[j]] = [pairPages[j], pairPages[i]];
    }
  }
  slots.forEach((index, k) => {
    json.pages[index] = pairPages[k];
    json.pages[index].title = "Pair " + (k + 1) + " of " + pairPages.length;
  });

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
  const enterPage = (page) => {
    pageName = page ? page.name : null;
    enteredAt = performance.now();
  };
  enterPage(survey.currentPage);
  survey.onCurrentPageChanged.add((sender, event) => { leavePage(); enterPage(event.newCurrentPage); });
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
