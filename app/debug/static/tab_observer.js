/* Pinchtab's debug observer for a tab debugged over CDP (app/debug/tab_app.py).
 *
 * Runs in an isolated world of the top document, before page scripts: the page cannot see it, nor
 * the binding it reports through (exposed to this world only). It reports DOM mutations as each
 * observer callback sees them (at most MAX_RECORDS a call; the rest are counted): the bridge batches
 * them every 100 ms, as a page timer would not (Chrome runs a background tab's timers once a
 * second). And same-document navigations with their kind (push, replace, traverse), which CDP's own
 * events do not tell apart.
 * The bridge fills in the two names below; stop() disconnects everything.
 */
(() => {
  const BINDING = "__BINDING__";
  const HANDLE = "__HANDLE__";
  const MAX_RECORDS = 500;
  const HTML_MAX = 300;
  if (window !== window.top || globalThis[HANDLE]) return;
  const report = globalThis[BINDING];
  if (typeof report !== "function") return;
  const send = (msg) => { try { report(JSON.stringify(msg)); } catch (e) { /* stopped meanwhile */ } };

  const selectorOf = (node) => {
    const el = node && node.nodeType === 1 ? node : node && node.parentElement;
    if (!el) return "";
    if (el.id) return "#" + el.id;
    const tag = el.localName || "";
    const cls = typeof el.className === "string" ? el.className.trim().split(/\s+/)[0] : "";
    return cls ? tag + "." + cls : tag;
  };
  const kindOf = (n) => (n.nodeType === 1 ? "element" : n.nodeType === 3 ? "text" : n.nodeType === 8 ? "comment" : "node");
  const added = (n) => {
    const o = { type: kindOf(n) };
    if (n.nodeType === 1) {
      o.tagName = n.localName;
      const html = n.outerHTML || "";
      o.html = html.length > HTML_MAX ? html.slice(0, HTML_MAX) : html;
    } else if (n.nodeType === 3) {
      const t = n.data || "";
      o.html = t.length > HTML_MAX ? t.slice(0, HTML_MAX) : t;
    }
    return o;
  };
  const removed = (n) => (n.nodeType === 1 ? { type: "element", tagName: n.localName } : { type: kindOf(n) });

  const observer = new MutationObserver((records) => {
    const pending = [];
    let dropped = 0;
    for (const r of records) {
      if (pending.length >= MAX_RECORDS) { dropped++; continue; }
      const m = { mutationType: r.type, targetSelector: selectorOf(r.target) };
      if (r.type === "attributes") m.attributeName = r.attributeName;
      if (r.addedNodes.length) m.addedNodes = Array.from(r.addedNodes, added);
      if (r.removedNodes.length) m.removedNodes = Array.from(r.removedNodes, removed);
      pending.push(m);
    }
    send({ kind: "mutations", mutations: pending, dropped });
  });
  // After the parser is done, as the page SDK does: the parse itself is not the app's life.
  const observe = () => observer.observe(document, { childList: true, subtree: true, attributes: true,
                                                     characterData: true });
  let started = false;
  const start = () => { if (!started) { started = true; observe(); } };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
  else start();

  // Same-document navigations, in the page's own order (a router's push then replace included).
  let lastUrl = location.href;
  const onEntry = (e) => {
    const url = location.href;
    if (url === lastUrl) return;
    const previousUrl = lastUrl;
    lastUrl = url;
    let trigger = e.navigationType === "traverse" ? "popstate" : e.navigationType === "replace" ? "replacestate" : "pushstate";
    if (trigger !== "popstate" && url.split("#")[0] === previousUrl.split("#")[0]) trigger = "hashchange";
    send({ kind: "navigation", url, previousUrl, trigger });
  };
  const nav = globalThis.navigation;
  if (nav && nav.addEventListener) nav.addEventListener("currententrychange", onEntry);

  globalThis[HANDLE] = {
    stop() {
      observer.disconnect();
      document.removeEventListener("DOMContentLoaded", start);
      if (nav && nav.removeEventListener) nav.removeEventListener("currententrychange", onEntry);
      started = true;
      delete globalThis[HANDLE];  // so a later attach to this same document can observe afresh
    },
  };
})();
