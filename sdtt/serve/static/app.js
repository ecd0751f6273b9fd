// The participant page of `sdtt serve`. Every text from the server is shown with
// textContent, never as HTML. The page learns nothing about its partner but the
// messages themselves.
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const pid = params.get("PROLIFIC_PID") || params.get("pid") || "";
  const studyId = params.get("STUDY_ID");
  const sessionId = params.get("SESSION_ID");
  const study = location.pathname.split("/").filter(Boolean)[1] || "";
  const tokenKey = "sdtt:" + study + ":" + pid;
  const $ = (id) => document.getElementById(id);
  const sections = ["consent", "lobby", "chat", "verdict", "done"];
  const shown = new Map();
  let socket = null;
  let finished = false;
  let lastTyping = 0;
  let slider = false;

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

  function addMessage(m) {
    if (shown.has(m.id)) return;
    const li = document.createElement("li");
    li.className = m.from === "you" ? "you" : "them";
    li.textContent = m.text;
    li.dataset.id = String(m.id);
    shown.set(m.id, li);
    $("messages").appendChild(li);
    $("messages").scrollTop = $("messages").scrollHeight;
    if (slider) send({ type: "belief", value: Number($("belief-value").value) });
  }

  function phase(f) {
    if (f.phase === "consent") show("consent");
    else if (f.phase === "lobby") show("lobby");
    else if (f.phase === "chat") {
      $("instructions").textContent = f.instructions || "";
      $("belief").hidden = !slider || f.role === "witness";
      show("chat");
    } else if (f.phase === "verdict") show("verdict");
    else if (f.phase === "done") {
      finished = true;
      $("done-note").textContent = f.note || "";
      $("done-code").textContent = f.code || "";
      if (f.url) {
        const link = $("done-link");
        link.href = f.url;
        link.hidden = false;
        setTimeout(() => { location.href = f.url; }, 4000);
      }
      show("done");
      localStorage.removeItem(tokenKey);
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
      $("send-text").maxLength = f.max_chars;
      slider = !!f.slider;
      notice("");
    } else if (f.type === "phase") phase(f);
    else if (f.type === "history") {
      f.messages.forEach(addMessage);
    } else if (f.type === "message") {
      addMessage(f);
      if (f.from === "them") $("typing").hidden = true;
    } else if (f.type === "typing") $("typing").hidden = !f.on;
    else if (f.type === "refused") {
      notice(f.message);
      if (f.fatal) { finished = true; status(""); }
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/" + encodeURIComponent(study));
    socket.onopen = () => {
      send({ type: "join", pid: pid, study_id: studyId, session_id: sessionId,
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
  $("send-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("send-text").value;
    if (!text.trim()) return;
    send({ type: "send", text: text });
    $("send-text").value = "";
  });
  $("send-text").addEventListener("input", () => {
    const now = Date.now();
    if (now - lastTyping > 1000) { lastTyping = now; send({ type: "typing" }); }
  });
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
    const human = document.querySelector("input[name=human]:checked");
    if (!human) return;
    send({ type: "verdict", human: human.value, confidence: Number($("confidence").value),
           reason: $("reason").value });
  });

  if (!pid) {
    status("This link has no participant id. Please open the study from its link.");
    finished = true;
  } else connect();
})();
