// Snapshot engine: one snapshot call, and the object installed as __pinchtab.
(function api(P) {
  "use strict";
  const { S, flatParent, refFor, walkElement, contextFor, IDLE, attr, simplify, adoptClosedRoot, isClosedHost,
    unknownHosts, resolve, refOf } = P;

  function deepActive() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a && a !== document.body && a !== document.documentElement ? a : null;
  }

  // Host candidates the last call found, kept for takeHosts (see snapshot's opts.hosts).
  let pendingHosts = [];

  function takeHosts() {
    const hosts = pendingHosts;
    pendingHosts = [];
    return hosts;
  }

  function snapshot(opts, root) {
    opts = opts || {};
    // opts.hosts: look for closed shadow root candidates first (at most that many). When there are
    // some, Pinchtab hands their roots over (takeHosts, then adoptClosedRoot) and calls again; the
    // common page has none, and its walk is this one call.
    if (opts.hosts && !root) {
      const hosts = unknownHosts(opts.hosts);
      if (hosts.length) {
        pendingHosts = hosts;
        return { hosts: hosts.length };
      }
    }
    // A modal dialog (showModal) makes everything outside it inert for Chrome.
    let modal = null;
    for (const d of document.getElementsByTagName("dialog")) if (d.open && d.matches(":modal")) modal = d;
    Object.assign(S, {
      out: [],
      nextRef: Number.isInteger(opts.nextRef) && opts.nextRef >= 0 ? opts.nextRef : 0,
      interactive: opts.filter === "interactive",
      details: !!opts.details,
      maxDepth: Number.isInteger(opts.maxDepth) ? opts.maxDepth : -1,
      styles: new Map(),
      vis: new Map(),
      roles: new Map(),
      nameRoles: new Map(),
      labels: new Map(),
      sheets: new Map(),
      doc: null,
      shadows: false,
      inCanvas: (el) => !!el.closest("canvas"),
      gridRows: new Set(),
      focused: deepActive(),
      modal,
      modalPath: null,
      inModal: false,
    });
    if (modal) {
      S.modalPath = new Set();
      for (let n = modal; n && n.nodeType === 1; n = flatParent(n)) S.modalPath.add(n);
    }
    try {
      if (!root || root === document || root === document.documentElement) {
        if (!S.interactive) {
          const o = { ref: refFor(document, S), role: "RootWebArea", name: rootName(), depth: 0 };
          if (!S.focused) o.focused = true;
          S.out.push(o);
        }
        if (S.interactive || S.maxDepth !== 0) {
          const ctx = {};
          const d = S.interactive ? 0 : 1;
          if (document.documentElement) walkElement(document.documentElement, ctx, d);
        }
      } else if (root.nodeType === 1 && root.isConnected) {
        if (root.getRootNode() !== document) S.shadows = true;
        const ctx = contextFor(root);
        if (ctx) {
          if (modal) S.inModal = isInside(root, modal);
          walkElement(root, ctx, 0);
        }
      }
      const res = { nodes: S.out, nextRef: S.nextRef };
      if (opts.page) Object.assign(res, { url: location.href, title: document.title });  // no call of its own
      return res;
    } finally {
      Object.assign(S, IDLE);  // nothing of the page stays reachable
    }
  }

  function isInside(el, anc) {
    for (let n = el; n; n = flatParent(n)) if (n === anc) return true;
    return false;
  }

  function rootName() {
    const de = document.documentElement;
    const al = de ? attr(de, "aria-label") : null;
    if (al && al.trim()) return simplify(al);
    return simplify(document.title);
  }

  P.api = Object.freeze({
    adoptClosedRoot,
    isClosedHost,
    unknownHosts,
    takeHosts,
    snapshot,
    resolve,
    refOf: (node) => (node && refOf.get(node)) || null,
  });
})
