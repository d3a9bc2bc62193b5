// Dashboard: the debug sessions table, commands sent to a session, and a tab's Debug button.
// Loaded after dashboard_debug.js (see dashboard.js).
"use strict";

// --- the sessions table
function refreshDebugSoon() {
  if (debug.refreshSoon) return;
  debug.refreshSoon = setTimeout(() => { debug.refreshSoon = null; refreshDebugSessions(); }, 300);
}

function sinceText(iso) {
  const t = iso ? new Date(iso) : null;
  return t && !isNaN(t) ? t.toLocaleTimeString() : "?";
}

function peerLine(main, small) {
  const div = el("div", "peer");
  div.append(document.createTextNode(main));
  if (small) div.append(el("small", "", ` ${small}`));
  div.title = `${main} ${small || ""}`.trim();
  return div;
}

function fillSessionRow(row, s) {
  row.tr.dataset.tabId = s.tabId || "";
  row.id.replaceChildren(el("code", "", shorten(s.sessionId, 14)));
  row.id.title = s.sessionId;
  const where = [s.tabId ? `tab ${shorten(s.tabId, 10)}` : "", s.instanceId ? `on ${s.instanceId}` : ""].filter(Boolean);
  if (where.length) row.id.append(el("div", "muted", where.join(" · ")));
  const apps = s.apps || [];
  row.apps.replaceChildren(...apps.map((a) => peerLine(
    [a.appName, a.appVersion].filter(Boolean).join(" ") || a.appId || "app",
    [a.url, a.origin || a.kind, `since ${sinceText(a.connectedSince)}`].filter(Boolean).join(" · "))));
  if (!apps.length) row.apps.append(el("span", "muted", "no app connected"));
  const agents = s.agents || [];
  row.agents.replaceChildren(...agents.map((a) => peerLine(a.agentId || "agent",
    [`since ${sinceText(a.connectedSince)}`, a.queued ? `${a.queued} queued` : "",
     a.dropped ? `${a.dropped} dropped` : ""].filter(Boolean).join(" · "))));
  if (!agents.length) row.agents.append(el("span", "muted", "none"));
  row.messages.textContent = String(s.messages ?? 0);
  row.dropped.textContent = `${s.dropped ?? 0}${s.invalid ? ` (${s.invalid} invalid)` : ""}`;
  const watching = debug.selected === s.sessionId;
  row.tr.classList.toggle("selected", watching);
  row.watch.textContent = watching ? "Watching" : "Watch";
}

function sessionRow(s) {
  let row = debug.rows.get(s.sessionId);
  if (row) return row;
  row = {tr: el("tr"), id: el("td"), apps: el("td"), agents: el("td"), messages: el("td"), dropped: el("td"),
         actions: el("td"), watch: el("button", "", "Watch"), end: el("button", "secondary", "End")};
  row.tr.dataset.sessionId = s.sessionId;
  row.watch.type = row.end.type = "button";
  row.watch.dataset.action = "watch";
  row.end.dataset.action = "end";
  row.watch.addEventListener("click", () => watchSession(s.sessionId));
  row.end.addEventListener("click", () => endSession(s.sessionId, row.end));
  row.actions.append(row.watch, document.createTextNode(" "), row.end);
  row.tr.append(row.id, row.apps, row.agents, row.messages, row.dropped, row.actions);
  debug.rows.set(s.sessionId, row);
  return row;
}

async function refreshDebugSessions() {
  if (authRequired && !loggedIn) return;
  let data;
  try {
    data = await json("GET", "/debug/sessions");
  } catch (e) {
    if (!(e instanceof AuthError)) debugSay(`debug sessions: ${e.message}`, true);
    return;
  }
  if ($("debug-message").classList.contains("bad")) debugSay("");
  const list = data.sessions || [];
  const body = $("debug-sessions").querySelector("tbody");
  const seen = new Set();
  debug.sessions.clear();
  for (const s of list) {
    seen.add(s.sessionId);
    debug.sessions.set(s.sessionId, s);
    const row = sessionRow(s);
    fillSessionRow(row, s);
    body.append(row.tr);   // keeps the server's order; moving a row keeps its listeners
  }
  for (const [id, row] of debug.rows) {
    if (!seen.has(id)) {
      row.tr.remove();
      debug.rows.delete(id);
    }
  }
  const empty = body.querySelector("tr.empty");
  if (list.length && empty) empty.remove();
  if (!list.length && !empty) {
    body.append(emptyRow("No debug sessions.", 6));
  }
  $("debug-connections").textContent = typeof data.connections === "number"
    ? `${data.connections}/${data.maxConnections ?? "?"} connections` : "";
  if (debug.selected) showJoin(debug.selected);
  updateDebugButtons();
}

function showJoin(sessionId) {
  const box = $("debug-join");
  const s = debug.sessions.get(sessionId);
  if (s && s.tabId) {
    box.textContent = `The bridge is this session's app: tab ${s.tabId}, seen over CDP.`;
    return;
  }
  const known = debug.urls.get(sessionId);
  const id = encodeURIComponent(sessionId);
  const ws = location.protocol === "https:" ? "wss:" : "ws:";
  const appUrl = known?.appUrl || `${ws}//${location.host}/debug?role=app&sessionId=${id}`;
  const sdkUrl = known?.sdkUrl || `${location.origin}/debug/sdk.js?sessionId=${id}`;
  box.replaceChildren(document.createTextNode("Join as an app: "), el("code", "", `<script src="${sdkUrl}"></script>`),
                      document.createTextNode(" or connect the SDK to "), el("code", "", appUrl));
}

