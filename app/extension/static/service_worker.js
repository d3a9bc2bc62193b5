// Pinchtab's extension: the service worker.
//
// Two loops against the Pinchtab address in chrome.storage.local (`pinchtab_url`):
// - commands of the original extension's protocol (navigate, query, click, type, screenshot,
//   get_tabs, open_tab, close_tab, get_session): over the WebSocket /commands where the server has
//   it (a command arrives the moment it is sent, its result goes back as a frame); else by polling,
//   GET /poll (held up to 20 s by a server that supports it), results with POST /response;
// - the CDP relay, when the address is a bridge (GET /extension/info answers 200): a WebSocket to
//   /extension/relay over which the bridge drives tabs through chrome.debugger.
// Both send the pairing token (`pinchtab_pairing`): as a bearer token on HTTP, in the first frame on
// the WebSocket (which cannot carry headers; a frame keeps it out of URLs and logs).
// An alarm every 30 s (the minimum) restarts whatever a sleeping service worker dropped.
"use strict";

const DEFAULTS = { pinchtab_url: "http://127.0.0.1:19222", pinchtab_pairing: "" };
const GROUP_TITLE = "Pinchtab";
const HELD_POLL_S = 20;
const QUICK_ANSWER_MS = 1000;   // a 204 sooner than this: the server does not hold polls
const EMPTY_POLL_WAIT_MS = 100; // the original extension's pause after an empty poll
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 2000;
const PING_EVERY_MS = 20000;    // traffic keeps a worker with an open WebSocket alive
const REFUSED_WAIT_MS = 10000;  // the bridge refused our pairing: try again, slowly
const NAVIGATE_TIMEOUT_MS = 30000;
const CHANNEL_RETRY_MS = 30000; // a server without the command channel: poll, and look again this often

let settings = null;
let generation = 0;        // bumped when settings change: loops of an older generation end
let running = 0;           // the generation whose loops run
let relay = null;          // {ws, welcomed} while a relay socket is open
let channel = null;        // the command channel's socket while it is open
const attached = new Set();   // tabs whose debugger the bridge attached
let agentTabs = new Set();    // tabs agents opened (kept in storage.session: survives worker restarts)
let groupId = null;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function loadSettings() {
  const s = await chrome.storage.local.get(DEFAULTS);
  settings = { pinchtab_url: String(s.pinchtab_url || DEFAULTS.pinchtab_url).replace(/\/+$/, ""),
               pinchtab_pairing: String(s.pinchtab_pairing || "") };
  const kept = await chrome.storage.session.get({ pinchtab_agent_tabs: [] });
  agentTabs = new Set(kept.pinchtab_agent_tabs);
  return settings;
}

function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  if (settings.pinchtab_pairing) headers.Authorization = `Bearer ${settings.pinchtab_pairing}`;
  return headers;
}

// --- lifecycle -------------------------------------------------------------------------------
async function ensureRunning() {
  if (running === generation && running !== 0) return;
  generation += 1;
  const gen = generation;
  running = gen;
  await loadSettings();
  if (gen !== generation) return;
  pollLoop(gen);
  relayLoop(gen);
}

function restart() {
  generation += 1;  // older loops see the change and end
  running = 0;
  if (relay) relay.ws.close(1000, "settings changed");
  if (channel) channel.close(1000, "settings changed");
  ensureRunning();
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && (changes.pinchtab_url || changes.pinchtab_pairing)) restart();
});
chrome.alarms.onAlarm.addListener(() => ensureRunning());
chrome.runtime.onStartup.addListener(() => ensureRunning());
chrome.runtime.onInstalled.addListener(() => ensureRunning());
chrome.alarms.create("pinchtab-wake", { periodInMinutes: 0.5 });
ensureRunning();

