// Snapshot engine: per-call state, computed styles, what is rendered, the flat tree, and the style
// sheet scans that tell which elements may have pseudo-element text or transformed text.
(function rendering(P) {
  "use strict";
  const { shadowOf, byTag, attr } = P;

  // ---- per-call state ---------------------------------------------------
  // One object for the life of the world, held by every part: each snapshot
  // call fills its fields and puts IDLE back when it returns.
  const IDLE = Object.freeze({
    out: null, nextRef: 0, interactive: false, details: false, maxDepth: -1, styles: null, vis: null,
    roles: null, nameRoles: null, labels: null, sheets: null, doc: null, shadows: false, inCanvas: null,
    gridRows: null, focused: null, modal: null, modalPath: null, inModal: false,
  });
  const S = Object.assign({}, IDLE);

  function style(el) {
    let st = S.styles.get(el);
    if (st === undefined) {
      st = getComputedStyle(el);
      S.styles.set(el, st);
    }
    return st;
  }

  // Rendering state of an element: 0 = not rendered (display:none, inside
  // one, or skipped by content-visibility), 1 = rendered but invisible
  // (visibility:hidden), 2 = visible. checkVisibility() is the fast path;
  // computed style is read only when it fails, and only for elements we
  // are about to emit or name, which keeps the walk cheap on large pages.
  const VIS = { visibilityProperty: true };
  function vis(el) {
    let v = S.vis.get(el);
    if (v !== undefined) return v;
    // Without any visibility rule in the document, only boxes matter (the
    // options dictionary of checkVisibility costs as much as the check).
    // Shadow trees have style sheets of their own: always ask there.
    if (S.shadows || docSheets().vh ? el.checkVisibility(VIS) : el.checkVisibility()) v = 2;
    else {
      const st = style(el);
      const d = st.display;
      const tag = el.localName;
      if (d === "none") v = 0;
      else if (d === "contents" || tag === "option" || tag === "optgroup" || S.inCanvas(el)) {
        // No box of its own (options of a drop-down select have none
        // either, canvas fallback content neither): rendered as its parent.
        const p = flatParent(el);
        const pv = p && p.nodeType === 1 ? vis(p) : 2;
        v = pv === 0 ? 0 : st.visibility === "visible" ? 2 : 1;
      } else if (!el.checkVisibility()) v = 0;
      else v = st.visibility === "visible" ? 2 : 1;
    }
    S.vis.set(el, v);
    return v;
  }

  // Flat-tree parent: slot for slotted nodes, host for shadow-root children.
  function flatParent(node) {
    const slot = node.assignedSlot;
    if (slot) return slot;
    const p = node.parentNode;
    if (p && p.nodeType === 11) return p.host || null;
    return p;
  }

  function flatChildren(node) {
    const sr = node.nodeType === 1 ? shadowOf(node) : null;
    if (sr) {
      S.shadows = true;
      return sr.childNodes;
    }
    if (node.localName === "slot") {
      const a = node.assignedNodes({ flatten: true });
      if (a.length) return a;
    }
    return node.childNodes;
  }

  // CSS ::before/::after content is part of the text of its element, and
  // text-transform changes the rendered text. Reading pseudo-element and
  // text styles for every node would dominate the cost of a snapshot, so
  // each tree scope's stylesheets are scanned once per call: pseudo styles
  // are read only for elements matched by a rule that targets ::before or
  // ::after, text styles only where some rule or inline style sets
  // text-transform. A sheet we cannot read makes us check everything.
  function scanSheets(root) {
    const sels = [];
    let all = false, tt = false, vh = false;
    const visit = (rules) => {
      for (const r of rules) {
        const st = r.style;
        if (st) {
          if (!tt && st.textTransform) tt = true;
          if (!vh && st.visibility) vh = true;
        }
        const t = r.selectorText;
        if (t) {
          if (/:(before|after)\b/i.test(t)) {
            for (const part of t.split(",")) {
              if (!/:(before|after)\b/i.test(part)) continue;
              const base = part.replace(/::?(before|after)\b/gi, "").trim();
              if (!base || /:host|::slotted|::part|&/.test(base)) all = true;
              else sels.push(base);
            }
          }
        }
        if (r.cssRules && r.cssRules.length) visit(r.cssRules);
      }
    };
    const sheets = root.styleSheets ? [...root.styleSheets, ...(root.adoptedStyleSheets || [])] : [];
    for (const sh of sheets) {
      let rules = null;
      try { rules = sh.cssRules; } catch (e) { all = tt = vh = true; }
      if (rules) visit(rules);
    }
    if ((!tt || !vh) && root.querySelectorAll) {
      for (const e of root.querySelectorAll("[style]")) {
        const css = e.getAttribute("style").toLowerCase();
        if (css.includes("text-transform")) tt = true;
        if (css.includes("visibility")) vh = true;
      }
    }
    let pseudo = true;
    if (!all) {
      // <q> gets its quotes from the user-agent stylesheet.
      pseudo = new Set(byTag(root, "q"));
      for (const sel of sels) {
        try {
          for (const e of root.querySelectorAll(sel)) pseudo.add(e);
        } catch (e) {
          pseudo = true;
          break;
        }
      }
    }
    return { pseudo, tt, vh };
  }

  function sheetInfo(el) {
    const root = el.getRootNode();
    let info = S.sheets.get(root);
    if (info === undefined) {
      info = scanSheets(root);
      S.sheets.set(root, info);
    }
    return info;
  }

  // Until a shadow root shows up every element lives in the document, so the
  // document's scan answers without asking for the element's root.
  function mayHavePseudo(el) {
    const p = (S.shadows ? sheetInfo(el) : docSheets()).pseudo;
    return p === true || p.has(el);
  }

  // text-transform is inherited, also into shadow trees: any transform in
  // the document or in the element's own scope means reading its style.
  function mayTransform(el) {
    return docSheets().tt || (S.shadows && sheetInfo(el).tt);
  }

  function docSheets() {
    if (!S.doc) S.doc = sheetInfo(document.documentElement);
    return S.doc;
  }

  function unescapeCss(s) {
    return s.replace(/\\([0-9a-fA-F]{1,6}[ \t\n]?|[\s\S])/g, (m, g) => {
      if (/^[0-9a-fA-F]/.test(g)) return String.fromCodePoint(parseInt(g, 16));
      return g;
    });
  }

  // Text Blink renders for a ::before/::after box, or its CSS alt text
  // (after the "/"). Strings, attr() and quotes are rendered; counters and
  // images are not evaluated and contribute nothing.
  function pseudoText(el, which) {
    const st = getComputedStyle(el, which);
    const c = st.content;
    if (!c || c === "none" || c === "normal" || st.display === "none") return null;
    let out = "", alt = null, slash = false;
    const re = /"((?:[^"\\]|\\[\s\S])*)"|'((?:[^'\\]|\\[\s\S])*)'|attr\(\s*([^)\s]+)\s*\)|(open-quote|close-quote)|(\/)|url\([^)]*\)|[a-z-]+\([^)]*\)/gi;
    let m;
    while ((m = re.exec(c))) {
      let piece = "";
      if (m[1] !== undefined || m[2] !== undefined) piece = unescapeCss(m[1] !== undefined ? m[1] : m[2]);
      else if (m[3]) piece = attr(el, m[3]) || "";
      else if (m[4]) piece = m[4] === "open-quote" ? "\u201c" : "\u201d";
      else if (m[5]) { slash = true; alt = ""; continue; }
      if (slash) alt += piece; else out += piece;
    }
    return { text: alt !== null ? alt : out, alt: alt !== null, inline: st.display.startsWith("inline") };
  }

  // Rendered text of a text node: Blink names use the layout text, where
  // text-transform has been applied (no-break spaces stay as they are).
  function transform(text, el) {
    if (!el || el.nodeType !== 1 || !mayTransform(el)) return text;
    switch (style(el).textTransform) {
      case "uppercase": return text.toUpperCase();
      case "lowercase": return text.toLowerCase();
      case "capitalize": return text.replace(/(^|[^\p{L}\p{N}])(\p{L})/gu, (m, a, b) => a + b.toUpperCase());
    }
    return text;
  }

  Object.assign(P, { IDLE, S, style, vis, flatParent, flatChildren, mayHavePseudo, pseudoText, transform });
})
