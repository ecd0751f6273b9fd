// The tell audit in headless Chromium: scripted participants open the real study page
// of a running `sdtt serve` as they arrive, consent, and play whichever role the server
// gives them, scripted inside the page (see `play`). An interrogator asks `turns`
// questions like a person (a pause, then type and send) and one message too many, in
// each of its chats (three-party: both at once); a person witness answers each
// question after a delay, typing meanwhile. In every page
// an init script records, with the page's own clock, each websocket frame received and
// sent, and what the page shows: the section on screen, each chat's typing indicator
// appearing and disappearing and messages appearing, each notice.
// Usage: node serve_audit.cjs CONFIG_JSON -> JSON on stdout
//   CONFIG_JSON: {"base": URL, "study": NAME, "people": N, "seed": S, "speed": X,
//   "turns": T, "gaps": [seconds before each next arrival], "plans": [for each
//   participant, for each question they answer as a person witness, [[seconds, text],
//   ...]: the burst they answer with, each message after that many seconds of typing]}
//   (seconds of the study's clock, which runs `speed` times faster than the page's).
// Output: {errors, participants: {pid: {role, frames, sent, seen, extras}}}, times in ms
//   of the page's clock from when the page opened; `extras`: [time, {chat, received,
//   shown}] for each message sent after the last turn, with the refusal's text as
//   received and as the notice showed it.
"use strict";
const path = require("path");
const { chromium } = require(path.join(__dirname, "..", "questionnaires", "js",
  "node_modules", "playwright-core"));

const config = JSON.parse(process.argv[2]);
// How long a page waits for a step beyond the study's own time limits. The server ends
// every chat by its time limits, so this only stops a broken page; it is long because on
// a machine loaded 10-20 deep, 30 Chromium pages at once reach each step minutes late.
const TIMEOUT = 600000;

