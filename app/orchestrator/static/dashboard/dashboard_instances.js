// Dashboard: the instances panel, each instance's tabs with live screenshots, and the
// lifecycle events. Loaded after dashboard.js (see its head).
"use strict";

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
  refreshProviders();
}

// browsers.providers with their room and health; shown once there is more than this machine.
async function refreshProviders() {
  let list;
  try {
    list = await json("GET", "/providers");
  } catch (e) {
    return;   // an older server, or no rights: the instances say enough
  }
  const table = $("providers");
  table.hidden = list.length < 2 && !list.some((p) => p.kind !== "local");
  const body = table.querySelector("tbody");
  body.replaceChildren(...list.map((p) => {
    const row = el("tr");
    row.dataset.healthy = String(p.healthy);
    const health = p.healthy ? "up" : `down${p.detail ? ": " + p.detail : ""}`;
    row.append(el("td", "", p.name), el("td", "", p.kind), el("td", "", `${p.inUse} / ${p.capacity}`),
               el("td", p.healthy ? "" : "err", health), el("td", "muted", p.endpoint || ""));
    return row;
  }));
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
  const who = data.provider ? `${data.provider.name}` : `${inst.id || ""} ${inst.profileName || ""}`;
  li.append(when, el("strong", "", data.type), document.createTextNode(` ${who}`));
  const why = data.provider ? data.provider.reason : inst.error;
  if (why) li.append(el("div", "err", why));
  const list = $("events");
  list.prepend(li);
  while (list.children.length > MAX_EVENTS_SHOWN) list.lastChild.remove();
}
