// The participant page of `sdtt serve`. Every text from the server is shown with
// textContent, never as HTML. The page learns nothing about its partners but the
// messages themselves.
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const pid = params.get("PROLIFIC_PID") || params.get("pid") || "";
  const studyId = params.get("STUDY_ID");
  const sessionId = params.get("SESSION_ID");
  const key = params.get("key");
  const study = location.pathname.split("/").filter(Boolean)[1] || "";
  const tokenKey = "sdtt:" + study + ":" + pid;
  const $ = (id) => document.getElementById(id);
  const sections = ["consent", "lobby", "chat", "verdict", "done"];
  const shown = new Map();
  const panes = new Map();
  let socket = null;
  let finished = false;
  let lastTyping = 0;
  let slider = false;
  let maxChars = 500;
  let role = "interrogator";
  let turns = 0;
  let activeChat = 1;
  let lobbyTimer = null;
  let blockPaste = false;
  let moveHere = false;  // the own person confirmed: this device takes over the link
  // Whether the verdict's confidence slider was moved: untouched, it says nothing (sent
  // as null), not a chosen 50.
  let confidenceMoved = false;
  // The study's clock runs this many times faster than real time ([chat] speed): the
  // seconds the server sends are study seconds, its timers here count real ones.
  let speed = 1;
  // A market game: the price history of a human security and where answers came.
  const market = { on: false, prices: [], answers: [], ask: null, quote: null };
  // A market study's game this page shows (from the server): every question, answer
  // and trade names it, so one sent as a game ends is refused, not taken into the next.
  let game = null;
  const SVG = "http://www.w3.org/2000/svg";

  function show(...names) {
    for (const s of sections) $(s).hidden = !names.includes(s);
    $("status").hidden = true;
  }

  // Texts from the study spec (consent, instructions) as paragraphs (blank lines
  // between them) with links ([label](https://...) or a bare https:// address); every
  // piece is a text node or an <a> with an http(s) address, never HTML.
  const LINK = /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)|(https?:\/\/[^\s<>"]*[^\s<>".,;:!?)\]])/g;
  function paragraphs(el, text) {
    el.replaceChildren();
    for (const block of (text || "").split(/\n[ \t]*\n/)) {
      if (!block.trim()) continue;
      const p = document.createElement("p");
      let at = 0;
      for (const m of block.matchAll(LINK)) {
        p.append(block.slice(at, m.index));
        const a = document.createElement("a");
        a.href = m[2] || m[3];
        a.textContent = m[1] || m[3];
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        p.append(a);
        at = m.index + m[0].length;
      }
      p.append(block.slice(at));
      el.appendChild(p);
    }
  }

  function status(text) {
    $("status").hidden = false;
    $("status").textContent = text;
  }

  function notice(text) {
    $("notice").hidden = !text;
    $("notice").textContent = text || "";
  }

  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  function setGame(named) {
    if (named !== game) $("trade-count").value = "1";  // a new game starts afresh
    game = named;
  }

  // A frame of the game shown (a question, answer or trade), named as the server did.
  function sendInGame(frame) {
    send(game == null ? frame : Object.assign({ game: game }, frame));
  }

  function makePanes(count) {
    if (panes.size === count) return;
    $("panes").replaceChildren();
    panes.clear();
    makeTabs(count);
    for (let n = 1; n <= count; n++) {
      const pane = $("pane-template").content.firstElementChild.cloneNode(true);
      pane.dataset.chat = String(n);
      pane.querySelector(".pane-title").textContent = count > 1 ? "Chat " + n : "";
      const input = pane.querySelector(".send-text");
      const button = pane.querySelector(".send-form button");
      input.maxLength = maxChars;
      // The text stays in the box until the server shows it sent (a refused message
      // can be fixed and sent again); the button waits for that answer.
      pane.querySelector(".send-form").addEventListener("submit", (e) => {
        e.preventDefault();
        if (!input.value.trim() || button.disabled) return;
        pane.pending = input.value;
        button.disabled = true;
        sendInGame({ type: "send", chat: n, text: input.value });
      });
      input.addEventListener("paste", (e) => {
        if (!blockPaste) return;
        e.preventDefault();
        notice("Please type your messages: pasting is turned off in this study.");
      });
      pane.querySelector(".report").addEventListener("click", () => {
        send({ type: "report", chat: n });
      });
      input.addEventListener("input", () => {
        const now = Date.now();
        if (now - lastTyping > 1000) { lastTyping = now; send({ type: "typing" }); }
      });
      $("panes").appendChild(pane);
      panes.set(n, pane);
    }
    for (const m of shown.values()) place(m);
    selectChat(1);
  }

  // Three-party on a narrow screen: one chat at a time, chosen by tabs (style.css
  // shows the tabs and hides the inactive chat only there); a tab marks unread answers.
  function makeTabs(count) {
    const tabs = $("tabs");
    tabs.replaceChildren();
    tabs.hidden = count < 2;
    for (let n = 1; count > 1 && n <= count; n++) {
      const tab = document.createElement("button");
      tab.type = "button";
      tab.className = "tab";
      tab.setAttribute("role", "tab");
      tab.dataset.chat = String(n);
      const unread = document.createElement("span");
      unread.className = "unread";
      unread.hidden = true;
      tab.append("Chat " + n, unread);
      tab.addEventListener("click", () => selectChat(n));
      tabs.appendChild(tab);
    }
  }

  function selectChat(n) {
    activeChat = n;
    for (const [k, pane] of panes) {
      pane.classList.toggle("inactive", k !== n);
      pane.unread = k === n ? 0 : pane.unread || 0;
    }
    for (const tab of $("tabs").children) {
      const on = tab.dataset.chat === String(n);
      tab.setAttribute("aria-selected", String(on));
      tab.classList.toggle("active", on);
    }
    showUnread();
  }

  function showUnread() {
    for (const tab of $("tabs").children) {
      const pane = panes.get(Number(tab.dataset.chat));
      const mark = tab.querySelector(".unread");
      mark.hidden = !(pane && pane.unread);
      mark.textContent = pane && pane.unread ? pane.unread + " new" : "";
    }
  }

  // "Turn k of N" above each chat, from the messages shown: a turn is answered once
  // the witness writes after the interrogator's side.
  function showTurns() {
    for (const [n, pane] of panes) {
      let answered = 0;
      let asked = false;
      for (const m of shown.values()) {
        if ((m.chat || 1) !== n) continue;
        const asker = role === "witness" ? m.from === "them" : m.from !== "them";
        if (asker) asked = true;
        else if (asked) { answered++; asked = false; }
      }
      pane.querySelector(".turns-left").textContent = !turns ? "" :
        answered >= turns ? "Last turn answered: the chat ends soon" :
        "Turn " + (answered + 1) + " of " + turns;
    }
  }

  function sentShown(m) {
    const pane = panes.get(m.chat || 1);
    if (!pane || m.from !== "you" || pane.pending == null || m.text !== pane.pending) return;
    const input = pane.querySelector(".send-text");
    if (input.value === pane.pending) input.value = "";
    pane.pending = null;
    pane.querySelector(".send-form button").disabled = false;
  }

  // A refusal or a new connection: the messages waiting for an answer may be sent again.
  function unblockSending() {
    for (const pane of panes.values()) pane.querySelector(".send-form button").disabled = false;
  }

  function place(m) {
    const pane = panes.get(m.chat || 1);
    if (!pane || m.li.parentNode) return;
    const list = pane.querySelector(".messages");
    list.appendChild(m.li);
    list.scrollTop = list.scrollHeight;
  }

  function addMessage(m) {
    if (shown.has(m.id)) return;
    const li = document.createElement("li");
    li.className = m.from === "you" ? "you" : m.from === "other" ? "other" : "them";
    li.textContent = m.text;
    const entry = { id: m.id, chat: m.chat, from: m.from, li: li };
    shown.set(m.id, entry);
    place(entry);
    sentShown(m);
    showTurns();
    const pane = panes.get(m.chat || 1);
    if (m.from === "them" && !m.old && pane && panes.size > 1 && (m.chat || 1) !== activeChat) {
      pane.unread = (pane.unread || 0) + 1;
      showUnread();
    }
    if (m.from === "them") { setTyping(m.chat, false); setPending(0); }
    if (m.from === "them" && market.on && !m.old) {
      market.answers.push(market.prices.length);
      drawChart();
    }
  }

  function setTyping(chat, on) {
    const pane = panes.get(chat || 1);
    if (pane) pane.querySelector(".typing").hidden = !on;
  }

  // A market answer to another bettor's question: its asker sees it first.
  let pendingTimer = null;
  function setPending(seconds) {
    const note = panes.get(1) && panes.get(1).querySelector(".pending");
    if (!note) return;
    clearTimeout(pendingTimer);
    // The answer itself clears the note; should it never come (a dropped connection),
    // the note still goes a second after it said the answer would be shown.
    if (seconds) pendingTimer = setTimeout(() => setPending(0), (seconds / speed + 1) * 1000);
    note.hidden = !seconds;
    note.textContent = seconds ? "The target answered the bettor who asked; you see the answer in " +
      fmt(seconds) + " seconds." : "";
  }

  function fmt(x) { return String(Math.round(x * 100) / 100); }

  function showMarket(f) {
    setGame(f.game);
    if (f.ends_in != null) startClock(f.ends_in);  // (its game may run in another process)
    market.prices = f.prices.slice();
    market.answers = f.answers.slice();
    market.ask = f.ask;
    showQuote(null);
    // Questions waiting in this bettor's own queue (only they see them).
    $("queued-line").hidden = $("queued").hidden = !(f.queued && f.queued.length);
    $("queued").replaceChildren(...(f.queued || []).map((text) => {
      const item = document.createElement("li");
      item.textContent = text;
      return item;
    }));
    for (const pane of panes.values()) {  // a queued question leaves the box as sent
      const input = pane.querySelector(".send-text");
      if (pane.pending != null && (f.queued || []).includes(pane.pending)) {
        if (input.value === pane.pending) input.value = "";
        pane.pending = null;
        pane.querySelector(".send-form button").disabled = false;
      }
    }
    $("points").textContent = fmt(f.points);
    $("holding").textContent = f.count ? f.count + " " + f.kind : "nothing";
    $("trade-count").max = String(f.max_trade);
    $("done-buying").disabled = !!f.done;
    $("done-buying").textContent = f.done ? "Done buying (you can still sell)" : "Done buying";
    for (const b of document.querySelectorAll(".trade[data-side=buy]")) b.disabled = !!f.done;
    drawChart();
  }

  function svg(name, attrs) {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    return el;
  }

  // A trade's cost, from the server, to confirm or cancel (null: none shown).
  function showQuote(q) {
    market.quote = q;
    $("confirm-trade").hidden = !q;
    $("confirm-text").textContent = q ? q.text.charAt(0).toUpperCase() + q.text.slice(1) + "?" : "";
  }

  // The price chart: x is the trade number, y the price 0-100; answers are dashed lines
  // (an answer after the last trade widens the chart, the price holding to its edge).
  function drawChart() {
    const chart = $("chart");
    const n = Math.max(market.prices.length - 1, ...market.answers, 1);
    const x = (i) => 5 + (290 * i) / n;
    const y = (p) => 115 - 1.1 * p;
    const parts = [svg("line", { x1: 5, x2: 295, y1: y(50), y2: y(50), class: "mid" })];
    for (const at of market.answers) {
      const ax = x(Math.max(at - 0.5, 0));
      parts.push(svg("line", { x1: ax, x2: ax, y1: 5, y2: 115, class: "answer" }));
    }
    const held = market.prices.concat(market.prices.slice(-1));
    const line = held.map((p, i) => x(Math.min(i, n)) + "," + y(p)).join(" ");
    parts.push(svg("polyline", { points: line, class: "price" }));
    chart.replaceChildren(...parts);
    const last = market.prices.length ? market.prices[market.prices.length - 1] : 50;
    $("price").textContent = fmt(last);
    $("price-computer").textContent = fmt(100 - last);
    $("ask").textContent = fmt(market.ask == null ? last : market.ask);
  }

  // The chat's time limit as a clock counting down (the server ends the chat).
  let clockTimer = null;
  function startClock(seconds) {
    clearInterval(clockTimer);
    $("clock").hidden = seconds == null;
    if (seconds == null) return;
    const end = Date.now() + (seconds * 1000) / speed;
    const tick = () => {
      const left = Math.max(0, Math.round((end - Date.now()) / 1000));
      $("clock").textContent = "Time left: " + Math.floor(left / 60) + ":" +
        String(left % 60).padStart(2, "0");
    };
    tick();
    clockTimer = setInterval(tick, 1000);
  }

  function phase(f) {
    notice("");  // a notice belongs to the page it came on
    unblockSending();
    document.body.classList.toggle("ended", f.phase === "verdict");
    $("chat-ended").hidden = f.phase !== "verdict";
    if (f.phase !== "lobby") waitingClock(null);
    if (f.phase !== "chat") startClock(null);
    if (f.phase === "consent") show("consent");
    else if (f.phase === "lobby") {
      // A market bettor waits for the next game's other bettors, who may still be
      // reading their last game's result.
      $("lobby-text").textContent = f.market ? "Waiting for the other bettors of your next " +
        "game (each presses Continue after a game). Please keep this page open." :
        "Waiting for a chat partner. Please keep this page open.";
      $("lobby-wait").hidden = !f.wait;
      $("lobby-wait").textContent = f.wait ? "This takes at most about " + duration(f.wait) + "." : "";
      waitingClock(Date.now());
      show("lobby");
    } else if (f.phase === "chat") {
      $("round").hidden = !f.round;
      $("round").textContent = f.round ? "Chat " + f.round[0] + " of " + f.round[1] : "";
      if ($("chat").hidden) {  // a new chat: the questions start blank
        $("verdict-form").reset();
        showConfidence(false);
      }
      paragraphs($("instructions"), f.instructions || "");
      role = f.role || "interrogator";
      turns = f.turns || 0;
      makePanes(f.chats || 1);
      showTurns();
      if (slider) {
        const value = typeof f.belief === "number" ? f.belief : 50;
        $("belief-value").value = String(value);
        $("belief-out").textContent = String(value);
      }
      startClock(f.ends_in);
      setGame(f.game == null ? null : f.game);
      market.on = !!f.market;
      $("market").hidden = !market.on;
      $("belief").hidden = market.on || !slider || f.role === "witness" || (f.chats || 1) > 1;
      show("chat");
    } else if (f.phase === "verdict") {
      const three = (f.chats || 1) > 1;
      $("verdict-two").hidden = three;
      $("verdict-three").hidden = !three;
      makePanes(f.chats || 1);
      $("market").hidden = true;
      $("belief").hidden = true;
      // The conversation stays in view above the questions: its last answer is seen.
      show("chat", "verdict");
    } else if (f.phase === "done") {
      $("done-note").textContent = f.note || "";
      $("done-code").textContent = f.code || "";
      $("done-code-line").hidden = !f.code;
      $("done-feedback").hidden = typeof f.right !== "boolean";
      $("done-feedback").textContent = f.right === true ? "Your answer was right." :
        f.right === false ? "Your answer was not right this time." : "";
      // Points per outcome (the spec's [study.points]), summed over the rounds.
      $("done-points").hidden = !f.points;
      $("done-points-total").textContent = f.points ? f.points.text : "";
      $("done-points-lines").replaceChildren(...(f.points ? f.points.lines : []).map((line) => {
        const item = document.createElement("li");
        item.textContent = line;
        return item;
      }));
      show("done");
      if (key) return;  // the own person waits for the next chat
      finished = true;
      localStorage.removeItem(tokenKey);
      if (f.url) {
        const link = $("done-link");
        link.href = f.url;
        link.hidden = false;
        setTimeout(() => { location.href = f.url; }, 4000);
      }
    }
  }

  // The spec's questions under "Why?": a choice (select) or a free-text answer.
  function makeQuestions(questions) {
    const box = $("questions");
    box.replaceChildren();
    questions.forEach((q, i) => {
      const label = document.createElement("label");
      label.htmlFor = "question-" + i;
      label.textContent = q.text;
      let field;
      if (q.options.length) {
        field = document.createElement("select");
        field.append(new Option("", ""));
        for (const option of q.options) field.append(new Option(option, option));
      } else {
        field = document.createElement("textarea");
        field.rows = 2;
        field.maxLength = 2000;
      }
      field.id = "question-" + i;
      field.dataset.question = q.id;
      field.required = !!q.required;
      box.append(label, field);
    });
  }

  function duration(seconds) {
    if (seconds < 90) return Math.max(10, Math.round(seconds / 10) * 10) + " seconds";
    return Math.round(seconds / 60) + " minutes";
  }

  // "You have waited m:ss" in the lobby, from ``since`` (null: stop).
  function waitingClock(since) {
    if (lobbyTimer !== null) clearInterval(lobbyTimer);
    lobbyTimer = null;
    if (since === null) return;
    const tick = () => {
      const s = Math.floor((Date.now() - since) / 1000);
      $("lobby-waited").textContent = "You have waited " + Math.floor(s / 60) + ":" +
        String(s % 60).padStart(2, "0") + ".";
    };
    tick();
    lobbyTimer = setInterval(tick, 1000);
  }

  function receive(event) {
    // A message carries one frame, or a list of those that were ready together.
    let data;
    try { data = JSON.parse(event.data); } catch (e) { return; }
    for (const f of Array.isArray(data) ? data : [data]) showFrame(f);
  }

  function showConfidence(moved) {
    confidenceMoved = moved;
    $("confidence").classList.toggle("unset", !moved);
    $("confidence-out").textContent = moved ? $("confidence").value + "%" : "not set";
  }

  // Another window or device took over (a fatal refusal): this page stops. Its chat
  // stays in view, but nothing in it can be typed, sent or clicked, and no clock runs.
  function stop() {
    finished = true;
    startClock(null);
    waitingClock(null);
    setPending(0);
    document.body.classList.add("stopped");
    for (const name of sections) $(name).inert = true;
    for (const el of document.querySelectorAll("section input, section button, section textarea")) {
      el.disabled = true;
    }
  }

  // Joined after all (the own person moved here): the page runs again.
  function restart() {
    document.body.classList.remove("stopped");
    for (const name of sections) $(name).inert = false;
    for (const el of document.querySelectorAll("section input, section button, section textarea")) {
      el.disabled = false;
    }
  }

  function showFrame(f) {
    if (f.type === "joined") {
      if (document.body.classList.contains("stopped")) restart();
      localStorage.setItem(tokenKey, f.token);
      moveHere = false;
      $("move-here").hidden = true;
      $("title").textContent = f.title;
      document.title = f.title;
      paragraphs($("consent-text"), f.consent);
      maxChars = f.max_chars;
      speed = f.speed || 1;
      slider = !!f.slider;
      blockPaste = !!f.block_paste;
      makeQuestions(f.questions || []);
      notice("");
      unblockSending();
    } else if (f.type === "phase") phase(f);
    else if (f.type === "history") {
      // The room's whole history (after a reconnect, or a new room): start afresh.
      shown.clear();
      for (const pane of panes.values()) pane.querySelector(".messages").replaceChildren();
      f.messages.forEach((m) => addMessage(Object.assign({ old: true }, m)));
    }
    else if (f.type === "message") addMessage(f);
    else if (f.type === "typing") setTyping(f.chat, f.on);
    else if (f.type === "answer_pending") setPending(f.in);
    else if (f.type === "market") showMarket(f);
    else if (f.type === "price") { market.prices.push(f.price); market.ask = f.ask; drawChart(); }
    else if (f.type === "quote") showQuote(f);
    else if (f.type === "reveal") {
      // It stays until the bettor presses Continue, whatever opens next.
      $("reveal").hidden = false;
      if (f.target) {  // a person target: paid by how human the final price found them
        $("reveal-text").textContent = "The game is over. The bettors' final price of human " +
          "was " + fmt(f.price) + ": you earned " + fmt(f.paid) + " points.";
        return;
      }
      $("reveal-text").textContent = "The chat partner was " +
        (f.human ? "a person" : "a computer program") + ". Your securities paid " +
        fmt(f.paid) + " points; you now have " + fmt(f.points) + " points.";
    }
    else if (f.type === "notice") notice(f.message);
    else if (f.type === "refused") {
      notice(f.message);
      showQuote(null);
      unblockSending();
      $("move-here").hidden = !f.move;
      if (f.fatal) { stop(); status(""); $("status").hidden = true; }
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/" + encodeURIComponent(study));
    socket.onopen = () => {
      send({ type: "join", pid: pid, study_id: studyId, session_id: sessionId, key: key,
             token: localStorage.getItem(tokenKey), move: moveHere });
    };
    socket.onmessage = receive;
    socket.onclose = () => {
      if (finished) return;
      status("Connection lost, reconnecting…");
      setTimeout(connect, 1000);
    };
  }

  $("consent-yes").addEventListener("click", () => send({ type: "consent" }));
  $("consent-no").addEventListener("click", () => send({ type: "decline" }));
  $("move-here").addEventListener("click", () => {
    moveHere = true;
    finished = false;
    notice("");
    $("move-here").hidden = true;
    connect();
  });
  for (const button of document.querySelectorAll(".trade")) {
    button.addEventListener("click", () => {
      const count = Math.floor(Number($("trade-count").value));
      if (!(count >= 1)) { notice("Enter how many securities (1 or more)."); return; }
      notice("");
      sendInGame({ type: "quote", kind: button.dataset.kind, side: button.dataset.side,
                   count: count });
    });
  }
  $("confirm-yes").addEventListener("click", () => {
    const q = market.quote;
    if (!q) return;
    showQuote(null);
    sendInGame({ type: "trade", kind: q.kind, side: q.side, count: q.count, quoted: q.cost });
  });
  $("confirm-no").addEventListener("click", () => showQuote(null));
  // Read: the next game may start (the server waits a while for every bettor to).
  $("reveal-ok").addEventListener("click", () => {
    $("reveal").hidden = true;
    send({ type: "continue" });
  });
  $("done-buying").addEventListener("click", () => sendInGame({ type: "done_buying" }));
  $("belief-value").addEventListener("change", () => {
    $("belief-out").textContent = $("belief-value").value;
    send({ type: "belief", value: Number($("belief-value").value) });
  });
  $("belief-value").addEventListener("input", () => {
    $("belief-out").textContent = $("belief-value").value;
  });
  $("confidence").addEventListener("input", () => showConfidence(true));
  $("verdict-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const human = document.querySelector("fieldset:not([hidden]) input[name=human]:checked");
    if (!human) { notice("Please choose an answer."); return; }
    const answers = {};
    for (const field of $("questions").querySelectorAll("[data-question]")) {
      if (field.value.trim()) answers[field.dataset.question] = field.value.trim();
    }
    send({ type: "verdict", human: human.value,
           confidence: confidenceMoved ? Number($("confidence").value) : null,
           reason: $("reason").value, answers: answers });
  });

  if (!pid) {
    status("This link has no participant id. Please open the study from its link.");
    finished = true;
  } else connect();
})();