// --- polling ---------------------------------------------------------------------------------
async function pollLoop(gen) {
  let backoff = BACKOFF_MIN_MS;
  let channelTriedAt = 0;
  while (gen === generation) {
    if (Date.now() - channelTriedAt >= CHANNEL_RETRY_MS) {
      channelTriedAt = Date.now();
      if (await runChannel(gen)) {  // it was open and has closed: open it again at once
        channelTriedAt = 0;
        continue;
      }
    }
    const started = Date.now();
    try {
      chrome.runtime.getPlatformInfo();  // an extension API call: resets the worker's idle timer
      const resp = await fetch(`${settings.pinchtab_url}/poll?wait=${HELD_POLL_S}`,
        { headers: authHeaders({ Accept: "application/json" }), cache: "no-store" });
      if (resp.status === 200) {
        backoff = BACKOFF_MIN_MS;
        const command = await resp.json();
        runCommand(command);  // not awaited: the next poll goes out while it runs
        continue;
      }
      if (resp.status === 204) {
        backoff = BACKOFF_MIN_MS;
        if (Date.now() - started < QUICK_ANSWER_MS) await sleep(EMPTY_POLL_WAIT_MS);
        continue;
      }
      throw new Error(`poll answered ${resp.status}`);
    } catch (err) {
      await sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }
}

// The command channel: resolves true once an open channel closes, false when there is none.
function runChannel(gen) {
  return new Promise((resolve) => {
    let ws;
    try {
      ws = new WebSocket(settings.pinchtab_url.replace(/^http/, "ws") + "/commands");
    } catch (err) {
      resolve(false);
      return;
    }
    let opened = false;
    let ping = null;
    ws.onopen = () => {
      opened = true;
      channel = ws;
      ws.send(JSON.stringify({ type: "hello", pairing: settings.pinchtab_pairing }));
      ping = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('{"type":"ping"}'), PING_EVERY_MS);
    };
    ws.onmessage = (event) => {
      if (gen !== generation) return ws.close(1000, "settings changed");
      let command;
      try { command = JSON.parse(event.data); } catch (err) { return; }
      runCommand(command, (answer) => {
        if (ws.readyState !== WebSocket.OPEN) return false;
        ws.send(JSON.stringify(answer));
        return true;
      });
    };
    ws.onerror = () => {};  // onclose follows
    ws.onclose = () => {
      if (ping) clearInterval(ping);
      if (channel === ws) channel = null;
      resolve(opened);
    };
  });
}

// Runs a command; its answer goes back by `deliver` (the channel) when that takes it, else POST /response.
async function runCommand(command, deliver) {
  const { type, data, requestId } = command || {};
  let answer;
  try {
    const handler = COMMANDS[type];
    if (!handler) throw new Error(`Unknown command type: ${type}`);
    answer = { requestId, success: true, data: await handler(data || {}) };
  } catch (err) {
    answer = { requestId, success: false, error: String((err && err.message) || err) };
  }
  if (deliver && deliver(answer)) return;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const resp = await fetch(`${settings.pinchtab_url}/response`, {
        method: "POST", cache: "no-store",
        headers: authHeaders({ "Content-Type": "application/json" }),
        body: JSON.stringify(answer),
      });
      if (resp.ok) return;
    } catch (err) { /* the daemon is restarting: try again */ }
    await sleep(200 * (attempt + 1));
  }
}

async function activeTab() {
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  if (tab) return tab;
  const [any] = await chrome.tabs.query({ active: true });
  if (!any) throw new Error("No active tab");
  return any;
}

async function targetTab(tabId) {
  if (tabId === undefined || tabId === null || tabId === "") return activeTab();
  return chrome.tabs.get(Number(tabId));
}

function waitForLoad(tabId) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { done(); reject(new Error("Timeout waiting for the page to load")); },
      NAVIGATE_TIMEOUT_MS);
    const onUpdated = (id, change, tab) => {
      if (id === tabId && change.status === "complete") { done(); resolve(tab); }
    };
    const onRemoved = (id) => { if (id === tabId) { done(); reject(new Error(`Tab ${tabId} was closed`)); } };
    function done() {
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      chrome.tabs.onRemoved.removeListener(onRemoved);
    }
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.onRemoved.addListener(onRemoved);
  });
}

async function inPage(tabId, func, args) {
  const [res] = await chrome.scripting.executeScript({ target: { tabId }, func, args });
  const value = res ? res.result : undefined;
  if (value && value.__error) throw new Error(value.__error);
  return value;
}

// Injected into pages: each returns {__error} instead of throwing, so the reason reaches the caller
// (the original extension lost those errors and reported success).
function pageQuery(selector, mode) {
  if (mode === "page_text") return document.body ? document.body.innerText : "";
  let els;
  try { els = Array.from(document.querySelectorAll(selector)); } catch (e) {
    if (mode === "exists") return null;
    return { __error: `Invalid selector: ${selector}` };
  }
  if (mode === "exists") return { exists: els.length > 0, count: els.length };
  if (mode === "text") return els[0] ? els[0].innerText || els[0].textContent || "" : null;
  if (mode === "value") return els[0] ? (els[0].value ?? null) : null;
  if (mode === "html") return els.map((el) => el.outerHTML);
  return els.map((el, index) => {
    const rect = el.getBoundingClientRect();
    return {
      index, tagName: el.tagName.toLowerCase(),
      text: (el.innerText || el.textContent || "").trim().slice(0, 100),
      value: el.value ?? null, href: el.href ?? null,
      visible: rect.width > 0 && rect.height > 0,
    };
  });
}

function pageClick(selector, index) {
  let els;
  try { els = document.querySelectorAll(selector); } catch (e) { return { __error: `Invalid selector: ${selector}` }; }
  const el = els[index];
  if (!el) return { __error: `Element not found: ${selector} at index ${index}` };
  el.scrollIntoView({ block: "center" });
  el.click();
  return { clicked: true, selector, index };
}

