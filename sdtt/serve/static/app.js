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
  // A market game: the price history of a human security and where answers came.
  const market = { on: false, prices: [], answers: [] };
  const SVG = "http://www.w3.org/2000/svg";

  function show(name) {
    for (const s of sections) $(s).hidden = s !== name;
    $("status").hidden = true;
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

  function makePanes(count) {
    if (panes.size === count) return;
    $("panes").replaceChildren();
    panes.clear();
    for (let n = 1; n <= count; n++) {
      const pane = $("pane-template").content.firstElementChild.cloneNode(true);
      pane.dataset.chat = String(n);
      pane.querySelector(".pane-title").textContent = count > 1 ? "Chat " + n : "";
      const input = pane.querySelector(".send-text");
      input.maxLength = maxChars;
      pane.querySelector(".send-form").addEventListener("submit", (e) => {
        e.preventDefault();
        if (!input.value.trim()) return;
        send({ type: "send", chat: n, text: input.value });
        input.value = "";
      });
      input.addEventListener("input", () => {
        const now = Date.now();
        if (now - lastTyping > 1000) { lastTyping = now; send({ type: "typing" }); }
      });
      $("panes").appendChild(pane);
      panes.set(n, pane);
    }
    for (const m of shown.values()) place(m);
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
    const entry = { id: m.id, chat: m.chat, li: li };
    shown.set(m.id, entry);
    place(entry);
    if (m.from === "them") setTyping(m.chat, false);
    if (m.from === "them" && market.on && !m.old) {
      market.answers.push(market.prices.length);
      drawChart();
    }
  }

  function setTyping(chat, on) {
    const pane = panes.get(chat || 1);
    if (pane) pane.querySelector(".typing").hidden = !on;
  }

  function fmt(x) { return String(Math.round(x * 100) / 100); }

  function showMarket(f) {
    market.prices = f.prices.slice();
    market.answers = f.answers.slice();
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

  // The price chart: x is the trade number, y the price 0-100; answers are dashed lines.
  function drawChart() {
    const chart = $("chart");
    const n = Math.max(market.prices.length - 1, 1);
    const x = (i) => 5 + (290 * i) / n;
    const y = (p) => 115 - 1.1 * p;
    const parts = [svg("line", { x1: 5, x2: 295, y1: y(50), y2: y(50), class: "mid" })];
    for (const at of market.answers) {
      const ax = x(Math.max(at - 0.5, 0));
      parts.push(svg("line", { x1: ax, x2: ax, y1: 5, y2: 115, class: "answer" }));
    }
    const line = market.prices.map((p, i) => x(i) + "," + y(p)).join(" ");
    parts.push(svg("polyline", { points: line, class: "price" }));
    chart.replaceChildren(...parts);
    const last = market.prices.length ? market.prices[market.prices.length - 1] : 50;
    $("price").textContent = fmt(last);
    $("price-computer").textContent = fmt(100 - last);
  }

  // The chat's time limit as a clock counting down (the server ends the chat).
  let clockTimer = null;
  function startClock(seconds) {
    clearInterval(clockTimer);
    $("clock").hidden = seconds == null;
    if (seconds == null) return;
    const end = Date.now() + seconds * 1000;
    const tick = () => {
      const left = Math.max(0, Math.round((end - Date.now()) / 1000));
      $("clock").textContent = "Time left: " + Math.floor(left / 60) + ":" +
        String(left % 60).padStart(2, "0");
    };
    tick();
    clockTimer = setInterval(tick, 1000);
  }

  function phase(f) {
    if (f.phase !== "chat") startClock(null);
    if (f.phase === "consent") show("consent");
    else if (f.phase === "lobby") show("lobby");
    else if (f.phase === "chat") {
      $("instructions").textContent = f.instructions || "";
      makePanes(f.chats || 1);
      startClock(f.ends_in);
      $("reveal").hidden = true;
      market.on = !!f.market;
      $("market").hidden = !market.on;
      $("belief").hidden = market.on || !slider || f.role === "witness" || (f.chats || 1) > 1;
      show("chat");
    } else if (f.phase === "verdict") {
      const three = (f.chats || 1) > 1;
      $("verdict-two").hidden = three;
      $("verdict-three").hidden = !three;
      show("verdict");
    } else if (f.phase === "done") {
      $("done-note").textContent = f.note || "";
      $("done-code").textContent = f.code || "";
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

  function receive(event) {
    let f;
    try { f = JSON.parse(event.data); } catch (e) { return; }
    if (f.type === "joined") {
      localStorage.setItem(tokenKey, f.token);
      $("title").textContent = f.title;
      document.title = f.title;
      $("consent-text").textContent = f.consent;
      maxChars = f.max_chars;
      slider = !!f.slider;
      notice("");
    } else if (f.type === "phase") phase(f);
    else if (f.type === "history") {
      // The room's whole history (after a reconnect, or a new room): start afresh.
      shown.clear();
      for (const pane of panes.values()) pane.querySelector(".messages").replaceChildren();
      f.messages.forEach((m) => addMessage(Object.assign({ old: true }, m)));
    }
    else if (f.type === "message") addMessage(f);
    else if (f.type === "typing") setTyping(f.chat, f.on);
    else if (f.type === "market") showMarket(f);
    else if (f.type === "price") { market.prices.push(f.price); drawChart(); }
    else if (f.type === "reveal") {
      $("reveal").hidden = false;
      $("reveal").textContent = "The chat partner was " +
        (f.human ? "a person" : "a computer program") + ". Your securities paid " +
        fmt(f.paid) + " points; you now have " + fmt(f.points) + " points.";
    }
    else if (f.type === "refused") {
      notice(f.message);
      if (f.fatal) { finished = true; status(""); $("status").hidden = true; }
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/" + encodeURIComponent(study));
    socket.onopen = () => {
      send({ type: "join", pid: pid, study_id: studyId, session_id: sessionId, key: key,
             token: localStorage.getItem(tokenKey) });
    };
    socket.onmessage = receive;
    socket.onclose = () => {
      if (finished) return;
      status("Connection lost, reconnecting…");
      setTimeout(connect, 1000);
    };
  }

  $("consent-yes").addEventListener("click", () => send({ type: "consent" }));
  for (const button of document.querySelectorAll(".trade")) {
    button.addEventListener("click", () => {
      const count = Math.floor(Number($("trade-count").value));
      if (!(count >= 1)) { notice("Enter how many securities (1 or more)."); return; }
      notice("");
      send({ type: "trade", kind: button.dataset.kind, side: button.dataset.side, count: count });
    });
  }
  $("done-buying").addEventListener("click", () => send({ type: "done_buying" }));
  $("belief-value").addEventListener("change", () => {
    $("belief-out").textContent = $("belief-value").value;
    send({ type: "belief", value: Number($("belief-value").value) });
  });
  $("belief-value").addEventListener("input", () => {
    $("belief-out").textContent = $("belief-value").value;
  });
  $("confidence").addEventListener("input", () => {
    $("confidence-out").textContent = $("confidence").value;
  });
  $("verdict-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const human = document.querySelector("fieldset:not([hidden]) input[name=human]:checked");
    if (!human) { notice("Please choose an answer."); return; }
    send({ type: "verdict", human: human.value, confidence: Number($("confidence").value),
           reason: $("reason").value });
  });

  if (!pid) {
    status("This link has no participant id. Please open the study from its link.");
    finished = true;
  } else connect();
})();
