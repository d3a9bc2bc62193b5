// Pinchtab dashboard: instances, their tabs with live screenshots, lifecycle events, agent sessions,
// and the live telemetry of debug sessions. Plain DOM, no dependencies. Page titles, URLs and every debug
// message are web content: they only ever go into textContent, never into HTML.
// The page loads its scripts in order (index.html), as classic scripts sharing one global scope:
// this one holds the state, the API layer, the token prompt and the health badge; then
// dashboard_instances.js, dashboard_activity.js, dashboard_debug.js, dashboard_debug_sessions.js,
// dashboard_sessions.js, and dashboard_start.js, which starts everything once all are loaded.
"use strict";

const OLD_TOKEN_KEY = "pinchtab.token";   // where earlier versions kept the token: cleared
const INSTANCES_EVERY_MS = 5000;   // a safety net: events already trigger a refresh
const SHOTS_EVERY_MS = 3000;
const HEALTH_EVERY_MS = 5000;
const MAX_TABS_SHOWN = 8;
const MAX_EVENTS_SHOWN = 200;
const EVENT_TYPES = ["instance.started", "instance.stopped", "instance.error", "instance.attached", "instance.lost",
                     "provider.down", "provider.up"];

const $ = (id) => document.getElementById(id);
// Logged in by cookie (the server's /api/auth/login: HttpOnly, the page never holds the token),
// or, on a server without the login route, by a bearer token kept in memory for this page only.
let loggedIn = false;
let token = "";
let csrf = "";
let authRequired = false;
localStorage.removeItem(OLD_TOKEN_KEY);
let events = null;
const cards = new Map();     // instance id -> {root, badge, meta, err, tabs, buttons, tabEls: Map}
const shotBusy = new Set();  // tab ids with a screenshot in flight

class AuthError extends Error {}

async function api(method, path, body) {
  // Its own agent id: the dashboard's screenshot polling must not move anyone's current tab.
  const headers = {"X-Agent-Id": "dashboard"};
  if (token) headers.Authorization = "Bearer " + token;
  if (csrf) headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, {method, headers, credentials: "same-origin",
                                  body: body === undefined ? undefined : JSON.stringify(body)});
  if (resp.status === 401) {
    askToken(loggedIn ? "Your login has ended: type the token again." : "");
    loggedIn = false;
    throw new AuthError("token needed");
  }
  return resp;
}

async function json(method, path, body) {
  const resp = await api(method, path, body);
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(data.error || `${method} ${path}: HTTP ${resp.status}`);
  return data;
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function say(text, bad) {
  const m = $("message");
  m.textContent = text || "";
  m.classList.toggle("bad", !!bad);
}

// --- token --------------------------------------------------------------------------------
function askToken(error) {
  $("token-panel").hidden = false;
  $("token-error").textContent = error || "";
  $("token-input").focus();
}

$("token-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const typed = $("token-input").value.trim();
  let resp;
  try {
    resp = await fetch("/api/auth/login", {method: "POST", credentials: "same-origin",
                                           headers: {"Content-Type": "application/json"},
                                           body: JSON.stringify({token: typed})});
  } catch (e) {
    $("token-error").textContent = "server unreachable";
    return;
  }
  const data = await resp.json().catch(() => ({}));
  // No login route here (a server that guards every path answers "missing_token" for it): the
  // token goes with each call instead, from this page's memory only.
  if (resp.status === 404 || data.code === "missing_token") {
    token = typed;
  } else if (!resp.ok) {
    $("token-error").textContent = resp.status === 401 ? "That token was refused." : (data.error || "login failed");
    return;
  } else {
    csrf = data.csrfToken || "";
  }
  loggedIn = true;
  $("token-input").value = "";
  $("token-panel").hidden = true;
  $("token-change").hidden = !authRequired;
  if (location.pathname === "/login") history.replaceState(null, "", "/dashboard");
  refreshAll();
});

function refreshAll() {
  refreshInstances();
  refreshProfiles();
  refreshAgentSessions();
  refreshActivity();
  connectEvents();
  refreshDebugSessions();
  if (debug.selected) startStream();   // resumes from the last event seen
}

$("token-change").addEventListener("click", async () => {
  if (!token) {
    await fetch("/api/auth/logout", {method: "POST", credentials: "same-origin"}).catch(() => null);
  }
  loggedIn = false;
  token = csrf = "";
  $("elevate-form").hidden = true;   // a new login starts with no change waiting for the token
  retryAfterElevation = null;
  if (events) { events.close(); events = null; }
  askToken("");
});

// --- health -------------------------------------------------------------------------------
async function refreshHealth() {
  const badge = $("health");
  try {
    const resp = await fetch("/health", {credentials: "same-origin"});
    const h = await resp.json();
    authRequired = !!h.authRequired;
    // The server describes its security only to callers it knows: our login cookie still works.
    if (authRequired && !loggedIn && h.security) {
      loggedIn = true;
      $("token-panel").hidden = true;
      if (booted) refreshAll();   // boot() does it the first time
    }
    $("token-change").hidden = !authRequired || !loggedIn;
    const def = h.defaultInstance ? ` · default ${h.defaultInstance.status}` : "";
    badge.dataset.status = h.status;
    badge.textContent = h.status === "ok" ? `ok · ${h.instances} instance(s)${def}` : `error: ${h.reason || "unhealthy"}`;
    if (authRequired && !loggedIn) askToken("");
  } catch (e) {
    badge.dataset.status = "error";
    badge.textContent = "server unreachable";
  }
}
