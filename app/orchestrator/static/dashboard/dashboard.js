// Pinchtab dashboard: instances, their tabs with live screenshots, and lifecycle events.
// Plain DOM, no dependencies. Page titles and URLs are web content: they only ever go into
// textContent, never into HTML.
(() => {
  "use strict";

  const TOKEN_KEY = "pinchtab.token";
  const INSTANCES_EVERY_MS = 5000;   // a safety net: events already trigger a refresh
  const SHOTS_EVERY_MS = 3000;
  const HEALTH_EVERY_MS = 5000;
  const MAX_TABS_SHOWN = 8;
  const MAX_EVENTS_SHOWN = 200;
  const EVENT_TYPES = ["instance.started", "instance.stopped", "instance.error", "instance.attached"];

  const $ = (id) => document.getElementById(id);
  let token = localStorage.getItem(TOKEN_KEY) || "";
  let authRequired = false;
  let events = null;
  const cards = new Map();     // instance id -> {root, badge, meta, err, tabs, buttons, tabEls: Map}
  const shotBusy = new Set();  // tab ids with a screenshot in flight

  class AuthError extends Error {}

  async function api(method, path, body) {
    // Its own agent id: the dashboard's screenshot polling must not move anyone's current tab.
    const headers = {"X-Agent-Id": "dashboard"};
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const resp = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
    if (resp.status === 401) {
      askToken(token ? "That token was refused." : "");
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

  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token-input").value.trim();
    localStorage.setItem(TOKEN_KEY, token);
    $("token-input").value = "";
    $("token-panel").hidden = true;
    $("token-change").hidden = !authRequired;
    refreshInstances();
    connectEvents();
  });

  $("token-change").addEventListener("click", () => askToken(""));

  // --- health -------------------------------------------------------------------------------
  async function refreshHealth() {
    const badge = $("health");
    try {
      const resp = await fetch("/health");
      const h = await resp.json();
      authRequired = !!h.authRequired;
      $("token-change").hidden = !authRequired || !token;
      const def = h.defaultInstance ? ` · default ${h.defaultInstance.status}` : "";
      badge.dataset.status = h.status;
      badge.textContent = h.status === "ok" ? `ok · ${h.instances} instance(s)${def}` : `error: ${h.reason || "unhealthy"}`;
      if (authRequired && !token) askToken("");
    } catch (e) {
      badge.dataset.status = "error";
      badge.textContent = "server unreachable";
    }
  }

  // --- instances ----------------------------------------------------------------------------
  async function refreshInstances() {
    if (authRequired && !token) return;
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
  }

  function renderInstance(inst) {
    let card = cards.get(inst.id);
    if (!card) {
      card = {root: el("article", "instance"), tabEls: new Map()};
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
      card.tabs = el("div", "tabs");
      card.root.append(head, card.meta, card.err, card.tabs);
      $("instances").append(card.root);
      cards.set(inst.id, card);
    }
    card.root.dataset.status = inst.status;
    card.name.textContent = inst.profileName || inst.id;
    card.badge.textContent = inst.status;
    card.badge.dataset.status = inst.status;
    const kind = inst.attached ? `attached ${inst.cdpUrl || ""}` : inst.mode;
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
          t = {root: el("figure", "tab"), img: el("img"), title: el("div", "title"), url: el("div", "url")};
          t.root.dataset.tabId = tab.id;
          t.img.alt = "screenshot";
          t.root.append(t.img, t.title, t.url);
          card.tabs.append(t.root);
          card.tabEls.set(tab.id, t);
        }
        t.title.textContent = tab.title || "(untitled)";
        t.url.textContent = tab.url;
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
    if (authRequired && !token) return;
    // EventSource cannot send headers: the server takes ?token= on this one route.
    const url = "/api/events" + (token ? "?token=" + encodeURIComponent(token) : "");
    events = new EventSource(url);
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
  function cell(text) {
    return el("td", "", text === undefined || text === null || text === "" ? "–" : String(text));
  }

  async function refreshProfiles() {
    if (authRequired && !token) return;
    let list;
    try {
      list = await json("GET", "/profiles");
    } catch (e) {
      return;  // older servers or a store that is busy: the panel waits for the next round
    }
    const body = $("profiles").querySelector("tbody");
    body.replaceChildren();
    if (!list.length) {
      const row = el("tr", "empty");
      const td = el("td", "", "No profiles yet.");
      td.colSpan = 5;
      row.append(td);
      body.append(row);
    }
    for (const p of list) {
      const row = el("tr");
      row.dataset.profile = p.name;
      const who = p.hasAccount ? [p.accountName, p.accountEmail].filter(Boolean).join(" · ") : "";
      row.append(cell(p.name), cell(who), cell(p.sizeMB === null || p.sizeMB === undefined ? "" : `${p.sizeMB} MB`),
                 cell(p.lastUsed ? new Date(p.lastUsed).toLocaleString() : ""), cell(p.running ? "running" : "idle"));
      body.append(row);
    }
  }

  async function refreshActivity() {
    if (authRequired && !token) return;
    let data;
    try {
      data = await json("GET", "/api/activity?limit=60");
    } catch (e) {
      return;
    }
    const list = $("activity");
    list.replaceChildren();
    // What agents did: the dashboard's own screenshot polling is left out.
    for (const ev of (data.events || []).filter((e) => e.agentId !== "dashboard").slice(0, 15)) {
      const li = el("li");
      const when = ev.timestamp ? new Date(ev.timestamp).toLocaleTimeString() : "";
      li.append(el("time", "", when), el("strong", "", `${ev.method} ${ev.path}`),
                document.createTextNode(` ${ev.status || ""} ${ev.agentId || ""} ${ev.profileName || ""} ${ev.action || ""}`));
      list.append(li);
    }
  }

  // --- start --------------------------------------------------------------------------------
  async function boot() {
    await refreshHealth();
    await refreshInstances();
    refreshProfiles();
    refreshActivity();
    connectEvents();
    setInterval(refreshProfiles, INSTANCES_EVERY_MS * 3);
    setInterval(refreshActivity, INSTANCES_EVERY_MS * 2);
    setInterval(refreshHealth, HEALTH_EVERY_MS);
    setInterval(refreshInstances, INSTANCES_EVERY_MS);
    setInterval(refreshTabs, SHOTS_EVERY_MS);
    refreshTabs();
  }
  boot();
})();
