// Dashboard: the profiles table and the recent-activity panel, with their SVG charts.
// Loaded after dashboard_instances.js (see dashboard.js).
"use strict";

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
