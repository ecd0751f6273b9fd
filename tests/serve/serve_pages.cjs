// Walks every page of every mode of `sdtt serve` in one headless Chromium and records,
// at each page and each screen size, what a person can see and click.
// Usage: node serve_pages.cjs CONFIG_JSON -> JSON on stdout
//   CONFIG_JSON: {"games": {"bot": BASE_URL, "human": ..., "three": ..., "own": ...,
//   "market": ...}, "study": "pilot", "ownKey": KEY, "shots": FOLDER or null}
//   With "shots", a full-page PNG of every page at every size is written there.
// Each probe: {game, who, page, size, parts: {NAME: [{visible, clickable, box}]},
//   width, scrollWidth, lastThemSeen, input1, points (the done page's points text),
//   inView (with the message box scrolled into view, which of the chart, the first trade
//   button, the last answer and the box are wholly on the screen; null without a chart)}.
"use strict";
const path = require("path");
const fs = require("fs");
const { chromium } = require(path.join(__dirname, "..", "questionnaires", "js",
  "node_modules", "playwright-core"));

const config = JSON.parse(process.argv[2]);
const TIMEOUT = 60000;
const SIZES = [
  { name: "phone", width: 375, height: 667 },
  { name: "laptop", width: 1280, height: 800 },
  { name: "desktop", width: 1920, height: 1080 },
];
// What each probe looks at, by name.
const PARTS = {
  consent: "#consent", consentYes: "#consent-yes", consentNo: "#consent-no",
  consentLink: "#consent-text a", consentMarkup: "#consent-text b",
  lobby: "#lobby", lobbyWait: "#lobby-wait",
  chat: "#chat", instructions: "#instructions", chatEnded: "#chat-ended",
  market: "#market", chart: "#chart", trade: ".trade", doneBuying: "#done-buying",
  tradeCount: "#trade-count", confirmTrade: "#confirm-trade", queued: "#queued",
  pending1: '.pane[data-chat="1"] .pending',
  belief: "#belief", beliefSlider: "#belief-value",
  pane1: '.pane[data-chat="1"]', pane2: '.pane[data-chat="2"]',
  input1: '.pane[data-chat="1"] .send-text', input2: '.pane[data-chat="2"] .send-text',
  send1: '.pane[data-chat="1"] .send-form button', report1: '.pane[data-chat="1"] .report',
  questions: "#questions select, #questions textarea", feedback: "#done-feedback",
  send2: '.pane[data-chat="2"] .send-form button',
  turns1: '.pane[data-chat="1"] .turns-left', turns2: '.pane[data-chat="2"] .turns-left',
  tabs: "#tabs", tab1: '#tabs .tab[data-chat="1"]', tab2: '#tabs .tab[data-chat="2"]',
  unread2: '#tabs .tab[data-chat="2"] .unread',
  verdict: "#verdict", verdictTwo: "#verdict-two", verdictThree: "#verdict-three",
  verdictChoice: "#verdict input[name=human]", confidence: "#confidence",
  verdictSend: '#verdict-form button[type="submit"]',
  done: "#done", code: "#done-code", reveal: "#reveal", notice: "#notice",
  points: "#done-points",
  moveHere: "#move-here", clock: "#clock",
};

// Runs in the page: each part's visibility, box (page coordinates) and, for controls,
// whether a click at its centre lands on it once it is scrolled into view.
function inspect(parts) {
  const out = {};
  const controls = "button, input, textarea, select, a";
  for (const [name, selector] of Object.entries(parts)) {
    out[name] = [...document.querySelectorAll(selector)].map((el) => {
      const r0 = el.getBoundingClientRect();
      const visible = el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) &&
        r0.width > 0 && r0.height > 0;
      let clickable = null;
      if (visible && el.matches(controls)) {
        el.scrollIntoView({ block: "center", inline: "center" });
        const r = el.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        clickable = !!hit && (hit === el || el.contains(hit));
      }
      const r = el.getBoundingClientRect();
      return {
        visible, clickable,
        box: { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height },
      };
    });
  }
  return out;
}

