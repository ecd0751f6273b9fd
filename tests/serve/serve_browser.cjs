// Plays live games of `sdtt serve` in headless Chromium, as participants would.
// Usage: node serve_browser.cjs BASE_URL STUDY SCENARIO ADMIN_TOKEN [OTHER_URL] -> JSON
// on stdout (OTHER_URL: a second server process of the study, for the market's third
// bettor).
//   SCENARIO two-party: one participant plays a whole game with the bot, reloading the
//   page mid-chat (a reconnect), then the admin page is read.
//   SCENARIO three-party: an interrogator and a human witness in two browsers.
//   SCENARIO market: three bettors question the bot, trade, say "done buying", read the
//   reveal and play a second game.
// Uses the playwright-core and system Chromium installed for the questionnaire tests
// (bash tests/questionnaires/js/install.sh).
"use strict";
const path = require("path");
const { chromium } = require(path.join(__dirname, "..", "questionnaires", "js",
  "node_modules", "playwright-core"));

const [base, study, scenario, adminToken, otherBase] = process.argv.slice(2);
const TIMEOUT = 60000;

async function participant(browser, query, log, at = base) {
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => log.errors.push(String(error)));
  page.on("console", (m) => { if (m.type() === "error") log.errors.push(m.text()); });
  // Each frame on its own, whether it came alone or in a list of frames sent together.
  page.on("websocket", (ws) => ws.on("framereceived", (f) => {
    const data = JSON.parse(String(f.payload));
    for (const frame of Array.isArray(data) ? data : [data]) log.frames.push(JSON.stringify(frame));
  }));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(at)) return route.continue();
    log.blocked.push(url);
    return route.abort();
  });
  await page.goto(at + "/s/" + study + "?" + query);
  return page;
}

// Screenshots of a page at a phone's and a laptop's size (SDTT_SHOTS: the folder).
async function shots(page, name) {
  const folder = process.env.SDTT_SHOTS;
  if (!folder) return;
  for (const [width, height] of [[375, 667], [1280, 800]]) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: path.join(folder, name + "-" + width + ".png"), fullPage: true });
  }
  await page.setViewportSize({ width: 390, height: 800 });
}

async function consent(page) {
  await page.locator("#consent-yes").click();
  await page.locator("#chat").waitFor({ state: "visible" });
}

async function say(page, chat, text) {
  const tab = page.locator('#tabs .tab[data-chat="' + chat + '"]');
  if (await tab.isVisible()) await tab.click();  // a phone shows one chat at a time
  const pane = page.locator('.pane[data-chat="' + chat + '"]');
  await pane.locator(".send-text").fill(text);
  await pane.locator(".send-form button").click();
  await pane.locator("li.you", { hasText: text }).waitFor();
}

async function texts(page, chat) {
  return page.locator('.pane[data-chat="' + chat + '"] li').evaluateAll(
    (items) => items.map((li) => ({ from: li.className, text: li.textContent })));
}

async function twoParty(browser, log) {
  const page = await participant(browser, "PROLIFIC_PID=P1&STUDY_ID=S1&SESSION_ID=X1", log);
  await page.locator("#consent-text").waitFor({ state: "visible" });
  log.consent = await page.locator("#consent-text").textContent();
  await consent(page);
  log.clock = await page.locator("#clock").textContent();
  await say(page, 1, "hi! <b>bold</b> how are you");
  await page.locator("li.them").first().waitFor();
  log.beforeReload = await texts(page, 1);
  await page.reload();
  await page.locator("#chat").waitFor({ state: "visible" });
  await page.locator("li.them").first().waitFor();
  log.afterReload = await texts(page, 1);
  await page.waitForTimeout(300);
  if (await page.locator("#chat").isVisible()) await say(page, 1, "what did you do today?");
  await page.locator("#verdict").waitFor({ state: "visible" });
  log.transcript = await texts(page, 1);
  await page.locator('#verdict-two input[value="no"]').check();
  await page.locator("#reason").fill("replies came too fast");
  await page.locator("#verdict-form button").click();
  await page.locator("#done").waitFor({ state: "visible" });
  log.code = await page.locator("#done-code").textContent();
  log.boldElements = await page.locator("li b").count();
  const admin = await browser.newPage();
  await admin.goto(base + "/admin/" + study + "?token=" + adminToken);
  log.admin = await admin.locator("main").innerText();
  const denied = await admin.goto(base + "/admin/" + study + "?token=wrong");
  log.adminDenied = denied.status();
}

async function threeParty(browser, log) {
  const judge = await participant(browser, "pid=J1", log);
  const witness = await participant(browser, "pid=W1", log);
  await judge.locator("#consent-yes").click();
  await judge.locator("#lobby").waitFor({ state: "visible" });
  await consent(witness);
  await judge.locator("#chat").waitFor({ state: "visible" });
  log.panes = await judge.locator(".pane").count();
  log.witnessPanes = await witness.locator(".pane").count();
  await say(judge, 1, "hello one");
  await say(judge, 2, "hello two");
  await witness.locator("li.them").first().waitFor();
  log.witnessSaw = await texts(witness, 1);
  await say(witness, 1, "hi, it's me, a real person");
  await judge.locator("#verdict").waitFor({ state: "visible" });
  log.chat1 = await texts(judge, 1);
  log.chat2 = await texts(judge, 2);
  await judge.locator('#verdict-three input[value="1"]').check();
  await judge.locator("#verdict-form button").click();
  await judge.locator("#done").waitFor({ state: "visible" });
  await witness.locator("#done").waitFor({ state: "visible" });
  log.code = await judge.locator("#done-code").textContent();
}

