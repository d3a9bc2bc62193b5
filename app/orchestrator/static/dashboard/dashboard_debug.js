// Dashboard: the live telemetry stream of the watched debug session. Loaded after
// dashboard_activity.js (see dashboard.js).
"use strict";

// --- debug sessions: live telemetry -------------------------------------------------------
// One session is watched at a time. GET /events is read with fetch() and parsed here, not with
// EventSource: it needs the bearer header, and the server takes ?token= on /api/events only.
const DEBUG_EVERY_MS = 5000;        // a safety net: connection events already trigger a refresh
const DEBUG_RETRY_MS = 2000;
const MAX_DEBUG_ROWS = 500;         // the stream is bounded in the DOM; the oldest rows go
const MAX_SUMMARY_CHARS = 300;
const MAX_DETAIL_STRING = 2000;     // strings kept for a row's details (snapshots, screenshots)
const MAX_NETWORK_NAMES = 1000;
const COMMANDS = new Set(["click", "hover", "focus", "type", "select", "scroll", "navigate", "evaluate",
                          "request_ui_tree", "request_dom_snapshot", "request_state", "request_screenshot"]);
const FILTERS = {
  all: () => true,
  console: (t) => t === "console",
  error: (t) => t === "error",
  navigation: (t) => t === "navigation",
  network: (t) => t === "network_request" || t === "network_response",
  dom: (t) => t === "dom_mutations" || t === "dom_snapshot" || t === "ui_tree" || t === "screenshot",
  state: (t) => t === "state_update",
  commands: (t) => t === "command_result" || COMMANDS.has(t),
  connection: (t) => ["connection_event", "hello", "capabilities", "dropped"].includes(t),
};

const debug = {
  sessions: new Map(),   // session id -> its last description (GET /debug/sessions)
  rows: new Map(),       // session id -> {tr, cells...}
  urls: new Map(),       // session id -> the URLs POST /debug/sessions answered
  selected: null,        // the watched session
  stream: null,          // AbortController of the watched session's event stream
  lastEventId: "",       // to resume where the stream broke off (Last-Event-ID)
  paused: false,
  held: [],              // messages that arrived while paused (bounded too)
  heldLost: 0,
  names: new Map(),      // network requestId -> "METHOD url", to name its response
  refreshSoon: null,
};

function debugSay(text, bad) {
  const m = $("debug-message");
  m.textContent = text || "";
  m.classList.toggle("bad", !!bad);
}

function clock(ms) {
  const d = typeof ms === "number" ? new Date(ms) : new Date();
  return d.toLocaleTimeString([], {hour12: false}) + "." + String(d.getMilliseconds()).padStart(3, "0");
}

