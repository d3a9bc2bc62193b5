/* Pinchtab debug SDK, dependency-free; protocol v1 and configuration as npm's debug-bridge-browser.
 * <script src="http://HOST/debug/sdk.js?sessionId=S"> joins S by itself (unless data-autostart="false");
 * or PinchtabDebug.createDebugBridge(config).connect(). Beyond npm's: a bounded queue while
 * disconnected, requestIds on data replies, TARGET_DISABLED/NOT_VISIBLE; no hook breaks the page. */
(function (w, d) {
"use strict";
if (w.PinchtabDebug) return;   // loaded twice

const QUEUE_MAX = 500;
const INTERACTIVE = 'a[href],button,input,select,textarea,[role="button"],[role="link"],' +
  '[role="menuitem"],[role="tab"],[role="checkbox"],[role="radio"],[tabindex],[onclick]';
const LEVELS = ["log", "info", "warn", "error", "debug"];
const DEFAULTS = {
  enableDomSnapshot: true, enableDomMutations: true, enableUiTree: true, enableConsole: true,
  enableErrors: true, enableEval: false, enableNetwork: true, enableNavigation: true,
  domMutationBatchMs: 100, maxConsoleArgs: 10, maxConsoleArgLength: 1000,
  maxDomSnapshotSize: 5 * 1024 * 1024, maxNetworkBodySize: 10000,
  autoReconnect: true, reconnectMaxAttempts: 10, reconnectBaseDelayMs: 1000, reconnectMaxDelayMs: 30000,
};
// The console before any hook: our own warnings are never sent.
const rawWarn = console.warn;
// What pages hold may be blocked, odd or gone.
const safe = (fn, fallback) => { try { return fn(); } catch { return fallback; } };
const warn = (...a) => safe(() => rawWarn.call(console, "[PinchtabDebug]", ...a));
const fail = (code, message) => Object.assign(new Error(message), { code });
const clip = (s, max) => (s.length > max ? s.substring(0, max) + "..." : s);
const lower = (n) => n.tagName?.toLowerCase();
const str = (v) => (typeof v === "string" && v) || undefined;
const pick = (o, keys, f = (v) => v) => Object.fromEntries(keys.split(" ").map((k) => [k, f(o[k])]));

// JSON that survives cycles and BigInt.
function toJSON(value) {
  const seen = new WeakSet();
  return JSON.stringify(value, (k, v) => {
    if (typeof v === "bigint") return String(v);
    if (v && typeof v === "object") {
      if (seen.has(v)) return "[Circular]";
      seen.add(v);
    }
    return v;
  });
}

function argText(v) {
  if (typeof v === "string") return v;
  if (v instanceof Error) return v.stack || String(v);
  return safe(() => toJSON(v), undefined) ?? String(v);
}


function queryAll(root, sel, out = []) {   // through open shadow roots, as npm's
  out.push(...root.querySelectorAll(sel));
  for (const el of root.querySelectorAll("*")) if (el.shadowRoot) queryAll(el.shadowRoot, sel, out);
  return out;
}

function query(sel) {
  return safe(() => d.querySelector(sel) || queryAll(d, sel)[0]);
}

function cssPath(el) {
  const path = [];
  for (let cur = el; cur && cur !== d.body;) {
    if (cur.id) { path.unshift("#" + cur.id); break; }
    let sel = lower(cur);
    const parent = cur.parentElement;
    if (parent) {
      const same = [...parent.children].filter((c) => c.tagName === cur.tagName);
      if (same.length > 1) sel += `:nth-of-type(${same.indexOf(cur) + 1})`;
      path.unshift(sel);
      cur = parent;
    } else {
      const root = cur.getRootNode();
      path.unshift(sel);
      if (!(root instanceof ShadowRoot)) break;
      path.unshift("::shadow");
      cur = root.host;
    }
  }
  return path.join(" > ");
}

// npm's stable ids: data-testid, id, role-hash of the text, the path.
function generatedId(el) {
  const testId = el.getAttribute("data-testid");
  if (testId) return testId;
  if (el.id && el.id[0] !== ":") return el.id;
  const text = (el.textContent || "").trim().substring(0, 20);
  if (!text) return cssPath(el).replace(/[^a-zA-Z0-9]/g, "-").substring(0, 50);
  let h = 0;
  for (let i = 0; i < text.length; i++) h = ((h << 5) - h + text.charCodeAt(i)) | 0;
  return `${el.getAttribute("role") || lower(el)}-${Math.abs(h).toString(36)}`;
}

function uiItem(el, getStableId) {
  const style = w.getComputedStyle(el);
  const field = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement;
  const text = field ? el.value || el.placeholder : (el.textContent || "").trim().substring(0, 100);
  return {
    stableId: getStableId?.(el) || generatedId(el),
    selector: cssPath(el),
    role: el.getAttribute("role") || lower(el),
    text: text || undefined,
    label: el.getAttribute("aria-label") || el.getAttribute("title") || undefined,
    disabled: el.hasAttribute("disabled") || el.getAttribute("aria-disabled") === "true",
    visible: style.display !== "none" && style.visibility !== "hidden",
    checked: typeof el.checked === "boolean" ? el.checked : undefined,
    value: str(el.value),
    meta: { tagName: lower(el), ...pick(el, "type name href placeholder", str) },
  };
}

// The prototype's setter: frameworks tracking the value (React) see it.
function setValue(el, value) {
  const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value")?.set;
  if (setter) setter.call(el, value); else el.value = value;
}

const fire = (el, type, Ctor = Event, init) => el.dispatchEvent(new Ctor(type, { bubbles: true, cancelable: true, ...init }));

const storage = (name) => safe(() => ({ ...w[name] }), {});

function browserState() {
  const cookies = {};
  for (const c of d.cookie.split(";")) {
    const [k, ...v] = c.trim().split("=");
    if (k) cookies[k] = v.join("=");
  }
  return {
    cookies,
    localStorage: storage("localStorage"),
    sessionStorage: storage("sessionStorage"),
    location: pick(w.location, "href origin pathname search hash host"),
    navigator: { ...pick(navigator, "userAgent language languages cookieEnabled platform"), online: navigator.onLine,
                 languages: [...navigator.languages] },
    screen: { ...pick(screen, "width height availWidth availHeight colorDepth"), pixelRatio: w.devicePixelRatio },
    viewport: { ...pick(w, "innerWidth innerHeight"), ...pick(w, "scrollX scrollY", Math.round) },
  };
}

function createDebugBridge(config) {
  const cfg = { ...DEFAULTS, ...config };
  const unhooks = [];
  let ws = null, wanted = false, attempt = 0, timer = null, queue = [], inHook = false, netSeq = 0, ids = new Map();

  function call(name, ...args) {
    try { cfg[name]?.(...args); } catch (e) { warn(name, e); }
  }

  const isOpen = () => ws?.readyState == 1;

  // queued=false: stale later (DOM mutations: the next snapshot has them).
  function send(msg, queued = true) {
    let text;
    try {
      text = toJSON({ protocolVersion: 1, sessionId: cfg.sessionId, timestamp: Date.now(), ...msg });
    } catch (e) {
      return warn("unserializable:", e);
    }
    if (isOpen()) {
      try { return ws.send(text); } catch { /* closing: queue it */ }
    }
    if (!queued) return;
    queue.push(text);
    if (queue.length > QUEUE_MAX) queue.shift();
  }

  function customState() {
    try { return cfg.getCustomState?.() || {}; } catch (e) { warn("getCustomState:", e); return {}; }
  }

  function uiTree() {
    ids = new Map();
    const items = [];
    for (const el of new Set(queryAll(d, INTERACTIVE))) {
      safe(() => {
        const item = uiItem(el, cfg.getStableId);
        ids.set(item.stableId, el);
        items.push(item);
      });
    }
    return items;
  }

  const snapshot = () => d.documentElement.outerHTML.substring(0, cfg.maxDomSnapshotSize);

  // data-testid, id, the last UI tree's ids, CSS selector, text.
  function resolve(t) {
    if (!t || typeof t !== "object") throw fail("INVALID_COMMAND", "no target");
    const sid = t.stableId;
    let el = null;
    if (sid) {
      el = query(`[data-testid="${String(sid).replace(/["\\]/g, "\\$&")}"]`) || query("#" + CSS.escape(sid)) ||
        (ids.get(sid)?.isConnected ? ids.get(sid) : null);
    }
    if (!el && t.selector) el = query(t.selector);
    if (!el && t.text) {
      el = queryAll(d, 'button,a,[role="button"],input').find((c) => (c.textContent || c.placeholder)?.includes(t.text));
    }
    if (!el) throw fail("TARGET_NOT_FOUND", "Not found: " + JSON.stringify(t));
    return el;
  }

  function usable(t) {
    const el = resolve(t);
    if (el.disabled || el.getAttribute("aria-disabled") == "true") throw fail("TARGET_DISABLED", "Disabled: " + JSON.stringify(t));
    if (!el.getClientRects().length) throw fail("TARGET_NOT_VISIBLE", "Not visible: " + JSON.stringify(t));
    return el;
  }

  function typeText(el, text, opt = {}) {
    el.focus();
    setValue(el, (opt.clear ? "" : el.value || "") + text);
    fire(el, "input");
    fire(el, "change");
    if (opt.pressEnter) for (const t of ["keydown", "keyup"]) fire(el, t, KeyboardEvent, { key: "Enter", code: "Enter" });
  }

  function selectOption(el, cmd) {
    const opts = [...(el.options || [])];
    const i = cmd.value !== undefined ? opts.findIndex((o) => o.value === cmd.value)
      : cmd.label !== undefined ? opts.findIndex((o) => o.label === cmd.label || o.text.trim() === cmd.label)
      : cmd.index < opts.length ? cmd.index : -1;
    if (i < 0) throw fail("TARGET_NOT_FOUND", "No such option in " + JSON.stringify(cmd.target));
    el.selectedIndex = i;
    fire(el, "input");
    fire(el, "change");
    return { value: el.value };
  }

  function evaluate(code) {
    if (!cfg.enableEval) throw fail("EVAL_DISABLED", "Eval disabled");
    let fn;
    try { fn = new Function(`return (${code})`); } catch { fn = new Function(code); }
    return fn();
  }

  // We carry no renderer: screenshots need the page's window.html2canvas.
  async function screenshot(cmd) {
    if (typeof w.html2canvas !== "function") throw fail("UNKNOWN_ERROR", "screenshots need html2canvas on the page (window.html2canvas)");
    const canvas = await w.html2canvas((cmd.selector && query(cmd.selector)) || d.body, { logging: false, useCORS: true });
    send({ type: "screenshot", requestId: cmd.requestId, data: canvas.toDataURL("image/png"), width: canvas.width, height: canvas.height });
  }

  function requestState({ scope, requestId }) {
    const browser = browserState(), custom = customState();
    let sent = false;
    const reply = (name, state) => { sent = true; send({ type: "state_update", scope: name, state, requestId }); };
    for (const from of [browser, custom]) {
      for (const k of Object.keys(from)) if (!scope || k === scope) reply(k, from[k]);
    }
    if (!sent) reply(scope, null);   // npm's SDK says nothing: an agent would wait
  }

  // Data replies to request_*, else a command_result (navigate's before unload).
  async function execute(cmd) {
    const t0 = performance.now(), type = cmd.type;
    let result, after, error;
    try {
      switch (type) {
        case "click": fire(usable(cmd.target), "click", MouseEvent, { view: w }); break;
        case "type": typeText(usable(cmd.target), String(cmd.text), cmd.options); break;
        case "hover": for (const t of ["mouseenter", "mouseover"]) fire(resolve(cmd.target), t, MouseEvent); break;
        case "focus": resolve(cmd.target).focus(); break;
        case "select": result = selectOption(resolve(cmd.target), cmd); break;
        case "scroll":
          if (cmd.target) resolve(cmd.target).scrollIntoView({ block: "center" });
          else w.scrollTo(cmd.x || 0, cmd.y || 0);
          break;
        case "navigate": {
          let url;
          try { url = new URL(cmd.url, w.location.href); }
          catch { throw fail("NAVIGATION_FAILED", "Bad URL: " + cmd.url); }
          // Web pages only: a javascript: URL would run code in the app even with eval off;
          // data: and file: URLs leave the web.
          if (url.protocol !== "http:" && url.protocol !== "https:") {
            throw fail("INVALID_COMMAND", "only http(s) and relative URLs may be opened, not " + url.protocol);
          }
          after = () => { w.location.href = url.href; };
          break;
        }
        case "evaluate": result = await evaluate(cmd.code); break;
        case "request_ui_tree": return send({ type: "ui_tree", requestId: cmd.requestId, items: uiTree() });
        case "request_dom_snapshot": return send({ type: "dom_snapshot", requestId: cmd.requestId, html: snapshot() });
        case "request_state": return requestState(cmd);
        case "request_screenshot": return await screenshot(cmd);
        default: throw fail("INVALID_COMMAND", "Unknown: " + type);
      }
    } catch (e) {
      error = { code: e?.code || (type === "evaluate" ? "EVAL_ERROR" : "UNKNOWN_ERROR"), message: e?.message || String(e) };
    }
    send({ type: "command_result", requestId: cmd.requestId, requestType: type, success: !error, error,
           result: error ? undefined : result, duration: Math.round(performance.now() - t0) });
    after?.();
  }

  function hook(obj, name, wrap) {
    const orig = obj[name];
    obj[name] = wrap(orig);
    unhooks.push(() => { obj[name] = orig; });
  }

  function listen(target, type, fn) {
    target.addEventListener(type, fn);
    unhooks.push(() => target.removeEventListener(type, fn));
  }

  // Never throws into the page; the console calls it causes are not reported.
  function guard(fn) {
    if (inHook) return;
    inHook = true;
    try { fn(); } catch { /* never into the page */ } finally { inHook = false; }
  }

  function hookConsole() {
    for (const level of LEVELS) {
      hook(console, level, (orig) => function (...args) {
        guard(() => send({ type: "console", level,
                           args: args.slice(0, cfg.maxConsoleArgs).map((a) => clip(argText(a), cfg.maxConsoleArgLength)) }));
        return orig.apply(this, args);
      });
    }
  }

  function hookErrors() {
    listen(w, "error", (ev) => guard(() => send({
      type: "error", errorType: "runtime", message: String(ev.message || ev.error?.message || ""),
      stack: str(ev.error?.stack), filename: str(ev.filename), lineno: ev.lineno, colno: ev.colno,
    })));
    listen(w, "unhandledrejection", ({ reason: r }) => guard(() => send({
      type: "error", errorType: "unhandledrejection", message: String(r?.message ?? r), stack: str(r?.stack),
    })));
  }

  function hookDom() {
    let pending = [], batch = null;
    const node = (n, html) => ({ type: n.nodeType === 1 ? "element" : "text", tagName: lower(n),
                                 html: html ? n.outerHTML?.substring(0, 500) : undefined });
    const observer = new MutationObserver((records) => guard(() => {
      for (const r of records) {
        const t = r.target;
        pending.push({
          mutationType: r.type,
          targetSelector: t.nodeType === 1 ? (t.id ? "#" + t.id : lower(t)) : "",
          attributeName: r.attributeName || undefined,
          addedNodes: [...r.addedNodes].map((n) => node(n, true)),
          removedNodes: [...r.removedNodes].map((n) => node(n)),
        });
      }
      if (pending.length > 1000) pending.splice(0, pending.length - 1000);
      batch ??= setTimeout(() => {
        batch = null;
        if (pending.length) send({ type: "dom_mutations", batchId: String(Date.now()), mutations: pending }, false);
        pending = [];
      }, cfg.domMutationBatchMs);
    }));
    observer.observe(d.body || d.documentElement, { childList: true, subtree: true, attributes: true, characterData: true });
    unhooks.push(() => { observer.disconnect(); clearTimeout(batch); });
  }

  function captured(url) {
    if (/^wss?:|\/debug/.test(url)) return false;   // ours
    return safe(() => !cfg.networkUrlFilter || !!cfg.networkUrlFilter(url), false);
  }

  function bodyText(b) {
    if (b == null) return undefined;
    return typeof b === "string" || b instanceof URLSearchParams ? clip(String(b), cfg.maxNetworkBodySize) : `[${b.constructor?.name}]`;
  }

  // No credentials in an agent's log.
  function headers(h) {
    const out = {};
    safe(() => new Headers(h).forEach((v, k) => { if (!/authorization|cookie/i.test(k)) out[k] = v; }));
    return out;
  }

  function exchange(initiator, method, url, reqHeaders, body) {
    const requestId = `net-${++netSeq}-${Date.now()}`, t0 = performance.now();
    send({ type: "network_request", requestId, method, url, headers: reqHeaders && headers(reqHeaders), body: bodyText(body), initiator });
    return (res) => send({ type: "network_response", requestId, duration: Math.round(performance.now() - t0), ...res,
                           body: bodyText(res.body) });
  }

  function hookNetwork() {
    if (w.fetch) hook(w, "fetch", (orig) => function (input, init) {
      let done;
      try {
        const url = String(typeof input === "string" || input instanceof URL ? input : input.url);
        if (captured(url)) done = exchange("fetch", init?.method || input.method || "GET", url, init?.headers, init?.body);
      } catch { /* unreportable */ }
      const p = orig.apply(this, arguments);
      // The app gets its response at once; we read a clone.
      if (done) p.then(async (res) => {
        const type = res.headers.get("content-type") || "";
        let body;
        try {
          body = /json|text\//.test(type) ? await res.clone().text() : `[${type || "Binary"}]`;
        } catch { body = "[Unable to read body]"; }
        done({ status: res.status, statusText: res.statusText, headers: headers(res.headers), body, ok: res.ok });
      }, (e) => done({ status: 0, statusText: e?.message || "Network Error", ok: false }));
      return p;
    });
    const X = w.XMLHttpRequest?.prototype;
    if (!X) return;
    hook(X, "open", (orig) => function (method, url) {
      this.__ptDebug = { method, url: String(url) };
      return orig.apply(this, arguments);
    });
    hook(X, "send", (orig) => function (body) {
      const info = this.__ptDebug;
      if (info && captured(info.url)) guard(() => {
        const done = exchange("xhr", info.method, info.url, undefined, body);
        this.addEventListener("loadend", () => {
          let text;
          try {
            const t = this.responseType;
            text = !t || t == "text" ? this.responseText : t === "json" ? JSON.stringify(this.response) : `[${t}]`;
          } catch { text = "[Unable to read body]"; }
          done({ status: this.status, statusText: this.statusText, body: text, ok: this.status >= 200 && this.status < 300 });
        });
      });
      return orig.apply(this, arguments);
    });
  }

  function hookNavigation() {
    let current = w.location.href;
    const moved = (trigger, previousUrl = current) => guard(() => {
      current = w.location.href;
      if (current !== previousUrl) send({ type: "navigation", url: current, previousUrl, trigger });
    });
    for (const name of ["pushState", "replaceState"]) {
      hook(history, name, (orig) => function () {
        const r = orig.apply(this, arguments);
        moved(name.toLowerCase());
        return r;
      });
    }
    listen(w, "popstate", () => moved("popstate"));
    listen(w, "hashchange", (ev) => moved("hashchange", ev.oldURL));
  }

  function install() {
    for (const [on, fn] of [[cfg.enableConsole, hookConsole], [cfg.enableErrors, hookErrors],
      [cfg.enableDomMutations, hookDom], [cfg.enableNetwork, hookNetwork], [cfg.enableNavigation, hookNavigation]]) {
      try { if (on) fn(); } catch (e) { warn("hook:", e); }
    }
  }

  // On every open, in the npm SDK's order.
  function greet() {
    const custom = customState();
    const caps = [["enableDomSnapshot", "dom_snapshot"], ["enableDomMutations", "dom_mutations"], ["enableUiTree", "ui_tree"],
      ["enableConsole", "console"], ["enableErrors", "errors"], ["enableEval", "eval"], ["getCustomState", "custom_state"],
      ["enableNetwork", "network"], ["enableNavigation", "navigation"]].filter(([k]) => cfg[k]).map(([, c]) => c);
    send({ type: "hello", appName: cfg.appName, appVersion: cfg.appVersion, url: w.location.href,
           userAgent: navigator.userAgent, viewport: { width: w.innerWidth, height: w.innerHeight } });
    send({ type: "capabilities", capabilities: caps });
    if (cfg.enableDomSnapshot) send({ type: "dom_snapshot", html: snapshot() });
    if (cfg.enableUiTree) send({ type: "ui_tree", items: uiTree() });
    for (const k of Object.keys(custom)) send({ type: "state_update", scope: k, state: custom[k] });
    if (cfg.enableNavigation) send({ type: "navigation", url: w.location.href, trigger: "initial" });
  }

  function open() {
    timer = null;
    let sock;
    try { sock = ws = new WebSocket(cfg.url); } catch (e) { warn(e); call("onError", e); return retry(); }
    sock.onopen = () => {
      attempt = 0;
      const held = queue;
      queue = [];
      try { greet(); } catch (e) { warn("hello:", e); }
      for (const text of held) sock.send(text);
      call("onConnect");
    };
    sock.onmessage = (ev) => {
      let cmd;
      try { cmd = JSON.parse(ev.data); } catch { return; }
      // Server notices (connection_event, dropped) want no answer.
      if (typeof cmd?.type !== "string" || cmd.origin === "server" || !cmd.requestId) return;
      execute(cmd).catch((e) => warn("command:", e));
    };
    sock.onclose = () => {
      if (ws !== sock) return;   // disconnect() let it go
      ws = null;
      call("onDisconnect");
      retry();
    };
    sock.onerror = () => call("onError", new Error("WebSocket error"));
  }

  // base × 2^(n−1) ms, at most max; reset on open (as npm's).
  function retry() {
    if (!wanted || !cfg.autoReconnect || timer) return;
    if (attempt >= cfg.reconnectMaxAttempts) {
      return call("onError", new Error(`Max reconnection attempts (${cfg.reconnectMaxAttempts}) exceeded`));
    }
    attempt++;
    call("onReconnecting", attempt, cfg.reconnectMaxAttempts);
    timer = setTimeout(open, Math.min(cfg.reconnectBaseDelayMs * 2 ** (attempt - 1), cfg.reconnectMaxDelayMs));
  }

  return {
    connect() {
      if (ws && ws.readyState <= 1) return;
      if (!wanted) install();
      wanted = true;
      clearTimeout(timer);
      open();
    },
    disconnect() {
      const sock = ws;
      wanted = false;
      clearTimeout(timer);
      timer = ws = null;
      queue = [];
      while (unhooks.length) safe(unhooks.pop());
      sock?.close();
    },
    isConnected: isOpen,
    sendState: (scope, state) => send({ type: "state_update", scope, state }),
  };
}

const api = (w.PinchtabDebug = { createDebugBridge });

// <script src="http://HOST/PREFIX/debug/sdk.js?sessionId=S"> joins S at ws://HOST/PREFIX/debug.
try {
  const me = d.currentScript, src = me?.src && new URL(me.src), sessionId = src?.searchParams.get("sessionId");
  if (sessionId && me.getAttribute("data-autostart") !== "false") {
    const base = (src.protocol === "https:" ? "wss://" : "ws://") + src.host + src.pathname.replace(/\/sdk\.js$/, "");
    api.bridge = createDebugBridge({
      url: `${base}?role=app&sessionId=${encodeURIComponent(sessionId)}`,
      sessionId,
      appName: d.title || undefined,
      // The page's own state, if offered: window.__pinchtab__.state() -> {scope: state} (else scope "app").
      getCustomState: () => {
        const s = w.__pinchtab__?.state?.();
        return s == null ? {} : typeof s === "object" ? s : { app: s };
      },
    });
    api.bridge.connect();
  }
} catch (e) {
  warn("autostart:", e);
}
})(window, document);