async function marketGame(browser, log) {
  const pages = [];
  for (const pid of ["A1", "A2", "A3"]) {
    const at = pid === "A3" && otherBase ? otherBase : base;  // (another process, if given)
    pages.push(await participant(browser, "pid=" + pid, log, at));
  }
  for (const page of pages) await page.locator("#consent-yes").click();
  for (const page of pages) await page.locator("#market").waitFor({ state: "visible" });
  // The account comes from the game's process, which may be the other one.
  for (const page of pages) {
    await page.waitForFunction(() => document.getElementById("points").textContent !== "");
  }
  const [ann, bob, cy] = pages;
  log.startPoints = await ann.locator("#points").textContent();
  await say(ann, 1, "hi all, <i>where</i> do you live?");
  await bob.locator("li.other", { hasText: "do you live?" }).waitFor();
  await cy.locator("li.them").first().waitFor();
  await ann.locator("#trade-count").fill("3");
  await ann.locator('.trade[data-kind="computer"][data-side="buy"]').click();
  // The cost shows first; nothing is traded until it is confirmed.
  await ann.locator("#confirm-trade").waitFor({ state: "visible" });
  log.confirmText = await ann.locator("#confirm-text").textContent();
  log.holdingBeforeConfirm = await ann.locator("#holding").textContent();
  await shots(ann, "market-confirm");
  await ann.locator("#confirm-yes").click();
  await ann.locator("#holding", { hasText: "3 computer" }).waitFor();
  log.confirmShownAfter = await ann.locator("#confirm-trade").isVisible();
  log.annPoints = await ann.locator("#points").textContent();
  await bob.locator("#price", { hasText: "47" }).waitFor();
  log.bobAsk = await bob.locator("#ask").textContent();
  // An answer after the last trade: its mark is drawn inside the chart.
  const marks = await bob.locator("#chart line.answer").count();
  await say(ann, 1, "and what do you do all day?");
  await bob.waitForFunction(
    (n) => document.querySelectorAll("#chart line.answer").length > n, marks);
  log.bobChart = await bob.locator("#chart polyline").getAttribute("points");
  log.bobAnswerMarks = await bob.locator("#chart line.answer").count();
  log.answerMarkX = await bob.locator("#chart line.answer").evaluateAll(
    (lines) => lines.map((l) => Number(l.getAttribute("x1"))));
  await shots(bob, "market-chart");
  log.queuedShown = await bob.locator("#queued").isVisible();
  // "You see the answer in 5 seconds" goes once the answers held from bob have come
  // (the bot may still be adding to its answer: wait for its last).
  // (Asked once: a later part of the answer may bring the note back for its own 5 seconds.)
  log.pendingCleared = await bob.locator(".pending").waitFor({ state: "hidden", timeout: 20000 })
    .then(() => true, () => false);
  await cy.locator("#trade-count").fill("40");
  await cy.locator('.trade[data-kind="human"][data-side="buy"]').click();
  await cy.locator("#notice").waitFor({ state: "visible" });
  log.cyRefused = await cy.locator("#notice").textContent();
  log.cyConfirmShown = await cy.locator("#confirm-trade").isVisible();
  for (const page of pages) await page.locator("#done-buying").click();
  // The reveal stays until the bettor moves on; the second game waits for all three.
  for (const page of pages) await page.locator("#reveal").waitFor({ state: "visible" });
  for (const page of [bob, cy]) await page.locator("#reveal-ok").click();
  await ann.waitForTimeout(1000);
  log.revealVisible = await ann.locator("#reveal").isVisible();
  log.lobbyWhileReading = await Promise.all(pages.map((p) => p.locator("#lobby").isVisible()));
  log.reveal = await ann.locator("#reveal-text").textContent();
  log.lobbyText = await ann.locator("#lobby-text").textContent();
  await shots(ann, "market-reveal");
  await ann.locator("#reveal-ok").click();
  log.revealAfterContinue = await ann.locator("#reveal").isVisible();
  for (const page of pages) await page.locator("#market").waitFor({ state: "visible" });
  await ann.locator("#points", { hasText: "1144" }).waitFor();
  log.nextGameShown = await ann.locator("#market").isVisible();
  log.nextGameCount = await cy.locator("#trade-count").inputValue();  // (40 in the first)
  await shots(cy, "market-next");
  for (const page of pages) await page.locator("#done-buying:not([disabled])").click();
  for (const page of pages) await page.locator("#done").waitFor({ state: "visible" });
  log.code = await cy.locator("#done-code").textContent();
  log.italic = await bob.locator("li i").count();
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  const log = { errors: [], blocked: [], frames: [] };
  try {
    if (scenario === "two-party") await twoParty(browser, log);
    else if (scenario === "market") await marketGame(browser, log);
    else await threeParty(browser, log);
  } catch (error) {
    console.error(error);
    console.error(JSON.stringify(log.frames));
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(log));
})().catch((error) => { console.error(error); process.exit(1); });