function shorten(text, max) {
  const s = String(text);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

function brief(value) {
  if (value === undefined) return "";
  try {
    return shorten(typeof value === "string" ? value : JSON.stringify(value), 120);
  } catch (e) {
    return "";
  }
}

function targetText(t) {
  if (!t || typeof t !== "object") return "";
  if (t.stableId) return `#${t.stableId}`;
  if (t.selector) return t.selector;
  if (t.text) return `"${t.text}"`;
  return brief(t);
}

/** The one line a message shows in the stream: what a person scans for. */
function summarize(m) {
  switch (m.type) {
    case "console":
      return `${m.level || "log"}: ${(m.args || []).map(String).join(" ")}`;
    case "error": {
      const where = m.filename ? ` (${m.filename}:${m.lineno ?? "?"}:${m.colno ?? "?"})` : "";
      return `${m.errorType || "error"}: ${m.message || ""}${where}`;
    }
    case "navigation":
      return `${m.trigger || ""} ${m.url || ""}${m.previousUrl ? ` (from ${m.previousUrl})` : ""}`.trim();
    case "network_request":
      return `${m.method || "?"} ${m.url || ""}${m.initiator ? ` (${m.initiator})` : ""}`;
    case "network_response": {
      const name = debug.names.get(m.requestId) || `request ${m.requestId}`;
      const ms = typeof m.duration === "number" ? ` · ${Math.round(m.duration)} ms` : "";
      return `${name} → ${m.status ?? "?"} ${m.statusText || ""}${ms}`;
    }
    case "dom_mutations": {
      const list = m.mutations || [];
      const kinds = {};
      for (const x of list) kinds[x.mutationType] = (kinds[x.mutationType] || 0) + 1;
      const detail = Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(", ");
      return `${list.length} mutation${list.length === 1 ? "" : "s"}${detail ? ` (${detail})` : ""}`;
    }
    case "dom_snapshot":
      return `${(m.html || "").length} characters of HTML`;
    case "ui_tree":
      return `${(m.items || []).length} elements`;
    case "state_update":
      return `${m.scope || ""}: ${brief(m.state)}`;
    case "screenshot":
      return `${m.width}×${m.height} PNG`;
    case "hello":
      return `${[m.appName, m.appVersion].filter(Boolean).join(" ") || "an app"} at ${m.url || "?"}`;
    case "capabilities":
      return (m.capabilities || []).join(", ");
    case "command_result": {
      const ms = typeof m.duration === "number" ? ` · ${Math.round(m.duration)} ms` : "";
      const err = m.error ? ` ${m.error.code || ""}: ${m.error.message || ""}` : "";
      const res = m.result !== undefined ? ` ${brief(m.result)}` : "";
      return `${m.requestType || "?"} ${m.success ? "ok" : "failed"}${err}${res}${ms} [${m.requestId || ""}]`;
    }
    case "connection_event": {
      const who = m.appId || m.agentId || "";
      const apps = m.connectedApps ? ` · apps ${m.connectedApps.length}` : "";
      const agents = typeof m.connectedAgents === "number" ? ` · agents ${m.connectedAgents}` : "";
      return `${m.event || ""} ${who}${apps}${agents}`;
    }
    case "dropped":
      return `${m.count} message(s) lost: this view fell behind`;
    default:
      if (COMMANDS.has(m.type)) {
        const bits = [targetText(m.target), m.text !== undefined ? `"${m.text}"` : "", m.url || "",
                      m.code ? brief(m.code) : "", m.scope || ""].filter(Boolean).join(" ");
        return `→ ${bits} [${m.requestId || ""}]`;
      }
      return brief(Object.fromEntries(Object.entries(m).filter(([k]) =>
        !["protocolVersion", "sessionId", "timestamp", "type"].includes(k))));
  }
}

/** A copy of a message for its details, long strings (HTML, base64 PNGs) cut. */
function compact(value, depth = 0) {
  if (typeof value === "string") {
    return value.length > MAX_DETAIL_STRING ? `${value.slice(0, MAX_DETAIL_STRING)}… (${value.length} characters)` : value;
  }
  if (!value || typeof value !== "object" || depth > 12) return value;
  if (Array.isArray(value)) return value.map((v) => compact(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compact(v, depth + 1)]));
}

/** A Server-Sent Events parser: feed it text as it arrives; it calls onEvent({id, event, data}). */
function sseParser(onEvent, onRetry) {
  let buffer = "";
  let data = [];
  let id = null;
  let event = "message";
  return (chunk) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop();   // an unfinished line waits for the rest
    for (let line of lines) {
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (data.length) onEvent({id, event, data: data.join("\n")});
        data = [];
        id = null;
        event = "message";
        continue;
      }
      if (line.startsWith(":")) continue;   // a heartbeat
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "id") id = value;
      else if (field === "event") event = value;
      else if (field === "retry" && /^\d+$/.test(value)) onRetry(Number(value));
    }
  };
}

function setStreamState(status, text) {
  const badge = $("debug-state");
  badge.dataset.status = status;
  badge.textContent = text;
}

function wait(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, {once: true});
  });
}

async function followStream(sessionId, ctrl) {
  let retryMs = DEBUG_RETRY_MS;
  while (!ctrl.signal.aborted) {
    try {
      const headers = {"X-Agent-Id": "dashboard", Accept: "text/event-stream"};
      if (token) headers.Authorization = "Bearer " + token;
      if (debug.lastEventId) headers["Last-Event-ID"] = debug.lastEventId;
      const resp = await fetch(`/events?sessionId=${encodeURIComponent(sessionId)}`,
                               {headers, signal: ctrl.signal, cache: "no-store"});
      if (resp.status === 401) {
        setStreamState("error", "token needed");
        askToken(loggedIn ? "Your login has ended: type the token again." : "");
        loggedIn = false;
        return;   // the token form starts it again
      }
      if (resp.status === 404) {
        setStreamState("ended", "session ended");
        return;
      }
      if (!resp.ok || !resp.body) {
        const data = await resp.json().catch(() => ({}));
        setStreamState("error", data.error ? shorten(data.error, 80) : `HTTP ${resp.status}`);
        const after = Number(resp.headers.get("Retry-After"));
        if (after > 0) retryMs = after * 1000;
      } else {
        setStreamState("live", "live");
        const push = sseParser((ev) => {
          if (ev.id) debug.lastEventId = ev.id;
          let msg;
          try {
            msg = JSON.parse(ev.data);
          } catch (e) {
            return;
          }
          if (msg && typeof msg === "object" && typeof msg.type === "string") receive(msg);
        }, (ms) => { retryMs = ms; });
        const reader = resp.body.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          push(decoder.decode(value, {stream: true}));
        }
        if (ctrl.signal.aborted) return;
        setStreamState("starting", "reconnecting");
      }
    } catch (e) {
      if (ctrl.signal.aborted) return;
      setStreamState("error", "reconnecting");
    }
    await wait(retryMs, ctrl.signal);
  }
}