function pageType(selector, text) {
  let el;
  try { el = document.querySelector(selector); } catch (e) { return { __error: `Invalid selector: ${selector}` }; }
  if (!el) return { __error: `Element not found: ${selector}` };
  el.focus();
  if (el.isContentEditable) el.textContent = text;
  else {
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, "value");
    if (setter && setter.set && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) setter.set.call(el, text);
    else el.value = text;
  }
  el.dispatchEvent(new Event("input", { bubbles: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return { typed: true, selector, text: text.slice(0, 50) };
}

function tabSummary(tab) {
  return { id: tab.id, url: tab.pendingUrl || tab.url || "", title: tab.title || "", active: tab.active,
           windowId: tab.windowId };
}

const COMMANDS = {
  async navigate({ url, tabId }) {
    if (!url) throw new Error("navigate needs a url");
    const tab = await targetTab(tabId);
    const loaded = waitForLoad(tab.id);
    await chrome.tabs.update(tab.id, { url });
    const done = await loaded;
    return { tabId: tab.id, url: done.url || url };
  },
  async query({ selector, mode = "list", tabId }) {
    const tab = await targetTab(tabId);
    return inPage(tab.id, pageQuery, [selector || "", mode]);
  },
  async click({ selector, index = 0, tabId }) {
    const tab = await targetTab(tabId);
    return inPage(tab.id, pageClick, [selector || "", Number(index) || 0]);
  },
  async type({ selector, text = "", tabId }) {
    const tab = await targetTab(tabId);
    return inPage(tab.id, pageType, [selector || "", String(text)]);
  },
  async screenshot({ tabId }) {
    const tab = await targetTab(tabId);
    if (!tab.active) await chrome.tabs.update(tab.id, { active: true });
    const dataUrl = await chrome.tabs.captureVisibleTab(tab.windowId, { format: "png" });
    return { dataUrl, tabId: tab.id };
  },
  async get_tabs() {
    return (await chrome.tabs.query({})).map(tabSummary);
  },
  async open_tab({ url, active = true }) {
    const tab = await openAgentTab(url || "about:blank", active !== false && active !== "false");
    return { tabId: tab.id, url: tab.pendingUrl || tab.url || url };
  },
  async close_tab({ tabId }) {
    if (tabId === undefined || tabId === null) throw new Error("close_tab needs a tabId");
    await chrome.tabs.remove(Number(tabId));
    return { closed: true, tabId: Number(tabId) };
  },
  async get_session() {
    const tabs = (await chrome.tabs.query({})).map(tabSummary);
    const active = tabs.find((t) => t.active);
    return { tabs, activeTabId: active ? active.id : null };
  },
};

// --- agent tabs: a tab group of their own ------------------------------------------------------
async function openAgentTab(url, active) {
  const tab = await chrome.tabs.create({ url, active });
  agentTabs.add(tab.id);
  chrome.storage.session.set({ pinchtab_agent_tabs: [...agentTabs] });
  try {
    await addToGroup(tab);
  } catch (err) { /* no tab strip (a headless browser, a popup window): the tab stays ungrouped */ }
  return tab;
}

async function addToGroup(tab) {
  if (groupId === null) {
    const [existing] = await chrome.tabGroups.query({ title: GROUP_TITLE, windowId: tab.windowId });
    if (existing) groupId = existing.id;
  }
  try {
    if (groupId !== null) {
      await chrome.tabs.group({ tabIds: [tab.id], groupId });
      return;
    }
  } catch (err) { groupId = null; /* the group was closed: make a new one */ }
  groupId = await chrome.tabs.group({ tabIds: [tab.id], createProperties: { windowId: tab.windowId } });
  await chrome.tabGroups.update(groupId, { title: GROUP_TITLE, color: "blue" });
}

function relayTab(tab) {
  return { tabId: tab.id, url: tab.pendingUrl || tab.url || "", title: tab.title || "", active: tab.active,
           windowId: tab.windowId, agentTab: agentTabs.has(tab.id) || (groupId !== null && tab.groupId === groupId) };
}

// --- the CDP relay -----------------------------------------------------------------------------
async function relayLoop(gen) {
  let backoff = BACKOFF_MIN_MS;
  while (gen === generation) {
    let isBridge = false;
    try {
      const resp = await fetch(`${settings.pinchtab_url}/extension/info`, { cache: "no-store" });
      isBridge = resp.status === 200;
    } catch (err) { /* not up */ }
    if (!isBridge) {
      await sleep(Math.max(backoff, 1000));
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      continue;
    }
    const closeCode = await runRelay(gen);
    if (closeCode === 0) backoff = BACKOFF_MIN_MS;  // it worked for a while: reconnect at once
    await sleep(closeCode === 4001 ? REFUSED_WAIT_MS : backoff);
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
  }
}

function runRelay(gen) {
  return new Promise((resolve) => {
    const wsUrl = settings.pinchtab_url.replace(/^http/, "ws") + "/extension/relay";
    let ws;
    try { ws = new WebSocket(wsUrl); } catch (err) { resolve(-1); return; }
    const state = { ws, welcomed: false };
    let pinger = null;
    relay = state;
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "hello", pairing: settings.pinchtab_pairing, extensionId: chrome.runtime.id,
                               version: chrome.runtime.getManifest().version, userAgent: navigator.userAgent }));
      pinger = setInterval(() => { if (ws.readyState === WebSocket.OPEN) ws.send('{"type":"ping"}'); }, PING_EVERY_MS);
    };
    ws.onmessage = (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch (err) { return; }
      if (msg.type === "welcome") { state.welcomed = true; return; }
      if (msg.type === "pong") return;
      if (msg.id !== undefined && msg.op) handleOp(state, msg);
    };
    ws.onclose = (event) => {
      clearInterval(pinger);
      if (relay === state) relay = null;
      const ours = [...attached];
      attached.clear();
      // The bridge is gone: leave the person's tabs without the debugger banner.
      for (const tabId of ours) chrome.debugger.detach({ tabId }).catch(() => {});
      resolve(state.welcomed ? 0 : event.code);
    };
    ws.onerror = () => {};
    if (gen !== generation) ws.close(1000, "settings changed");
  });
}

