// Pinchtab in-page accessibility snapshot engine: refs, and the closed shadow roots we are given.
//
// Chrome's Accessibility.getFullAXTree is far too slow on large pages (it
// serialises every node, including InlineTextBoxes, through the browser
// process), so we compute a compact tree here, inside the page, in an isolated
// world that the page's own scripts cannot see. The roles and accessible names
// follow what Chrome's accessibility tree reports (Blink's AXNodeObject /
// accname logic), because agents cross-check them against CDP and screen
// readers; the conformance test in tests/cdp/test_snapshot_js.py compares the
// two node by node.
//
// The engine is in parts (snapshot_*.js), each one parenthesised function
// expression that registers what it defines on a private object P; the loader
// (cdp/browser.py, snapshot_script) calls them in order inside one closure and
// installs the object the last part builds as __pinchtab. The script may be
// evaluated several times in the same world: it installs itself once and
// evaluates to true. It only reads the DOM and defines no global other than
// __pinchtab.
(function refs(P) {
  "use strict";

  // ---- refs -----------------------------------------------------------
  // A node keeps its ref for as long as it lives, across calls and filters,
  // so an agent can act on a ref it got from an older snapshot. The ref ->
  // node direction holds WeakRefs so that refs never keep removed DOM alive;
  // the registry drops map entries once their node has been collected.
  const refOf = new WeakMap();
  // Closed shadow roots cannot be reached from script; Pinchtab finds them over CDP and hands
  // them to us (adoptClosedRoot), so the walk pierces them like open ones.
  const closedRoots = new WeakMap();
  const checkedHosts = new WeakSet();
  const shadowOf = (el) => el.shadowRoot || closedRoots.get(el) || null;
  const nodeOf = new Map();
  const gone = typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry((ref) => {
      const w = nodeOf.get(ref);
      if (w && !w.deref()) nodeOf.delete(ref);
    })
    : null;

  function refFor(node, S) {
    let ref = refOf.get(node);
    if (!ref) {
      ref = "e" + S.nextRef++;
      refOf.set(node, ref);
      nodeOf.set(ref, new WeakRef(node));
      if (gone) gone.register(node, ref);
    }
    return ref;
  }

  function resolve(ref) {
    const w = nodeOf.get(ref);
    const n = w && w.deref();
    return n && n.isConnected ? n : null;
  }

  // Elements that may host a closed shadow root we have not been given yet: custom elements,
  // and elements with a box but no children (their content must come from somewhere). At most
  // `limit`, each asked about once.
  let hostsDirty = true;  // the DOM changed since the last scan for hosts
  function unknownHosts(limit) {
    if (!hostsDirty) return [];
    hostsDirty = false;
    if (!hostWatch) {
      hostWatch = new MutationObserver(() => { hostsDirty = true; });
      hostWatch.observe(document, { childList: true, subtree: true });
    }
    const out = [];
    const visit = (root) => {
      for (const el of root.querySelectorAll("*")) {
        const sr = shadowOf(el);
        if (sr) { visit(sr); continue; }
        if (out.length >= limit || checkedHosts.has(el)) continue;
        if (el.localName.includes("-") || (!el.firstChild && /^(div|span|section|article|aside|main|nav|header|footer|p|blockquote|h[1-6])$/.test(el.localName) && el.getClientRects().length && el.getBoundingClientRect().height > 0)) {
          checkedHosts.add(el);
          out.push(el);
        }
      }
    };
    visit(document);
    if (out.length >= limit) hostsDirty = true;  // more to ask about next time
    return out;
  }
  let hostWatch = null;

  function adoptClosedRoot(host, root) {
    closedRoots.set(host, root);
    hostsDirty = true;
  }

  const isClosedHost = (el) => closedRoots.has(el);

  Object.assign(P, { refOf, closedRoots, shadowOf, refFor, resolve, unknownHosts, adoptClosedRoot, isClosedHost });
})
