// Drives sdtt's exports in headless Chromium (one browser launch for everything).
// Usage: node browser.cjs TASKS.json  -> prints one JSON report on stdout.
//
// TASKS.json: {
//   "surveyjs": {"json": FILE, "host": FILE, "runs": [{"params": "?PROLIFIC_PID=x",
//                "choice": "A", "seed": 3, "standalone": true}]},
//                // click through the real SurveyJS UI; "seed" fixes SurveyJS's shuffle,
//                // "standalone" runs the JSON without sdtt's host script
//   "jspsych": {"page": FILE, "simulate": [QUERY, ...], "click": [QUERY, ...]},
//   "pages": [FILE, ...],                   // static pages: just load and inspect
//   "fragments": [HTML, ...]                // HTML fragments put into a blank page
// }
// Every page load records whether a planted script ran (window.__pwned) and the page's
// visible text, so the caller can check chat text stayed text.
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const MODULES = path.join(__dirname, "node_modules");
const FLAGS = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

async function newPage(context) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  // Only local files may load; anything else would mean an export reaches out.
  const blocked = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") || url.startsWith("data:") || url.startsWith("blob:")) {
      return route.continue();
    }
    blocked.push(url);
    return route.abort();
  });
  return { page, errors, blocked };
}

async function inspect(page) {
  return page.evaluate(() => ({
    pwned: window.__pwned === undefined ? null : window.__pwned,
    text: document.body ? document.body.innerText : "",
  }));
}

async function runSurveyJs(context, task) {
  const json = JSON.parse(fs.readFileSync(task.json, "utf8"));
  const results = [];
  for (const run of task.runs) {
    const { page, errors, blocked } = await newPage(context);
    const hostPage = path.join(path.dirname(task.json), "surveyjs-test-host.html");
    fs.writeFileSync(hostPage, "<!DOCTYPE html><html><head><meta charset='utf-8'></head>" +
      "<body><div id='surveyElement'></div></body></html>");
    await page.goto("file://" + hostPage + (run.params || ""));
    await page.addStyleTag({ path: path.join(MODULES, "survey-core/survey-core.fontless.css") });
    await page.addScriptTag({ path: path.join(MODULES, "survey-core/survey.core.js") });
    await page.addScriptTag({ path: path.join(MODULES, "survey-js-ui/survey-js-ui.js") });
    if (run.standalone) {
      // The exported JSON alone, as any SurveyJS page would run it (no sdtt host script).
      await page.evaluate(([surveyJson, seed]) => {
        window.surveyResult = null;
        delete surveyJson.navigateToUrl;  // stay on the page to read the result
        const survey = new Survey.Model(surveyJson);
        if (seed !== null) { survey.randomSeed = seed; }
        survey.onComplete.add((sender) => { window.surveyResult = sender.data; });
        survey.render(document.getElementById("surveyElement"));
        window.survey = survey;
      }, [json, run.seed === undefined ? null : run.seed]);
    } else {
      await page.addScriptTag({ path: task.host });
      await page.evaluate(([surveyJson, seed]) => {
        window.surveyResult = null;
        window.survey = runStudySurvey(surveyJson, document.getElementById("surveyElement"),
          (result) => { window.surveyResult = result; });
        if (seed !== null) { window.survey.randomSeed = seed; }
      }, [json, run.seed === undefined ? null : run.seed]);
    }
    const pages = [];
    const texts = [];
    for (let step = 0; step < 200; step++) {
      await page.waitForSelector(".sd-root-modern, .sd-completedpage", { timeout: 10000 });
      if (await page.evaluate(() => window.surveyResult !== null)) { break; }
      const seen = await page.evaluate(() => {
        // One panel per screen: the current element names it (a pair's panel, say).
        const name = window.survey.currentElementName || window.survey.currentPage.name;
        const out = { name, radiogroups: [], texts: [], sliders: [] };
        for (const q of document.querySelectorAll(".sd-question[data-name]")) {
          const name = q.getAttribute("data-name");
          const model = window.survey.getQuestionByName(name);
          if (model && model.getType() === "slider") { out.sliders.push(name); }
          else if (q.querySelector("input[type=radio]")) { out.radiogroups.push(name); }
          else if (q.querySelector("textarea, input[type=text]")) { out.texts.push(name); }
        }
        return out;
      });
      texts.push((await inspect(page)).text);
      pages.push(seen);
      for (const name of seen.radiogroups) {
        const isJudgement = /^p[a-z0-9]{6}$/.test(name);
        const value = isJudgement ? run.choice : null;
        const input = value
          ? page.locator(`.sd-question[data-name="${name}"] input[type=radio][value="${value}"]`)
          : page.locator(`.sd-question[data-name="${name}"] input[type=radio]`).first();
        await input.check({ force: true });
      }
      for (const name of seen.sliders) {
        // Reveal mode's belief slider: set as a judge would leave it.
        await page.evaluate(([n, v]) => window.survey.setValue(n, v), [name, run.belief ?? 50]);
      }
      for (const name of seen.texts) {
        await page.locator(`.sd-question[data-name="${name}"] textarea, ` +
          `.sd-question[data-name="${name}"] input[type=text]`).first().fill("typed by test");
      }
      const next = page.locator(".sd-navigation__next-btn:visible, .sd-navigation__complete-btn:visible");
      await next.first().click();
    }
    const state = await inspect(page);
    results.push({
      pages, result: await page.evaluate(() => window.surveyResult), pwned: state.pwned,
      text: texts.join("\n"), errors, blocked,
    });
    await page.close();
  }
  return results;
}

