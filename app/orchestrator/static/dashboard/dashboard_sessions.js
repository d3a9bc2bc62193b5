// Dashboard: the agent sessions panel, and the token typed again for changes that need it.
// Loaded after dashboard_debug_sessions.js (see dashboard.js).
"use strict";

// --- agent sessions -----------------------------------------------------------------------
// Making or revoking a session needs the token typed again within the last minutes (the server's
// elevation window; logging in does not count); when it answers elevation_required, the panel
// asks for it and retries.
let retryAfterElevation = null;

function sessionSay(text, bad) {
  const m = $("session-message");
  m.textContent = text || "";
  m.classList.toggle("bad", !!bad);
}

async function elevatedJson(method, path, body, onDone) {
  const resp = await api(method, path, body);
  const data = await resp.json().catch(() => ({}));
  if (resp.status === 403 && data.code === "elevation_required") {
    retryAfterElevation = () => elevatedJson(method, path, body, onDone);
    $("elevate-form").hidden = false;
    $("elevate-input").focus();
    return;
  }
  if (!resp.ok) throw new Error(data.error || `${method} ${path}: HTTP ${resp.status}`);
  await onDone(data);
}

$("elevate-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const typed = $("elevate-input").value;
  $("elevate-input").value = "";
  try {
    await json("POST", "/api/auth/elevate", {token: typed});
  } catch (e) {
    if (!(e instanceof AuthError)) sessionSay("That token was refused.", true);
    return;
  }
  $("elevate-form").hidden = true;
  const retry = retryAfterElevation;
  retryAfterElevation = null;
  if (retry) await retry().catch((e) => sessionSay(e.message, true));
});

function sessionRowOf(s) {
  const row = el("tr");
  row.dataset.session = s.id;
  row.dataset.agent = s.agentId;
  const revoke = el("button", "secondary", "Revoke");
  revoke.type = "button";
  revoke.addEventListener("click", async () => {
    revoke.disabled = true;
    try {
      await elevatedJson("DELETE", `/sessions/${encodeURIComponent(s.id)}`, undefined, () => {
        sessionSay(`session ${s.id} revoked`);
        return refreshAgentSessions();
      });
    } catch (e) {
      if (!(e instanceof AuthError)) sessionSay(e.message, true);
    } finally {
      revoke.disabled = false;
    }
  });
  const actions = el("td");
  actions.append(revoke);
  row.append(cell(s.id), cell(s.agentId), cell(s.label), cell(new Date(s.lastSeenAt).toLocaleString()),
             cell(new Date(s.expiresAt).toLocaleString()), actions);
  return row;
}

async function refreshAgentSessions() {
  if (authRequired && !loggedIn) return;
  let resp;
  try {
    resp = await api("GET", "/sessions");
  } catch (e) {
    return;
  }
  const data = await resp.json().catch(() => null);
  if (!resp.ok) {
    if (data && data.code === "sessions_disabled") {
      $("session-form").hidden = true;
      sessionSay("Agent sessions are off on this server (sessions.agent.enabled).");
    }
    return;
  }
  const body = $("agent-sessions").querySelector("tbody");
  body.replaceChildren(...(data || []).map(sessionRowOf));
  if (!body.children.length) {
    body.append(emptyRow("No agent sessions.", 6));
  }
}

$("session-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const agentId = $("session-agent").value.trim();
  const label = $("session-label").value.trim();
  const button = $("session-create");
  button.disabled = true;
  const shown = (made) => {
    // The token exists only in this answer: show it once, never store it.
    $("session-token-agent").textContent = made.agentId;
    $("session-token-value").textContent = made.sessionToken;
    $("session-token").hidden = false;
    $("session-agent").value = $("session-label").value = "";
    sessionSay(`session ${made.id} made for ${made.agentId}`);
    return refreshAgentSessions();
  };
  try {
    await elevatedJson("POST", "/sessions", label ? {agentId, label} : {agentId}, shown);
  } catch (e) {
    if (!(e instanceof AuthError)) sessionSay(e.message, true);
  } finally {
    button.disabled = false;
  }
});
