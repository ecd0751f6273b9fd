// The tell audit in headless Chromium: scripted participants open the real study page
// of a running `sdtt serve` as they arrive, consent, and play whichever role the server
// gives them, scripted inside the page (see `play`). An interrogator asks `turns`
// questions like a person (a pause, then type and send) and one message too many; a
// person witness answers each question after a delay, typing meanwhile. In every page
// an init script records, with the page's own clock, each websocket frame received and
// sent, and what the page shows: the section on screen, the typing indicator appearing
// and disappearing, each message appearing, each notice.
// Usage: node serve_audit.cjs CONFIG_JSON -> JSON on stdout
//   CONFIG_JSON: {"base": URL, "study": NAME, "people": N, "seed": S, "speed": X,
//   "turns": T, "gaps": [seconds before each next arrival], "answerDelay": [lo, hi],
//   "burst": [counts to draw from], "burstGap": [lo, hi]} (seconds of the study's clock,
//   which runs `speed` times faster than the page's).
// Output: {errors, participants: {pid: {role, frames, sent, seen}}}, times in ms of the
//   page's clock from when the page opened.
"use strict";
const path = require("path");
const { chromium } = require(path.join(__dirname, "..", "questionnaires", "js",
  "node_modules", "playwright-core"));

const config = JSON.parse(process.argv[2]);
const TIMEOUT = 60000;

// Runs in each page before its own script: wraps WebSocket to keep every frame, and
// watches the DOM for what a participant sees change. Changes found in one batch of DOM
// mutations are listed message first (the indicator going off with its message is not
// "before" it).
function recorder() {
  // `shown`: what the page shows now; `refused` and `role`: from the frames so far.
  const audit = { frames: [], sent: [], seen: [], shown: {}, refused: 0, role: null };
  window.__audit = audit;
  const now = () => performance.now();
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      audit.socket = this;
      // Registered before the page's onmessage, so it runs first.
      this.addEventListener("message", (e) => {
        audit.frames.push([now(), String(e.data)]);
        const frame = JSON.parse(e.data);
        if (frame.type === "refused") audit.refused++;
        if (frame.type === "phase" && frame.phase === "chat") audit.role = frame.role;
      });
    }
    send(data) {
      audit.sent.push([now(), String(data)]);
      super.send(data);
    }
  };
  const visible = (el) => !!el && el.checkVisibility({ checkOpacity: true,
    checkVisibilityCSS: true });
  let last = { section: "", typing: false, them: 0, you: 0, notice: "" };
  function look() {
    const on = (id) => visible(document.getElementById(id));
    const section = on("done") ? "done" : on("verdict") ? "verdict" : on("chat") ? "chat" :
      on("lobby") ? "lobby" : on("consent") ? "consent" : "";
    const state = {
      section,
      typing: [...document.querySelectorAll(".typing")].some(visible),
      them: [...document.querySelectorAll("li.them")].filter(visible).length,
      you: document.querySelectorAll("li.you").length,
      notice: on("notice") ? document.getElementById("notice").textContent : "",
    };
    const t = now();
    if (state.section !== last.section) audit.seen.push([t, { type: "phase", phase: section }]);
    for (let n = last.them; n < state.them; n++) {
      audit.seen.push([t, { type: "message", from: "them" }]);
    }
    for (let n = last.you; n < state.you; n++) audit.seen.push([t, { type: "message", from: "you" }]);
    if (state.typing !== last.typing) audit.seen.push([t, { type: "typing", on: state.typing }]);
    if (state.notice && state.notice !== last.notice) {
      audit.seen.push([t, { type: "notice", message: state.notice }]);
    }
    last = audit.shown = state;
  }
  document.addEventListener("DOMContentLoaded", () => {
    new MutationObserver(look).observe(document.body, {
      subtree: true, childList: true, attributes: true, characterData: true,
      attributeFilter: ["hidden", "class"],
    });
    look();
  });
}