async function waitDone(page) {
  await page.waitForFunction(() => window.studyDone === true, null, { timeout: 30000 });
}

async function runJsPsych(context, task) {
  const url = "file://" + task.page;
  const out = { simulate: [], click: [] };
  for (const query of task.simulate || []) {
    const { page, errors, blocked } = await newPage(context);
    await page.goto(url + query);
    await waitDone(page);
    const state = await inspect(page);
    out.simulate.push({
      csv: await page.evaluate(() => window.studyResultCsv), pwned: state.pwned, errors, blocked,
    });
    await page.close();
  }
  for (const query of task.click || []) {
    const { page, errors, blocked } = await newPage(context);
    await page.goto(url + query);
    const texts = [];
    for (let step = 0; step < 200; step++) {
      if (await page.evaluate(() => window.studyDone === true)) { break; }
      await page.waitForSelector(
        "#jspsych-html-button-response-btngroup button, #jspsych-survey-multi-choice_form, " +
        "#jspsych-survey-text-next, #jspsych-html-slider-response-next", { timeout: 10000 });
      texts.push((await inspect(page)).text);
      if (await page.locator("#jspsych-html-slider-response-next").count()) {
        // Reveal mode: move the belief slider (to the task's value), then go on.
        await page.evaluate((v) => {
          const slider = document.querySelector("#jspsych-html-slider-response-response");
          slider.value = String(v);
          for (const kind of ["mousedown", "input", "change"]) {
            slider.dispatchEvent(new Event(kind, { bubbles: true }));
          }
        }, task.belief === undefined ? 50 : task.belief);
        await page.locator("#jspsych-html-slider-response-next").click();
      } else if (await page.locator("#jspsych-html-button-response-btngroup button").count()) {
        await page.locator("#jspsych-html-button-response-btngroup button").first().click();
      } else if (await page.locator("#jspsych-survey-multi-choice_form").count()) {
        const groups = await page.locator(".jspsych-survey-multi-choice-question").count();
        for (let i = 0; i < groups; i++) {
          await page.locator(".jspsych-survey-multi-choice-question").nth(i)
            .locator("input[type=radio]").first().check();
        }
        await page.locator("#jspsych-survey-multi-choice-next").click();
      } else {
        for (const box of await page.locator("#jspsych-content input[type=text], " +
          "#jspsych-content textarea").all()) {
          await box.fill("typed by test");
        }
        await page.locator("#jspsych-survey-text-next").click();
      }
      await page.waitForTimeout(20);
    }
    await waitDone(page);
    const state = await inspect(page);
    out.click.push({
      csv: await page.evaluate(() => window.studyResultCsv), pwned: state.pwned,
      text: texts.join("\n"), errors, blocked,
    });
    await page.close();
  }
  return out;
}

async function main() {
  const tasks = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
  });
  const report = {};
  try {
    const context = await browser.newContext();
    if (tasks.surveyjs) { report.surveyjs = await runSurveyJs(context, tasks.surveyjs); }
    if (tasks.surveyjs_standalone) {
      report.surveyjs_standalone = await runSurveyJs(context, tasks.surveyjs_standalone);
    }
    if (tasks.jspsych) { report.jspsych = await runJsPsych(context, tasks.jspsych); }
    if (tasks.jspsych_design) {
      report.jspsych_design = await runJsPsych(context, tasks.jspsych_design);
    }
    if (tasks.surveyjs_reveal) {
      report.surveyjs_reveal = await runSurveyJs(context, tasks.surveyjs_reveal);
    }
    if (tasks.jspsych_reveal) {
      report.jspsych_reveal = await runJsPsych(context, tasks.jspsych_reveal);
    }
    report.pages = [];
    for (const file of tasks.pages || []) {
      const { page, errors, blocked } = await newPage(context);
      await page.goto("file://" + file);
      report.pages.push(Object.assign({ file, errors, blocked }, await inspect(page)));
      await page.close();
    }
    report.fragments = [];
    for (const html of tasks.fragments || []) {
      const { page, errors, blocked } = await newPage(context);
      await page.setContent("<!DOCTYPE html><html><body><div>" + html + "</div></body></html>");
      await page.waitForTimeout(50);
      report.fragments.push(Object.assign({ errors, blocked }, await inspect(page)));
      await page.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