// Whether the chat's last answer is on screen inside its (scrolled) message list.
function lastThemSeen() {
  const items = [...document.querySelectorAll("li.them")].filter((li) => li.checkVisibility());
  if (!items.length) return null;
  const li = items[items.length - 1];
  li.scrollIntoView({ block: "nearest" });
  const list = li.closest(".messages").getBoundingClientRect();
  const r = li.getBoundingClientRect();
  return r.top >= list.top - 1 && r.bottom <= list.bottom + 1 && r.height > 0;
}

// As a bettor typing a question sees it: the message box scrolled into view (the page
// scrolled as far as it goes), what is wholly on the screen.
function inView() {
  const chart = document.querySelector("#chart");
  if (!chart || !chart.checkVisibility()) return null;
  const input = document.querySelector('.pane[data-chat="1"] .send-text');
  input.scrollIntoView({ block: "end" });
  const answers = [...document.querySelectorAll("li.them")];
  const on = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return r.height > 0 && r.top >= -1 && r.bottom <= innerHeight + 1;
  };
  return { chart: on(chart), trade: on(document.querySelector(".trade")),
    answer: on(answers[answers.length - 1]), input: on(input) };
}

async function probe(log, game, who, pageName, page) {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
    const found = {
      game, who, page: pageName, size: size.name,
      parts: await page.evaluate(inspect, PARTS),
      width: size.width,
      scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth),
      lastThemSeen: await page.evaluate(lastThemSeen),
      inView: await page.evaluate(inView),
      points: await page.evaluate(() => {
        const points = document.querySelector("#done-points");
        return points && !points.hidden ? points.innerText : null;
      }),
      input1: await page.evaluate(() => {
        const input = document.querySelector('.pane[data-chat="1"] .send-text');
        return input ? input.value : null;
      }),
    };
    log.probes.push(found);
    if (config.shots && found.inView) {
      // The screen as a bettor typing a question sees it (scrolled by inView).
      await page.evaluate(inView);
      const file = [game, who, pageName, "typing", size.width + "x" + size.height].join("-");
      await page.screenshot({ path: path.join(config.shots, file + ".png") });
    }
    if (config.shots) {
      await page.evaluate(() => window.scrollTo(0, 0));
      const file = [game, who, pageName, size.width + "x" + size.height].join("-") + ".png";
      await page.screenshot({ path: path.join(config.shots, file), fullPage: true });
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function open(browser, base, query, log) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => log.errors.push(String(error)));
  page.on("console", (m) => {
    // (Chromium asks for /favicon.ico, which the server does not have.)
    if (m.type() === "error" && !m.location().url.endsWith("/favicon.ico")) {
      log.errors.push(m.text());
    }
  });
  await page.goto(base + "/s/" + config.study + "?" + query);
  return page;
}

// When each page last sent a message. The study lets a participant send one message per
// min_interval of its clock, which runs at least as fast as real time: a person takes
// longer to type one, so the walk waits as long before the next (a second message sent
// sooner is refused, rightly, and never shows; on a fast machine that was a flaky miss).
const lastSent = new WeakMap();

async function pace(page) {
  const wait = (lastSent.get(page) || 0) + config.minInterval * 1000 + 100 - Date.now();
  if (wait > 0) await page.waitForTimeout(wait);
  lastSent.set(page, Date.now());
}

async function say(page, chat, text) {
  const pane = page.locator('.pane[data-chat="' + chat + '"]');
  await pane.locator(".send-text").fill(text);
  await pace(page);
  await pane.locator(".send-form button").click();
  await pane.locator("li.you", { hasText: text }).waitFor({ state: "attached" });
}

async function answered(page, count) {
  await page.waitForFunction((n) => document.querySelectorAll("li.them").length >= n, count);
}

async function agree(page) {
  await page.locator("#consent-yes").click();
}

