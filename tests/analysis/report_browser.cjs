// Opens an sdtt report in headless Chromium and says what loaded.
// Usage: node report_browser.cjs REPORT.html -> JSON {errors, blocked, title, images, text}
// Uses the playwright-core and system Chromium installed for the questionnaire tests
// (bash tests/questionnaires/js/install.sh).
"use strict";
const path = require("path");
const { chromium } = require(path.join(__dirname, "..", "questionnaires", "js",
  "node_modules", "playwright-core"));

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    const blocked = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("file:") || url.startsWith("data:")) { return route.continue(); }
      blocked.push(url);
      return route.abort();
    });
    await page.goto("file://" + path.resolve(process.argv[2]), { waitUntil: "load" });
    const seen = await page.evaluate(async () => {
      const images = [];
      for (const img of document.images) {
        try { await img.decode(); } catch (e) { /* reported as naturalWidth 0 */ }
        images.push({ alt: img.alt, width: img.naturalWidth, height: img.naturalHeight });
      }
      return { title: document.title, images, text: document.body.innerText,
               pwned: window.__pwned === undefined ? null : window.__pwned };
    });
    process.stdout.write(JSON.stringify(Object.assign({ errors, blocked }, seen)));
  } finally {
    await browser.close();
  }
})().catch((error) => { console.error(error); process.exit(1); });