// Runs in each page before its own script: wraps WebSocket to keep every frame, and
// watches the DOM for what a participant sees change. Changes found in one batch of DOM
// mutations are listed message first (the indicator going off with its message is not
// "before" it).
function recorder() {
  // `shown`: what the page shows now; `refused` and `role`: from the frames so far.
  // `extras`: for each message sent after the last turn, its chat and how it was refused
  // (the frame's text and the notice shown).
  const audit = { frames: [], sent: [], seen: [], shown: { them: {}, you: {} }, extras: [],
    refused: 0, lastRefused: "", role: null, chats: 1 };
  window.__audit = audit;
  const now = () => performance.now();
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      audit.socket = this;
      // Registered before the page's onmessage, so it runs first.
      this.addEventListener("message", (e) => {
        // One message carries a frame or a list of frames sent together.
        const data = JSON.parse(e.data);
        for (const frame of Array.isArray(data) ? data : [data]) {
          audit.frames.push([now(), frame]);
          if (frame.type === "refused") { audit.refused++; audit.lastRefused = frame.message; }
          if (frame.type === "phase" && frame.phase === "chat") {
            audit.role = frame.role;
            audit.chats = frame.chats || 1;
          }
        }
      });
    }
    send(data) {
      audit.sent.push([now(), String(data)]);
      super.send(data);
    }
  };
  const visible = (el) => !!el && el.checkVisibility({ checkOpacity: true,
    checkVisibilityCSS: true });
  // Per chat (a three-party interrogator's page has two): answers shown, own messages
  // shown, and whether the typing indicator shows.
  let last = { section: "", typing: {}, them: {}, you: {}, notice: "" };
  function look() {
    const on = (id) => visible(document.getElementById(id));
    const section = on("done") ? "done" : on("verdict") ? "verdict" : on("chat") ? "chat" :
      on("lobby") ? "lobby" : on("consent") ? "consent" : "";
    const state = {
      section, typing: {}, them: {}, you: {},
      notice: on("notice") ? document.getElementById("notice").textContent : "",
    };
    for (const pane of document.querySelectorAll(".pane[data-chat]")) {
      const n = pane.dataset.chat;
      state.typing[n] = [...pane.querySelectorAll(".typing")].some(visible);
      state.them[n] = [...pane.querySelectorAll("li.them")].filter(visible).length;
      state.you[n] = pane.querySelectorAll("li.you").length;
    }
    const t = now();
    if (state.section !== last.section) audit.seen.push([t, { type: "phase", phase: section }]);
    for (const n of Object.keys(state.them)) {
      const chat = Number(n);
      for (let k = last.them[n] || 0; k < state.them[n]; k++) {
        audit.seen.push([t, { type: "message", from: "them", chat }]);
      }
      for (let k = last.you[n] || 0; k < state.you[n]; k++) {
        audit.seen.push([t, { type: "message", from: "you", chat }]);
      }
      if (state.typing[n] !== (last.typing[n] || false)) {
        audit.seen.push([t, { type: "typing", on: state.typing[n], chat }]);
      }
    }
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
  const count = (chat) => audit.shown.them[chat] || 0;
  const mine = (chat) => audit.shown.you[chat] || 0;
  const input = (chat) => $(`.pane[data-chat="${chat}"] .send-text`);
  // A keystroke a second of the study's clock into the message box. (The page sends a
  // "typing" frame for at most one a second of its own clock, which a fast study clock
  // outruns: a person witness would seem to stop typing and the chat end while they
  // write, so their keystrokes' frames are sent as the page does at speed 1.) Each
  // keystroke is due at its time from the start, not a pause after the one before: on a
  // loaded machine every pause came late, and a witness meant to answer after 7 s of
  // the study's clock answered after 14.
  async function type(seconds, witness, stop = () => false) {
    const start = performance.now();
    const at = (s) => new Promise((done) =>
      setTimeout(done, Math.max(0, start + (1000 * s) / cfg.speed - performance.now())));
    for (let typed = 1; typed <= seconds; typed++) {
      await at(typed);
      if (phase() !== "chat" || stop()) return;
      input(1).value += "a";
      input(1).dispatchEvent(new Event("input", { bubbles: true }));
      if (witness && audit.socket && audit.socket.readyState === WebSocket.OPEN) {
        audit.socket.send(JSON.stringify({ type: "typing" }));
      }
    }
    await at(seconds);
  }
  function send(text, chat) {
    input(chat).value = text;
    input(chat).dispatchEvent(new Event("input", { bubbles: true }));
    $(`.pane[data-chat="${chat}"] .send-form button`).click();
  }

  // The interrogator's messages go one at a time, each a second after the one before
  // was shown or refused: the server refuses a participant's messages that come too
  // close together, whichever chat they are for, and a refusal does not say which
  // message it refuses. Resolves once the message is shown (true) or refused (false).
  let sending = Promise.resolve();
  function submit(text, chat) {
    const shown = sending.then(async () => {
      const before = mine(chat);
      const refused = audit.refused;
      send(text, chat);
      await until(() => mine(chat) > before || audit.refused > refused ||
        phase() !== "chat", "the message shown or refused");
      return mine(chat) > before;
    });
    sending = shown.then(() => pause(1), () => {});
    return shown;
  }

  // One chat's questions, each a few seconds after the chat opened or the last answer.
  async function ask(chat) {
    for (let asked = 0; asked < cfg.turns; asked++) {
      await pause(uniform([2.0, 6.0]));
      if (phase() !== "chat") return;
      const question = "question " + (asked + 1) + "?";
      for (let tries = 0; tries < 3 && !(await submit(question, chat)); tries++) {
        if (phase() !== "chat") return;
      }
      // An answer is what comes after the question is shown (the rest of an earlier
      // answer may cross it).
      const answers = count(chat);
      await until(() => count(chat) > answers || phase() !== "chat", "an answer");
    }
  }

  // In three-party both chats at once, as a person would keep both going; then one
  // message too many to each (in a random order), soon after the last answer, to see
  // how each is refused.
  async function interrogate() {
    const chats = audit.chats === 2 ? (next() < 0.5 ? [1, 2] : [2, 1]) : [1];
    await Promise.all(chats.map(ask));
    for (const chat of chats) {
      await pause(uniform([0.5, 2.0]));
      if (phase() !== "chat") break;
      const refused = audit.refused;
      await submit("one more?", chat);
      if (audit.refused > refused) {
        const shown = $("#notice").hidden ? "" : $("#notice").textContent;
        audit.extras.push([performance.now(), { chat, received: audit.lastRefused, shown }]);
      }
    }
    await until(() => phase() === "verdict", "the verdict page");
    $(audit.chats === 2 ? '#verdict-three input[value="1"]' :
      '#verdict-two input[value="yes"]').click();
    $("#reason").value = "audit";
    $("#verdict-form button").click();
  }

  // Answers each question (or questions that came together) with the next of its plans;
  // a new question drops the rest of a burst, as the bot's session does.
  async function witness() {
    let answered = 0;
    let plans = 0;
    while (phase() === "chat") {
      if (count(1) <= answered) {
        await until(() => count(1) > answered || phase() !== "chat", "a question");
        continue;
      }
      answered = count(1);
      const plan = cfg.plans[Math.min(plans++, cfg.plans.length - 1)];
      const asked = () => count(1) > answered;
      for (const [seconds, text] of plan) {
        await type(seconds, true, asked);
        if (phase() !== "chat" || asked()) break;
        send(text, 1);
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

async function participant(browser, pid, seed, plans, log) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    context.setDefaultTimeout(TIMEOUT);
    context.setDefaultNavigationTimeout(TIMEOUT);
    await context.addInitScript(recorder);
    const page = await context.newPage();
    page.on("pageerror", (error) => log.errors.push(pid + ": " + String(error)));
    await page.goto(config.base + "/s/" + config.study + "?pid=" + pid);
    // A participant is done within the lobby's wait and a chat's time limit, on a clock
    // `speed` times faster; more for a loaded machine (see TIMEOUT).
    const cfg = { ...config, seed, plans, timeout: TIMEOUT + (1000 * 600) / config.speed };
    const role = await page.evaluate(play, cfg).catch((error) => {
      log.errors.push(pid + ": " + String(error));
      return null;
    });
    const record = await page.evaluate(() => {
      const { frames, sent, seen, extras } = window.__audit;
      return { frames, sent, seen, extras };
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
      playing.push(participant(browser, pid, config.seed * 100003 + n + 1, config.plans[n], log));
      await new Promise((done) => setTimeout(done, (1000 * config.gaps[n]) / config.speed));
    }
    await Promise.all(playing);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(log));
})().catch((error) => { console.error(error); process.exit(1); });