// Two-party with the bot: consent, chat, verdict, done (and consent declined).
async function botGame(browser, base, log) {
  let page = await open(browser, base, "PROLIFIC_PID=P1&STUDY_ID=S1&SESSION_ID=X1", log);
  await page.locator("#consent-yes").waitFor();
  await probe(log, "bot", "interrogator", "consent", page);
  await agree(page);
  await page.locator("#chat").waitFor();
  await say(page, 1, "hi, how are you");
  await answered(page, 1);
  await page.locator("#belief-value").fill("80");
  await page.locator("#belief-value").dispatchEvent("change");
  await page.waitForTimeout(300);
  await page.reload();
  await page.locator("li.them").first().waitFor();
  log.sliderAfterReload = await page.locator("#belief-value").inputValue();
  await probe(log, "bot", "interrogator", "chat", page);
  log.pasteBlocked = await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData("text/plain", "a pasted answer");
    const paste = new ClipboardEvent("paste", { clipboardData: data, bubbles: true,
      cancelable: true });
    return !document.querySelector('.pane[data-chat="1"] .send-text').dispatchEvent(paste);
  });
  // The same link in a second tab: this window stops (no Send box, no clock), told why;
  // the chat goes on in the new tab.
  const first = page;
  page = await first.context().newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => log.errors.push(String(error)));
  await page.goto(first.url());
  await page.locator("li.them").first().waitFor();
  await first.locator("#notice", { hasText: "another" }).waitFor();
  log.replacedTold = await first.locator("#notice").textContent();
  log.replacedEditable = await first.locator('.pane[data-chat="1"] .send-text').isEditable();
  await probe(log, "bot", "interrogator", "chat-replaced", first);
  // The last turn, unless the chat's 15 real seconds are over first (a loaded machine):
  // either way the verdict comes.
  const box = page.locator('.pane[data-chat="1"] .send-text');
  const send = page.locator('.pane[data-chat="1"] .send-form button');
  await box.fill("what did you do today?", { timeout: 5000 }).catch(() => {});
  await send.click({ timeout: 5000 }).catch(() => {});
  await page.locator("#verdict").waitFor();
  await probe(log, "bot", "interrogator", "verdict", page);
  await page.locator('#verdict-two input[value="no"]').check();
  await page.locator("#questions select").selectOption("weekly");
  await page.locator("#questions textarea").fill("asked about the weather");
  await page.locator("#verdict-form button").click();
  await page.locator("#done").waitFor();
  await probe(log, "bot", "interrogator", "done", page);
  const declined = await open(browser, base, "PROLIFIC_PID=P2", log);
  await declined.locator("#consent-no").click();
  await declined.locator("#done").waitFor();
  await probe(log, "bot", "declined", "done", declined);
}

// Two-party with a person: lobby, both sides' chat, a refused message, verdict, done.
async function humanGame(browser, base, log) {
  const judge = await open(browser, base, "pid=J1", log);
  await agree(judge);
  await judge.locator("#lobby").waitFor();
  await probe(log, "human", "interrogator", "lobby", judge);
  const witness = await open(browser, base, "pid=W1", log);
  await agree(witness);
  await judge.locator("#chat").waitFor();
  await witness.locator("#chat").waitFor();
  await say(judge, 1, "hello there");
  await answered(witness, 1);
  await say(witness, 1, "hi! fine, you?");
  await answered(judge, 1);
  await probe(log, "human", "interrogator", "chat", judge);
  await probe(log, "human", "witness", "chat", witness);
  await say(judge, 1, "what is your job?");
  await answered(witness, 2);
  await say(witness, 1, "I teach");
  await answered(judge, 2);
  // The last turn is answered: one more message is refused and stays in the box.
  await judge.locator('.pane[data-chat="1"] .send-text').fill("one more thing");
  await pace(judge);
  await judge.locator('.pane[data-chat="1"] .send-form button').click();
  await judge.locator("#notice").waitFor();
  await probe(log, "human", "interrogator", "chat-refused", judge);
  await judge.locator("#verdict").waitFor();
  await probe(log, "human", "interrogator", "verdict", judge);
  await witness.locator("#done").waitFor();
  await probe(log, "human", "witness", "done", witness);
}