function stopStream() {
  if (debug.stream) debug.stream.abort();
  debug.stream = null;
}

function startStream() {
  stopStream();
  if (!debug.selected || (authRequired && !loggedIn)) return;
  const ctrl = new AbortController();
  debug.stream = ctrl;
  setStreamState("starting", "connecting");
  // Ended on its own (session gone, token refused): a click on Watch may start it again.
  followStream(debug.selected, ctrl).finally(() => { if (debug.stream === ctrl) debug.stream = null; });
}

function receive(msg) {
  if (msg.type === "network_request" && msg.requestId) {
    debug.names.set(msg.requestId, `${msg.method || "?"} ${msg.url || ""}`);
    if (debug.names.size > MAX_NETWORK_NAMES) debug.names.delete(debug.names.keys().next().value);
  }
  if (msg.type === "connection_event" || msg.type === "hello") refreshDebugSoon();
  if (debug.paused) {
    debug.held.push(msg);
    if (debug.held.length > MAX_DEBUG_ROWS) {
      debug.held.shift();
      debug.heldLost += 1;
    }
    showCount();
    return;
  }
  addRow(msg);
  showCount();
}

function addRow(msg) {
  const li = el("li");
  li.dataset.type = msg.type;
  if (msg.type === "console" && msg.level) li.dataset.level = msg.level;
  if (msg.type === "command_result" && !msg.success) li.classList.add("failed");
  if (msg.type === "network_response" && msg.ok === false) li.classList.add("failed");
  li.title = "click for the whole message";
  li.append(el("time", "", clock(msg.timestamp)), el("strong", "", msg.type),
            el("span", "summary", shorten(summarize(msg), MAX_SUMMARY_CHARS)));
  const detail = compact(msg);
  li.addEventListener("click", (ev) => {
    if (ev.target.tagName === "PRE") return;   // let people select text in the details
    const open = li.querySelector("pre");
    if (open) {
      open.remove();
      li.classList.remove("open");
    } else {
      li.append(el("pre", "", JSON.stringify(detail, null, 2)));
      li.classList.add("open");
    }
  });
  li.hidden = !FILTERS[$("debug-filter").value](msg.type);
  const list = $("debug-stream");
  list.prepend(li);
  while (list.children.length > MAX_DEBUG_ROWS) list.lastChild.remove();
}

function showCount() {
  const shown = $("debug-stream").children.length;
  let text = `${shown} shown`;
  if (debug.paused) text += ` · paused, ${debug.held.length} waiting`;
  if (debug.heldLost) text += ` (${debug.heldLost} older ones let go)`;
  $("debug-count").textContent = text;
}

$("debug-filter").addEventListener("change", () => {
  const keep = FILTERS[$("debug-filter").value];
  for (const li of $("debug-stream").children) li.hidden = !keep(li.dataset.type);
});

$("debug-pause").addEventListener("click", () => {
  debug.paused = !debug.paused;
  const button = $("debug-pause");
  button.textContent = debug.paused ? "Resume" : "Pause";
  button.setAttribute("aria-pressed", String(debug.paused));
  if (!debug.paused) {
    const held = debug.held;
    debug.held = [];
    debug.heldLost = 0;
    for (const msg of held) addRow(msg);
  }
  showCount();
});

$("debug-clear").addEventListener("click", () => {
  $("debug-stream").replaceChildren();
  debug.held = [];
  debug.heldLost = 0;
  showCount();
});