// Runs in the page: one participant's whole part, scripted in the page itself so its
// pauses keep to the study's clock (a round trip to Playwright per step took seconds of a
// fast study clock on a loaded machine). It clicks and types through the page's own
// controls as a person would, and resolves once the participant is done.
async function play(cfg) {
  const audit = window.__audit;
  // A seeded generator (mulberry32), so each participant's script is the same every run.
  let state = cfg.seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const uniform = ([lo, hi]) => lo + (hi - lo) * next();
  const choice = (items) => items[Math.floor(next() * items.length)];
  const $ = (selector) => document.querySelector(selector);
  // Seconds of the study's clock.
  const pause = (seconds) => new Promise((done) => setTimeout(done, (1000 * seconds) / cfg.speed));
  const deadline = performance.now() + cfg.timeout;
  const until = (test, what) => new Promise((done, fail) => {
    const look = () => {
      if (test()) done();
      else if (performance.now() > deadline) fail(new Error("timed out waiting for " + what));
      else setTimeout(look, 10);
    };
    look();
  });
  const phase = () => audit.shown.section;
  const count = () => audit.shown.them;
  const input = () => $('.pane[data-chat="1"] .send-text');
  // A keystroke a second of the study's clock into the message box. (The page sends a
  // "typing" frame for at most one a second of its own clock, which a fast study clock
  // outruns: a person witness would seem to stop typing and the chat end while they
  // write, so their keystrokes' frames are sent as the page does at speed 1.)
  async function type(seconds, witness) {
    for (let typed = 1; typed <= seconds; typed++) {
      await pause(1);
      if (phase() !== "chat") return;
      input().value += "a";
      input().dispatchEvent(new Event("input", { bubbles: true }));
      if (witness && audit.socket && audit.socket.readyState === WebSocket.OPEN) {
        audit.socket.send(JSON.stringify({ type: "typing" }));
      }
    }
    await pause(seconds - Math.floor(seconds));
  }
  function send(text) {
    input().value = text;
    input().dispatchEvent(new Event("input", { bubbles: true }));
    $('.pane[data-chat="1"] .send-form button').click();
  }

  async function interrogate() {
    for (let asked = 0; asked < cfg.turns; asked++) {
      await pause(uniform([2.0, 6.0]));
      if (phase() !== "chat") break;
      // An answer is what comes after the question is shown (the rest of an earlier
      // answer may cross it).
      const mine = audit.shown.you;
      send("question " + (asked + 1) + "?");
      await until(() => audit.shown.you > mine || phase() !== "chat", "the question shown");
      const before = count();
      await until(() => count() > before || phase() !== "chat", "an answer");
    }
    // One message too many, soon after the last answer: how is it refused?
    await pause(uniform([0.5, 2.0]));
    if (phase() === "chat") {
      send("one more?");
      await until(() => audit.refused || phase() !== "chat", "a refusal");
    }
    await until(() => phase() === "verdict", "the verdict page");
    $('#verdict-two input[value="yes"]').click();
    $("#reason").value = "audit";
    $("#verdict-form button").click();
  }

  async function witness() {
    let answered = 0;
    while (phase() === "chat") {
      if (count() <= answered) {
        await until(() => count() > answered || phase() !== "chat", "a question");
        continue;
      }
      answered = count();
      // Like the bot, sometimes several messages in a row, typing meanwhile.
      const parts = choice(cfg.burst);
      for (let part = 0; part < parts; part++) {
        await type(uniform(part === 0 ? cfg.answerDelay : cfg.burstGap), true);
        if (phase() !== "chat") return;
        send("answer " + answered + "." + part);
      }
    }
  }

  await until(() => phase() === "consent", "the consent page");
  await pause(uniform([1.0, 4.0]));
  $("#consent-yes").click();
  await until(() => ["chat", "done"].includes(phase()), "a chat");
  const role = audit.role;
  if (role === "interrogator") await interrogate();
  else if (role === "witness") await witness();
  await until(() => phase() === "done", "the done page");
  return role;
}

async function participant(browser, pid, seed, log) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    await context.addInitScript(recorder);
    const page = await context.newPage();
    page.on("pageerror", (error) => log.errors.push(pid + ": " + String(error)));
    await page.goto(config.base + "/s/" + config.study + "?pid=" + pid);
    // A participant is done within the lobby's wait and a chat's time limit, on a clock
    // `speed` times faster; a minute more for a loaded machine.
    const cfg = { ...config, seed, timeout: TIMEOUT + (1000 * 600) / config.speed };
    const role = await page.evaluate(play, cfg).catch((error) => {
      log.errors.push(pid + ": " + String(error));
      return null;
    });
    const record = await page.evaluate(() => {
      const { frames, sent, seen } = window.__audit;
      return { frames, sent, seen };
    });
    log.participants[pid] = { role, ...record };
  } catch (error) {
    log.errors.push(pid + ": " + (error.stack || String(error)));
  } finally {
    await context.close();
  }
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  const log = { errors: [], participants: {} };
  const playing = [];
  try {
    // The pages open as the participants arrive.
    for (let n = 0; n < config.people; n++) {
      const pid = "A" + String(n).padStart(4, "0");
      playing.push(participant(browser, pid, config.seed * 100003 + n + 1, log));
      await new Promise((done) => setTimeout(done, (1000 * config.gaps[n]) / config.speed));
    }
    await Promise.all(playing);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(log));
})().catch((error) => { console.error(error); process.exit(1); });
