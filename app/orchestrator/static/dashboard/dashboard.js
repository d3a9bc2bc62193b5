// Pinchtab dashboard: instances, their tabs with live screenshots, lifecycle events, agent sessions,
// and the live telemetry of debug sessions. Plain DOM, no dependencies. Page titles, URLs and every debug
// message are web content: they only ever go into textContent, never into HTML.
(() => {
  "use strict";

  const OLD_TOKEN_KEY = "pinchtab.token";   // where earlier versions kept the token: cleared
  const INSTANCES_EVERY_MS = 5000;   // a safety net: events already trigger a refresh
  const SHOTS_EVERY_MS = 3000;
  const HEALTH_EVERY_MS = 5000;
  const MAX_TABS_SHOWN = 8;
  const MAX_EVENTS_SHOWN = 200;
  const EVENT_TYPES = ["instance.started", "instance.stopped", "instance.error", "instance.attached"];

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

  // --- instances ----------------------------------------------------------------------------
  async function refreshInstances() {
    if (authRequired && !loggedIn) return;
    let list;
    try {
      list = await json("GET", "/instances");
    } catch (e) {
      if (!(e instanceof AuthError)) say(e.message, true);
      return;
    }
    const seen = new Set();
    for (const inst of list) {
      seen.add(inst.id);
      renderInstance(inst);
    }
    for (const [id, card] of cards) {
      if (!seen.has(id)) {
        card.root.remove();
        cards.delete(id);
      }
    }
    const box = $("instances");
    const empty = box.querySelector(".empty");
    if (list.length && empty) empty.remove();
    if (!list.length && !empty) box.append(el("p", "empty", "No instances yet."));
    refreshMetrics();   // one sample per poll for the cards' sparklines
  }

  function renderInstance(inst) {
    let card = cards.get(inst.id);
    if (!card) {
      card = {root: el("article", "instance"), tabEls: new Map(), samples: []};
      card.root.dataset.instanceId = inst.id;
      const head = el("div", "row");
      card.name = el("strong");
      card.badge = el("span", "badge");
      card.buttons = el("span", "row");
      const stop = el("button", "secondary", "Stop");
      stop.dataset.action = "stop";
      stop.addEventListener("click", () => act(inst.id, "stop"));
      const restart = el("button", "secondary", "Restart");
      restart.dataset.action = "restart";
      restart.addEventListener("click", () => act(inst.id, "restart"));
      card.buttons.append(stop, restart);
      head.append(card.name, card.badge, el("span", "spacer"), card.buttons);
      card.meta = el("div", "meta");
      card.err = el("div", "err");
      card.spark = el("div", "sparks");
      card.tabs = el("div", "tabs");
      card.root.append(head, card.meta, card.spark, card.err, card.tabs);
      $("instances").append(card.root);
      cards.set(inst.id, card);
    }
    card.root.dataset.status = inst.status;
    card.name.textContent = inst.profileName || inst.id;
    card.badge.textContent = inst.status;
    card.badge.dataset.status = inst.status;
    const kind = inst.attachType === "extension"
      ? `extension ${inst.extensionConnected ? "connected" : "waiting"} ${inst.extensionUrl || ""}`
      : (inst.attached ? `attached ${inst.cdpUrl || ""}` : inst.mode);
    card.meta.textContent = `${inst.id} · port ${inst.port} · ${kind} · since ${new Date(inst.startTime).toLocaleTimeString()}`;
    card.err.textContent = inst.error || "";
    for (const b of card.buttons.querySelectorAll("button")) b.disabled = inst.status === "stopping";
    if (inst.status !== "running") {
      card.tabs.replaceChildren();
      card.tabEls.clear();
    }
  }

  async function act(id, action) {
    say(`${action} ${id}…`);
    try {
      await json("POST", `/instances/${encodeURIComponent(id)}/${action}`);
      say(`${action} ${id}: done`);
    } catch (e) {
      if (!(e instanceof AuthError)) say(e.message, true);
    }
    refreshInstances();
  }

  $("start-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = {};
    const profile = $("start-profile").value.trim();
    const mode = $("start-mode").value;
    if (profile) body.profileId = profile;
    if (mode) body.mode = mode;
    const button = $("start-instance");
    button.disabled = true;
    say("starting an instance…");
    try {
      const inst = await json("POST", "/instances/start", body);
      say(`instance ${inst.id} starting on port ${inst.port}`);
      renderInstance(inst);
    } catch (e) {
      if (!(e instanceof AuthError)) say(e.message, true);
    } finally {
      button.disabled = false;
    }
  });

  // --- tabs and screenshots -----------------------------------------------------------------
  async function refreshTabs() {
    for (const [id, card] of cards) {
      if (card.root.dataset.status !== "running") continue;
      let tabs;
      try {
        tabs = await json("GET", `/instances/${encodeURIComponent(id)}/tabs`);
      } catch (e) {
        continue;
      }
      const keep = new Set();
      for (const tab of tabs.slice(0, MAX_TABS_SHOWN)) {
        keep.add(tab.id);
        let t = card.tabEls.get(tab.id);
        if (!t) {
          t = {root: el("figure", "tab"), img: el("img"), title: el("div", "title"), url: el("div", "url"),
               debug: el("button", "secondary", "Debug")};
          t.root.dataset.tabId = tab.id;
          t.img.alt = "screenshot";
          t.debug.type = "button";
          t.debug.dataset.action = "debug";
          t.debug.title = "watch this tab's console, errors, network and DOM below";
          const tabId = tab.id;
          t.debug.addEventListener("click", () => debugTab(tabId, t.debug));
          const actions = el("div", "actions");
          actions.append(t.debug);
          t.root.append(t.img, t.title, t.url, actions);
          card.tabs.append(t.root);
          card.tabEls.set(tab.id, t);
        }
        t.title.textContent = tab.title || "(untitled)";
        t.url.textContent = tab.url;
        t.debug.textContent = tabSession(tab.id) ? "Watch debug" : "Debug";
        shoot(tab.id, t.img);
      }
      for (const [tabId, t] of card.tabEls) {
        if (!keep.has(tabId)) {
          if (t.img.src.startsWith("blob:")) URL.revokeObjectURL(t.img.src);
          t.root.remove();
          card.tabEls.delete(tabId);
        }
      }
    }
  }

  async function shoot(tabId, img) {
    if (shotBusy.has(tabId)) return;
    shotBusy.add(tabId);
    try {
      const resp = await api("GET", `/tabs/${encodeURIComponent(tabId)}/screenshot?raw=true&quality=50&scale=0.5`);
      if (!resp.ok) return;
      const url = URL.createObjectURL(await resp.blob());
      const old = img.src;
      img.src = url;
      img.dataset.loaded = "true";
      if (old.startsWith("blob:")) URL.revokeObjectURL(old);
    } catch (e) {
      // a tab closed between the list and the shot: the next round drops it
    } finally {
      shotBusy.delete(tabId);
    }
  }

  // --- events -------------------------------------------------------------------------------
  function connectEvents() {
    if (events) events.close();
    if (authRequired && !loggedIn) return;
    // EventSource cannot send headers: the login cookie goes with it. A token never goes in a URL
    // (the server takes none there), so without a login the instance list is polled instead.
    if (token) return;
    events = new EventSource("/api/events");
    const state = $("events-state");
    events.onopen = () => { state.dataset.status = "live"; state.textContent = "live"; };
    events.onerror = () => { state.dataset.status = "error"; state.textContent = "reconnecting"; };
    for (const type of EVENT_TYPES) {
      events.addEventListener(type, (ev) => {
        const data = JSON.parse(ev.data);
        addEvent(data);
        if (data.instance) renderInstance(data.instance);
        refreshInstances();
      });
    }
  }

  function addEvent(data) {
    const li = el("li");
    li.dataset.type = data.type;
    const when = el("time", "", new Date().toLocaleTimeString());
    const inst = data.instance || {};
    li.append(when, el("strong", "", data.type), document.createTextNode(` ${inst.id || ""} ${inst.profileName || ""}`));
    if (inst.error) li.append(el("div", "err", inst.error));
    const list = $("events");
    list.prepend(li);
    while (list.children.length > MAX_EVENTS_SHOWN) list.lastChild.remove();
  }

  // --- profiles and activity ----------------------------------------------------------------
  function emptyRow(text, columns) {
    const row = el("tr", "empty");
    const td = el("td", "", text);
    td.colSpan = columns;
    row.append(td);
    return row;
  }

  function cell(text) {
    return el("td", "", text === undefined || text === null || text === "" ? "–" : String(text));
  }

  async function refreshProfiles() {
    if (authRequired && !loggedIn) return;
    let list;
    try {
      list = await json("GET", "/profiles");
    } catch (e) {
      return;  // older servers or a store that is busy: the panel waits for the next round
    }
    const body = $("profiles").querySelector("tbody");
    body.replaceChildren();
    if (!list.length) {
      body.append(emptyRow("No profiles yet.", 6));
    }
    let charts = 0;
    for (const p of list) {
      const row = el("tr");
      row.dataset.profile = p.name;
      const who = p.hasAccount ? [p.accountName, p.accountEmail].filter(Boolean).join(" · ") : "";
      row.append(cell(p.name), cell(who), cell(p.sizeMB === null || p.sizeMB === undefined ? "" : `${p.sizeMB} MB`),
                 cell(p.lastUsed ? new Date(p.lastUsed).toLocaleString() : ""), cell(p.running ? "running" : "idle"));
      const use = el("td", "use", "–");
      row.append(use);
      body.append(row);
      if (charts++ < MAX_PROFILE_CHARTS) drawProfileUse(p, use);
    }
  }

  // --- activity: what agents and people did, and charts of it ---------------------------------
  // The server keeps the dashboard's own reads out of the log (its X-Agent-Id, "dashboard", on a
  // GET); lines from before that rule are hidden here too. A change made from this page is a person's
  // doing and stays, under "dashboard".
  const ACTIVITY_WINDOW_MIN = 60;       // the chart's hour, one point a minute
  const ACTIVITY_LIMIT = 1000;          // the most /api/activity answers at once
  const MAX_ACTIVITY_SHOWN = 30;
  const MAX_SAMPLES = 60;               // points of an instance's sparklines (one per poll)
  const PROFILE_DAYS = 14;              // days of a profile's use drawn in the profiles table
  const MAX_PROFILE_CHARTS = 20;        // analytics asked for, per refresh, at most
  const SVG_NS = "http://www.w3.org/2000/svg";
  const NO_AGENT = "(none)";            // the agent filter's value for calls sent without an agent id
  const activity = {events: [], filters: {agent: "", instance: "", profile: ""}};

  function ownRead(ev) {
    return ev.agentId === "dashboard" && (ev.method === "GET" || ev.method === "HEAD");
  }

  function who(agentId) {
    if (agentId === "dashboard") return "person (dashboard)";
    return agentId || "(no agent id)";
  }

  // A line a person reads: what was done, before the method and path it was done by.
  function summary(ev) {
    const path = ev.path || "";
    const m = ev.method || "";
    const last = path.split("/").filter(Boolean).pop() || "";
    if (last === "navigate") return `navigated to ${ev.url || "?"}`;
    if (last === "action" || last === "actions") return `${ev.action || "action"}${ev.ref ? ` on ${ev.ref}` : ""}`;
    if (last === "download" || path.includes("/download")) return `downloaded ${ev.url || ""}`.trim();
    if (path === "/sessions" && m === "POST") return "made an agent session";
    if ((path === "/profiles" || path === "/profiles/create") && m === "POST") return "made a profile";
    if (last === "tab" && m === "POST") return `opened a tab ${ev.url || ""}`.trim();
    if (path.startsWith("/sessions/") && (m === "DELETE" || last === "revoke")) return "revoked an agent session";
    const started = path === "/instances/start" || path === "/instances/launch";
    if (started || (path.startsWith("/profiles/") && last === "start")) {
      return `started instance ${ev.instanceId || ""}`.trim();
    }
    if (path.startsWith("/instances/") && (last === "stop" || last === "restart")) {
      return `${last === "stop" ? "stopped" : "restarted"} instance ${ev.instanceId || ""}`.trim();
    }
    return ev.url ? `${last || path} ${ev.url}` : "";
  }

  function fillFilter(select, values, label) {
    const keep = select.value;
    const all = new Set(values);
    if (keep) all.add(keep);   // a chosen value stays while its events age out of the hour
    const options = [el("option", "", label)];
    options[0].value = "";
    for (const v of [...all].sort()) {
      const o = el("option", "", select.id === "activity-agent" ? who(v === NO_AGENT ? "" : v) : v);
      o.value = v;
      options.push(o);
    }
    select.replaceChildren(...options);
    select.value = keep;
  }

  async function refreshActivity() {
    if (authRequired && !loggedIn) return;
    const since = new Date(Date.now() - ACTIVITY_WINDOW_MIN * 60000).toISOString();
    let data;
    try {
      data = await json("GET", `/api/activity?limit=${ACTIVITY_LIMIT}&since=${encodeURIComponent(since)}`);
    } catch (e) {
      return;
    }
    activity.events = (data.events || []).filter((e) => !ownRead(e));
    const seen = (key) => activity.events.map((e) => e[key]).filter((v) => typeof v === "string");
    fillFilter($("activity-agent"), seen("agentId").map((a) => a || NO_AGENT), "every agent");
    fillFilter($("activity-instance"), seen("instanceId").filter(Boolean), "every instance");
    fillFilter($("activity-profile"), seen("profileName").filter(Boolean), "every profile");
    renderActivity();
  }

  function renderActivity() {
    const f = activity.filters;
    const shown = activity.events.filter((e) => (!f.agent || (e.agentId || NO_AGENT) === f.agent)
      && (!f.instance || e.instanceId === f.instance) && (!f.profile || e.profileName === f.profile));
    const list = $("activity");
    list.replaceChildren();
    for (const ev of shown.slice(0, MAX_ACTIVITY_SHOWN)) {
      const li = el("li");
      li.dataset.agent = ev.agentId || "";
      li.dataset.path = ev.path || "";
      li.dataset.method = ev.method || "";
      li.classList.toggle("failed", (ev.status || 0) >= 400);
      const when = ev.timestamp ? new Date(ev.timestamp).toLocaleTimeString() : "";
      const where = [ev.instanceId, ev.profileName].filter(Boolean).join(" · ");
      li.append(el("time", "", when), el("span", "who", who(ev.agentId)),
                el("strong", "", summary(ev) || `${ev.method} ${ev.path}`),
                el("span", "muted", ` ${ev.method} ${ev.path} ${ev.status || ""}${where ? ` · ${where}` : ""}`));
      list.append(li);
    }
    if (!shown.length) list.append(el("li", "empty", "Nothing done by an agent or a person in the last hour."));
    renderActivityCharts(shown);
  }

  for (const key of ["agent", "instance", "profile"]) {
    const id = `activity-${key}`;
    $(id).addEventListener("change", () => { activity.filters[key] = $(id).value; renderActivity(); });
  }

  // --- SVG charts, drawn here: no library, nothing but attributes and classes (the CSP allows no inline style)
  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }

  // The points of a line through `values` (oldest first) across width x height, `top` the highest value shown.
  function linePoints(values, width, height, top) {
    const step = values.length > 1 ? width / (values.length - 1) : 0;
    const span = Math.max(top, 1);
    const y = (v) => (height - 1 - (v / span) * (height - 2)).toFixed(1);
    return values.map((v, i) => `${(i * step).toFixed(1)},${y(v)}`).join(" ");
  }

  // A small line chart: one polyline per series ({name, values}), all on one scale; the values
  // stay on the SVG (data-<name>) so what it shows can be read back.
  function lineChart(series, width, height, title) {
    const chart = svgEl("svg", {viewBox: `0 0 ${width} ${height}`, width, height, role: "img", class: "chart"});
    const top = Math.max(1, ...series.flatMap((s) => s.values));
    chart.append(svgEl("line", {x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5, class: "axis"}));
    for (const s of series) {
      chart.setAttribute(`data-${s.name}`, s.values.join(","));
      chart.append(svgEl("polyline", {points: linePoints(s.values, width, height, top), class: `line ${s.name}`,
                                      "data-series": s.name}));
    }
    const t = svgEl("title");
    t.textContent = title;
    chart.append(t);
    chart.dataset.max = String(top);
    return chart;
  }

  // Calls and errors per minute over the last hour, one chart per agent.
  function renderActivityCharts(events) {
    const now = Date.now();
    const perAgent = new Map();
    for (const ev of events) {
      const age = Math.floor((now - Date.parse(ev.timestamp)) / 60000);
      if (!(age >= 0 && age < ACTIVITY_WINDOW_MIN)) continue;
      const agent = ev.agentId || "";
      if (!perAgent.has(agent)) perAgent.set(agent, {calls: new Array(ACTIVITY_WINDOW_MIN).fill(0),
                                                     errors: new Array(ACTIVITY_WINDOW_MIN).fill(0)});
      const b = perAgent.get(agent);
      const i = ACTIVITY_WINDOW_MIN - 1 - age;   // oldest minute on the left
      b.calls[i] += 1;
      if ((ev.status || 0) >= 400) b.errors[i] += 1;
    }
    const box = $("activity-charts");
    box.replaceChildren();
    for (const [agent, b] of [...perAgent].sort((x, y) => x[0].localeCompare(y[0]))) {
      const calls = b.calls.reduce((a, v) => a + v, 0);
      const errors = b.errors.reduce((a, v) => a + v, 0);
      const fig = el("figure", "agent-chart");
      fig.dataset.agent = agent;
      const chart = lineChart([{name: "calls", values: b.calls}, {name: "errors", values: b.errors}], 240, 48,
                              `${who(agent)}: ${calls} calls, ${errors} errors in the last hour`);
      chart.dataset.agent = agent;
      const caption = el("figcaption");
      caption.append(el("strong", "", who(agent)),
                     el("span", "muted", ` ${calls} calls · ${errors} errors · last hour`));
      fig.append(caption, chart);
      box.append(fig);
    }
  }

  // --- an instance's browser memory and tabs over the last polls, from /instances/metrics
  async function refreshMetrics() {
    if (authRequired && !loggedIn) return;
    let list;
    try {
      list = await json("GET", "/instances/metrics");
    } catch (e) {
      return;
    }
    for (const m of list || []) {
      const card = cards.get(m.id);
      if (!card || m.status !== "running") continue;
      // The browser's own processes when the instance told us; else what the manager measured.
      const mb = typeof m.browserMemoryMB === "number" ? m.browserMemoryMB : (m.rssBytes || 0) / 1048576;
      card.samples.push({memory: Math.round(mb * 10) / 10, tabs: typeof m.tabs === "number" ? m.tabs : 0});
      if (card.samples.length > MAX_SAMPLES) card.samples.shift();
      drawSparklines(card);
    }
  }

  function drawSparklines(card) {
    const s = card.samples;
    if (!s.length) return;
    const last = s[s.length - 1];
    const memory = lineChart([{name: "values", values: s.map((x) => x.memory)}], 120, 24,
                             `browser memory, last ${s.length} samples`);
    memory.dataset.kind = "memory";
    const tabs = lineChart([{name: "values", values: s.map((x) => x.tabs)}], 120, 24,
                           `open tabs, last ${s.length} samples`);
    tabs.dataset.kind = "tabs";
    const mem = el("span", "spark");
    mem.append(el("span", "muted", `memory ${last.memory} MB `), memory);
    const tab = el("span", "spark");
    tab.append(el("span", "muted", `tabs ${last.tabs} `), tabs);
    card.spark.replaceChildren(mem, tab);
  }

  // --- a profile's use over its last days, from /profiles/{id}/analytics
  function utcDays(count) {
    const days = [];
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    for (let i = count - 1; i >= 0; i--) days.push(new Date(today - i * 86400000).toISOString().slice(0, 10));
    return days;
  }

  function barChart(values, width, height, title) {
    const chart = svgEl("svg", {viewBox: `0 0 ${width} ${height}`, width, height, role: "img", class: "chart bars"});
    const top = Math.max(1, ...values);
    const w = width / values.length;
    values.forEach((v, i) => {
      const h = v ? Math.max(1, (v / top) * (height - 1)) : 0;
      chart.append(svgEl("rect", {x: (i * w + 0.5).toFixed(1), y: (height - h).toFixed(1),
                                  width: Math.max(1, w - 1).toFixed(1), height: h.toFixed(1), "data-value": v}));
    });
    chart.append(svgEl("line", {x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5, class: "axis"}));
    chart.dataset.values = values.join(",");
    const t = svgEl("title");
    t.textContent = title;
    chart.append(t);
    return chart;
  }

  async function drawProfileUse(profile, td) {
    let stats;
    try {
      stats = await json("GET", `/profiles/${encodeURIComponent(profile.id || profile.name)}/analytics`);
    } catch (e) {
      return;   // the activity log is off, or an agent session reads this page
    }
    const days = utcDays(PROFILE_DAYS);
    const byDay = stats.byDay || {};
    const values = days.map((d) => byDay[d] || 0);
    const chart = barChart(values, 84, 20,
                           `${stats.totalActions} calls in all; per day, ${days[0]} to ${days[days.length - 1]}`);
    chart.dataset.first = days[0];
    chart.dataset.last = days[days.length - 1];
    td.replaceChildren(chart, el("span", "muted", ` ${stats.last24h ?? 0} in 24 h`));
    td.dataset.total = String(stats.totalActions ?? 0);
  }

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

  // --- start --------------------------------------------------------------------------------
  let booted = false;
  async function boot() {
    await refreshHealth();
    booted = true;
    await refreshInstances();
    refreshProfiles();
    refreshAgentSessions();
    refreshActivity();
    connectEvents();
    refreshDebugSessions();
    setInterval(refreshDebugSessions, DEBUG_EVERY_MS);
    setInterval(refreshAgentSessions, INSTANCES_EVERY_MS * 3);
    setInterval(refreshProfiles, INSTANCES_EVERY_MS * 3);
    setInterval(refreshActivity, INSTANCES_EVERY_MS * 2);
    setInterval(refreshHealth, HEALTH_EVERY_MS);
    setInterval(refreshInstances, INSTANCES_EVERY_MS);
    setInterval(refreshTabs, SHOTS_EVERY_MS);
    refreshTabs();
  }
  boot();
})();