function watchSession(sessionId) {
  if (debug.selected === sessionId && debug.stream) return;
  debug.selected = sessionId;
  debug.lastEventId = "";
  debug.held = [];
  debug.heldLost = 0;
  debug.names.clear();
  $("debug-stream").replaceChildren();
  $("debug-answer").hidden = true;
  $("debug-live").hidden = false;
  $("debug-selected").textContent = sessionId;
  showJoin(sessionId);
  for (const [id, row] of debug.rows) {
    row.tr.classList.toggle("selected", id === sessionId);
    row.watch.textContent = id === sessionId ? "Watching" : "Watch";
  }
  showCount();
  startStream();
}

async function endSession(sessionId, button) {
  // Two clicks: ending a session disconnects its app and agents.
  if (button.dataset.armed !== "true") {
    button.dataset.armed = "true";
    button.textContent = "Really end?";
    setTimeout(() => { button.dataset.armed = ""; button.textContent = "End"; }, 4000);
    return;
  }
  try {
    await json("DELETE", `/debug/sessions/${encodeURIComponent(sessionId)}`);
    debugSay(`session ${shorten(sessionId, 14)} ended`);
  } catch (e) {
    if (!(e instanceof AuthError)) debugSay(e.message, true);
  }
  refreshDebugSessions();
}

$("debug-new").addEventListener("click", async () => {
  const button = $("debug-new");
  button.disabled = true;
  try {
    const created = await json("POST", "/debug/sessions", {});
    debug.urls.set(created.sessionId, created);
    debugSay(`session ${shorten(created.sessionId, 14)} created: an app joins it with its id`);
    await refreshDebugSessions();
    watchSession(created.sessionId);
  } catch (e) {
    if (!(e instanceof AuthError)) debugSay(e.message, true);
  } finally {
    button.disabled = false;
  }
});

// --- commands
function showAnswer(text, status) {
  const box = $("debug-answer");
  box.hidden = false;
  box.dataset.status = status;
  box.textContent = text;
}

async function sendCommand() {
  const sessionId = debug.selected;
  if (!sessionId) return;
  let body;
  try {
    body = JSON.parse($("debug-command").value);
  } catch (e) {
    showAnswer(`That is not JSON: ${e.message}`, "bad");
    return;
  }
  if (!body || typeof body !== "object" || Array.isArray(body) || typeof body.type !== "string") {
    showAnswer('A command is a JSON object with a "type", e.g. {"type": "click", "target": {"stableId": "e3"}}', "bad");
    return;
  }
  const button = $("debug-send");
  button.disabled = true;
  showAnswer(`${body.type}: waiting for the app…`, "waiting");
  try {
    const resp = await api("POST", `/debug/sessions/${encodeURIComponent(sessionId)}/commands`, body);
    const data = await resp.json().catch(() => ({}));
    if (!resp.ok) {
      const details = data.details ? `\n${JSON.stringify(data.details, null, 2)}` : "";
      showAnswer(`${resp.status} ${data.code || ""}: ${data.error || "the command failed"}${details}`, "bad");
    } else {
      showAnswer(JSON.stringify(compact(data), null, 2), data.success === false ? "bad" : "ok");
    }
  } catch (e) {
    if (!(e instanceof AuthError)) showAnswer(e.message, "bad");
  } finally {
    button.disabled = false;
  }
}

$("debug-command-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sendCommand();
});

$("debug-command").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    sendCommand();
  }
});

$("debug-template").addEventListener("change", () => {
  const pick = $("debug-template");
  if (pick.value) $("debug-command").value = pick.value;
  pick.value = "";
  $("debug-command").focus();
});

// --- a tab's Debug button: the bridge becomes the tab's app, and the panel watches it
function tabSession(tabId) {
  for (const s of debug.sessions.values()) if (s.tabId === tabId) return s;
  return null;
}

function updateDebugButtons() {
  for (const card of cards.values()) {
    for (const [tabId, t] of card.tabEls) {
      if (t.debug) t.debug.textContent = tabSession(tabId) ? "Watch debug" : "Debug";
    }
  }
}

async function debugTab(tabId, button) {
  const known = tabSession(tabId);
  if (known) {
    watchSession(known.sessionId);
    $("debug-panel").scrollIntoView({block: "start"});
    return;
  }
  button.disabled = true;
  try {
    const made = await json("POST", `/tabs/${encodeURIComponent(tabId)}/debug`, {});
    debugSay(`debugging tab ${shorten(tabId, 12)} in session ${shorten(made.sessionId, 14)}`);
    await refreshDebugSessions();
    watchSession(made.sessionId);
    $("debug-panel").scrollIntoView({block: "start"});
  } catch (e) {
    if (!(e instanceof AuthError)) say(e.message, true);
  } finally {
    button.disabled = false;
  }
}
