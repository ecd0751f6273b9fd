// Loads SurveyJS survey JSON files in Node and reports what survey-core makes of them.
// Usage: node check_surveyjs.cjs FILE.json...  -> prints one JSON report on stdout.
// Both survey-core versions are checked: 2.5 (the one survey-js-ui renders with) and
// 3.x (which ships the linter).
"use strict";
const fs = require("fs");
const core2 = require("survey-core");
const core3 = require("survey-core-3");
const { lintSurvey } = require("survey-core-3/linter");

function load(core, json) {
  const model = new core.Model(json);
  return {
    version: core.Version || null,
    jsonErrors: (model.jsonErrors || []).map((e) => String(e.message)),
    pages: model.pages.map((p) => p.name),
    questions: model.getAllQuestions().map((q) => ({ name: q.name, type: q.getType() })),
  };
}

const report = {};
for (const file of process.argv.slice(2)) {
  const json = JSON.parse(fs.readFileSync(file, "utf8"));
  const lint = lintSurvey(json);
  report[file] = {
    core2: load(core2, json),
    core3: load(core3, json),
    lint: {
      errorCount: lint.errorCount,
      warningCount: lint.warningCount,
      infoCount: lint.infoCount,
      findings: lint.findings.map((f) => ({
        ruleId: f.ruleId, severity: f.severity, path: f.path, message: f.message,
      })),
    },
  };
}
process.stdout.write(JSON.stringify(report, null, 2));