function relaySend(msg) {
  if (relay && relay.welcomed && relay.ws.readyState === WebSocket.OPEN) relay.ws.send(JSON.stringify(msg));
}

async function handleOp(state, msg) {
  let reply;
  try {
    if (!Object.hasOwn(OPS, msg.op)) throw new Error(`unknown op: ${msg.op}`);
    reply = { id: msg.id, result: (await OPS[msg.op](msg)) ?? {} };
  } catch (err) {
    reply = { id: msg.id, error: String((err && err.message) || err || `op ${msg.op} failed`) };
  }
  if (state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(reply));
}

const OPS = {
  async version() {
    return { version: chrome.runtime.getManifest().version, userAgent: navigator.userAgent };
  },
  async "tabs.list"() {
    return { tabs: (await chrome.tabs.query({})).map(relayTab) };
  },
  async "tabs.create"({ url, active }) {
    return relayTab(await openAgentTab(url || "about:blank", !!active));
  },
  async "tabs.close"({ tabId }) {
    await chrome.tabs.remove(tabId);
    return {};
  },
  async "tabs.activate"({ tabId }) {
    const tab = await chrome.tabs.update(tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
    return {};
  },
  async "debugger.attach"({ tabId }) {
    if (!attached.has(tabId)) {
      try {
        await chrome.debugger.attach({ tabId }, "1.3");
      } catch (err) {
        // Still attached from before this worker restarted: the session is ours; anything else fails.
        if (!/already attached/i.test(String((err && err.message) || err))) throw err;
      }
      attached.add(tabId);
    }
    return {};
  },
  async "debugger.detach"({ tabId }) {
    if (attached.delete(tabId)) await chrome.debugger.detach({ tabId }).catch(() => {});
    return {};
  },
  async "debugger.send"({ tabId, sessionId, method, params }) {
    const target = sessionId ? { tabId, sessionId } : { tabId };
    try {
      return await chrome.debugger.sendCommand(target, method, params || {});
    } catch (err) {
      const message = String((err && err.message) || err);
      // Detached behind our back (chrome.debugger.onDetach does not fire for every path): say so.
      if (/not attached/i.test(message) && attached.delete(tabId)) {
        relaySend({ event: "detached", tabId, reason: "not_attached" });
      }
      throw new Error(message);
    }
  },
};

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (source.tabId === undefined || !attached.has(source.tabId)) return;
  const msg = { event: "cdp", tabId: source.tabId, method, params: params || {} };
  if (source.sessionId) msg.sessionId = source.sessionId;
  relaySend(msg);
});

chrome.debugger.onDetach.addListener((source, reason) => {
  if (source.tabId === undefined || !attached.delete(source.tabId)) return;
  relaySend({ event: "detached", tabId: source.tabId, reason });
});

chrome.tabs.onRemoved.addListener((tabId) => {
  attached.delete(tabId);
  if (agentTabs.delete(tabId)) chrome.storage.session.set({ pinchtab_agent_tabs: [...agentTabs] });
  relaySend({ event: "tabRemoved", tabId });
});

chrome.tabs.onCreated.addListener((tab) => relaySend({ event: "tabUpdated", ...relayTab(tab) }));
chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (change.url !== undefined || change.title !== undefined || change.groupId !== undefined) {
    relaySend({ event: "tabUpdated", ...relayTab(tab) });
  }
});