// Three-party: the interrogator's two chats (tabs on a phone), the witness, the verdict.
async function threeGame(browser, base, log) {
  const judge = await open(browser, base, "pid=J1", log);
  await agree(judge);
  await judge.locator("#lobby").waitFor();
  const witness = await open(browser, base, "pid=W1", log);
  await agree(witness);
  await judge.locator("#chat").waitFor();
  await probe(log, "three", "interrogator", "chat", judge);
  await probe(log, "three", "witness", "chat", witness);
  await judge.setViewportSize({ width: 375, height: 667 });
  await say(judge, 1, "hello one");
  await judge.locator('#tabs .tab[data-chat="2"]').click();
  await say(judge, 2, "hello two");
  await judge.locator('#tabs .tab[data-chat="1"]').click();
  await answered(witness, 1);
  await say(witness, 1, "hi, it's me");
  await judge.locator('#tabs .tab[data-chat="2"] .unread').waitFor();
  await judge.locator("#verdict").waitFor();
  await probe(log, "three", "interrogator", "verdict", judge);
  await witness.locator("#done").waitFor();
  await probe(log, "three", "witness", "done", witness);
}

// Own person: the private link waits in the lobby, chats as the witness, waits again.
async function ownGame(browser, base, log) {
  const own = await open(browser, base, "pid=own-person&key=" + config.ownKey, log);
  await agree(own);
  await own.locator("#lobby").waitFor();
  await probe(log, "own", "own-person", "lobby", own);
  const judge = await open(browser, base, "pid=J1", log);
  await agree(judge);
  await own.locator("#chat").waitFor();
  await say(judge, 1, "are you the real one?");
  await answered(own, 1);
  await probe(log, "own", "own-person", "chat", own);
  await probe(log, "own", "interrogator", "chat", judge);
  await say(own, 1, "I am");
  await judge.locator("#verdict").waitFor();
  await own.locator("#lobby").waitFor();
  await probe(log, "own", "own-person", "lobby-again", own);
  // The link opened on a second device: it asks before taking over from the first.
  const phone = await open(browser, base, "pid=own-person&key=" + config.ownKey, log);
  await phone.locator("#move-here").waitFor();
  await probe(log, "own", "second-device", "move-prompt", phone);
  await phone.locator("#move-here").click();
  await phone.locator("#lobby").waitFor();
  // The first device stops, told why (another window, or the link moved on).
  await own.locator("#notice").waitFor();
  log.firstDeviceTold = await own.locator("#notice").textContent();
  await probe(log, "own", "own-person", "moved-away", own);
}

// Market: a bettor (a refused trade, then done buying) and a person as the target.
async function marketGame(browser, base, log) {
  const bettor = await open(browser, base, "pid=B1", log);
  await agree(bettor);
  await bettor.locator("#lobby").waitFor();
  const target = await open(browser, base, "pid=T1", log);
  await agree(target);
  await bettor.locator("#chat").waitFor();
  await target.locator("#chat").waitFor();
  await say(bettor, 1, "where do you live?");
  await answered(target, 1);
  await say(target, 1, "by the sea");
  await answered(bettor, 1);
  await probe(log, "market", "bettor", "chat", bettor);
  await probe(log, "market", "target", "chat", target);
  await bettor.locator("#trade-count").fill("40");
  await bettor.locator('.trade[data-kind="human"][data-side="buy"]').click();
  await bettor.locator("#notice").waitFor();
  await probe(log, "market", "bettor", "chat-refused", bettor);
  await bettor.locator("#done-buying").click();
  await bettor.locator("#done").waitFor();
  await probe(log, "market", "bettor", "done", bettor);
}

const GAMES = { bot: botGame, human: humanGame, three: threeGame, own: ownGame,
  market: marketGame };

(async () => {
  if (config.shots) fs.mkdirSync(config.shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  const log = { errors: [], probes: [] };
  try {
    // The games are independent studies: played side by side, in one browser.
    await Promise.all(Object.entries(config.games).map(
      ([game, base]) => GAMES[game](browser, base, log).catch((error) => {
        log.errors.push(game + ": " + (error.stack || String(error)));
      })));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(log));
})().catch((error) => { console.error(error); process.exit(1); });
