// Snapshot engine: the role Chrome computes for an element.
(function roles(P) {
  "use strict";
  const { GLOBAL_ARIA, attr, style, WS, ARIA, S, set, flatParent } = P;

  function focusable(el) {
    if (el.hasAttribute("tabindex") || el.isContentEditable) return true;
    switch (el.localName) {
      case "a": case "area": return el.hasAttribute("href");
      case "button": case "select": case "textarea": case "iframe": case "frame": return !el.disabled;
      case "input": return el.type !== "hidden" && !el.disabled;
      case "summary": return !!el.parentElement && el.parentElement.localName === "details";
      case "audio": case "video": return el.hasAttribute("controls");
    }
    return false;
  }

  function hasGlobalAria(el) {
    for (const a of el.attributes) if (GLOBAL_ARIA.has(a.name)) return true;
    return false;
  }

  function namedByAuthor(el) {
    return !!((attr(el, "aria-label") || "").trim() || attr(el, "aria-labelledby") || attr(el, "aria-labeledby") ||
      attr(el, "title"));
  }

  // Blink's data-table heuristic (AXNodeObject::IsDataTable): decides
  // between "table" and "LayoutTable".
  function isDataTable(t) {
    if (t.hasAttribute("role") || t.isContentEditable) return true;
    if (t.tHead || t.tFoot || t.caption || (attr(t, "summary") || "") || (attr(t, "rules") || "")) return true;
    for (const c of t.children) if (c.localName === "col" || c.localName === "colgroup") return true;
    const rows = t.rows;
    if (rows.length >= 20) return true;
    if (!rows.length) return false;
    if (rows.length === 1 && rows[0].cells.length === 1) return false;
    const ts = style(t);
    const spacing = parseFloat(ts.borderSpacing) > 0 && parseFloat(ts.borderSpacing.split(" ").pop()) > 0;
    const tbg = ts.backgroundColor;
    let valid = 0, bordered = 0, bgDiff = 0, top = 0, bottom = 0, left = 0, right = 0;
    const rowColors = [];
    for (let r = 0; r < rows.length; r++) {
      const cells = rows[r].cells;
      for (let c = 0; c < cells.length; c++) {
        const cell = cells[c];
        if (cell.localName === "th") return true;
        if (attr(cell, "headers") || attr(cell, "abbr") || attr(cell, "axis") || attr(cell, "scope")) return true;
        const cs = style(cell);
        if (cs.display === "none" || cell.offsetWidth < 1 || cell.offsetHeight < 1) continue;
        valid++;
        if (cs.emptyCells === "hide") return true;
        const bt = parseFloat(cs.borderTopWidth) > 0, bb = parseFloat(cs.borderBottomWidth) > 0;
        const bl = parseFloat(cs.borderLeftWidth) > 0, br = parseFloat(cs.borderRightWidth) > 0;
        if ((bt && bb) || (bl && br)) bordered++;
        top += bt; bottom += bb; left += bl; right += br;
        const bg = cs.backgroundColor;
        if (spacing && bg !== tbg && bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") bgDiff++;
        if (bordered >= 10 || bgDiff >= 10) return true;
        if (r < 5 && r === rowColors.length) rowColors.push(style(rows[r]).backgroundColor);
      }
    }
    if (valid <= 1) return false;
    const need = valid >> 1;
    if (bordered >= need || top >= need || bottom >= need || left >= need || right >= need) return true;
    if (bgDiff >= need) return true;
    if (rowColors.length > 2) {
      for (let k = 1; k < rowColors.length; k++) {
        if (k % 2 === 1 && rowColors[k] === rowColors[0]) return false;
        if (k % 2 === 0 && rowColors[k] !== rowColors[0]) return false;
      }
      return true;
    }
    return false;
  }

  function headerCellRole(th) {
    // Blink DecideRoleFromSiblings: a th next to data cells heads a row.
    const scope = (attr(th, "scope") || "").toLowerCase();
    if (scope === "row" || scope === "rowgroup") return "rowheader";
    if (scope === "col" || scope === "colgroup") return "columnheader";
    const isTh = (n) => n && n.localName === "th";
    const dataCell = (n) => n && n.localName === "td" && n.hasChildNodes();
    const next = th.nextElementSibling, prev = th.previousElementSibling;
    if (!next && !prev) return "columnheader";
    if (isTh(next) && isTh(prev)) return "columnheader";
    if (dataCell(next) || dataCell(prev)) return "rowheader";
    const row = th.parentElement;
    if (!row || row.localName !== "tr") return "columnheader";
    const first = row.firstElementChild, last = row.lastElementChild;
    if (dataCell(first) || dataCell(last)) return "rowheader";
    if (dataCell(first && first.nextElementSibling) || dataCell(last && last.previousElementSibling)) return "rowheader";
    return "columnheader";
  }

  function inputRole(el) {
    const type = el.type;
    if (el.list && type !== "color") return "combobox";
    switch (type) {
      case "button": case "reset": case "submit": case "image": case "file": return "button";
      case "checkbox": return "checkbox";
      case "radio": return "radio";
      case "number": return "spinbutton";
      case "range": return "slider";
      case "search": return "searchbox";
      case "color": return "ColorWell";
      case "date": return "Date";
      case "datetime-local": case "month": case "week": return "DateTime";
      case "time": return "InputTime";
    }
    return "textbox";
  }

  // The role Chrome computes for an element, given the AX context of its
  // ancestors (ctx null: no context known, neutral guesses).
  function computeRole(el, ctx, attrs) {
    let role = null;
    const raw = attrs ? el.getAttribute("role") : null;
    if (raw) {
      for (const tok of raw.trim().toLowerCase().split(WS)) {
        const r = ARIA.get(tok);
        if (!r) continue;
        // Unnamed form/region are not landmarks: Chrome skips the token.
        if ((r === "form" || r === "region") && !namedByAuthor(el)) continue;
        role = r;
        break;
      }
      // Focusable elements and ones with global ARIA attributes keep their
      // native role despite role=none/presentation; so do frames.
      if (role === "none" && (focusable(el) || hasGlobalAria(el))) role = null;
      if (role === "none" && (el.localName === "iframe" || el.localName === "frame")) role = null;
      // Owned-element roles outside their required container become generic.
      if (role === "option" && ctx && ctx.optionOk !== true) role = "generic";
      if (role === "treeitem" && ctx && ctx.treeOk !== true) role = "generic";
      if (role === "listitem" && ctx && ctx.listOk !== true) role = "generic";
    }
    if (!role) role = nativeRole(el, ctx);
    if (role === "cell" && ctx && (ctx.table === "grid" || ctx.table === "treegrid")) role = "gridcell";
    return role;
  }

  // Role of an element reached while computing a name, possibly before the walk.
  function roleOf(el) {
    let r = S.roles.get(el);
    if (r !== undefined) return r;
    r = S.nameRoles.get(el);
    if (r !== undefined) return r;
    // (contextFor is the walk's, a later part: looked up when called.)
    r = computeRole(el, needsContext(el) ? P.contextFor(el) || {} : null, el.hasAttributes());
    S.nameRoles.set(el, r);
    return r;
  }

  // Elements whose role depends on their ancestors' roles.
  const CONTEXT_TAGS = set("tr td th thead tbody tfoot header footer aside li");
  const CONTEXT_ROLES = /\b(option|treeitem|listitem|cell|row)\b/;
  function needsContext(el) {
    if (CONTEXT_TAGS.has(el.localName)) return true;
    const r = attr(el, "role");
    if (r && CONTEXT_ROLES.test(r)) return true;
    return false;
  }

  // Tags whose role never depends on anything else.
  const TAG_ROLE = new Map(Object.entries({
    img: "image", button: "button", option: "option", optgroup: "group", textarea: "textbox",
    h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
    ul: "list", ol: "list", menu: "list", dir: "list", meter: "meter", progress: "progressbar", output: "status",
    p: "paragraph", label: "LabelText", legend: "Legend", dl: "DescriptionList", dd: "definition", dt: "term",
    dfn: "term", abbr: "Abbr", form: "form", article: "article", code: "code", em: "emphasis", strong: "strong",
    search: "search", del: "deletion", s: "deletion", ins: "insertion", sub: "subscript", sup: "superscript",
    main: "main", mark: "mark", nav: "navigation", address: "group", hgroup: "group", fieldset: "group",
    details: "group", dialog: "dialog", html: "generic", body: "generic", iframe: "Iframe", frame: "Iframe",
    fencedframe: "Iframe", blockquote: "blockquote", caption: "caption", figcaption: "Figcaption",
    figure: "figure", time: "time", hr: "separator", canvas: "Canvas", g: "group", math: "MathMLMath",
    mi: "MathMLIdentifier", mn: "MathMLNumber", mo: "MathMLOperator", mfrac: "MathMLFraction",
    msqrt: "MathMLSquareRoot", mroot: "MathMLRoot", msub: "MathMLSub", msup: "MathMLSup",
    msubsup: "MathMLSubSup", mtext: "MathMLText", annotation: "MathMLText", mrow: "MathMLRow",
    mstyle: "MathMLRow", mpadded: "MathMLRow", mphantom: "MathMLRow", semantics: "MathMLRow",
    merror: "MathMLRow", maction: "MathMLRow", "annotation-xml": "MathMLRow", embed: "EmbeddedObject",
    object: "PluginObject", video: "Video", audio: "Audio", ruby: "Ruby", rt: "RubyAnnotation",
    rp: "RubyAnnotation", br: "LineBreak", div: "", span: "",
  }));

  function nativeRole(el, ctx) {
    const tag = el.localName;
    const fixed = TAG_ROLE.get(tag);
    if (fixed) return fixed;
    if (fixed === undefined) switch (tag) {
      case "a": return el.hasAttribute("href") ? "link" : "generic";
      case "input": return inputRole(el);
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "li": {
        // A list item of a list given another role is presentational.
        const p = flatParent(el);
        if (p && p.nodeType === 1 && (p.localName === "ul" || p.localName === "ol" || p.localName === "menu")) {
          const pr = (attr(p, "role") || "").trim().toLowerCase();
          if (pr && pr !== "list" && pr !== "directory") return "none";
        }
        return "listitem";
      }
      // Landmarks only when named, or when not inside sectioning content.
      case "section": return namedByAuthor(el) ? "region" : "generic";
      case "aside": return ctx && ctx.asideOff && !namedByAuthor(el) ? "generic" : "complementary";
      case "header": return ctx && ctx.landmarkOff ? "sectionheader" : "banner";
      case "footer": return ctx && ctx.landmarkOff ? "sectionfooter" : "contentinfo";
      case "summary": {
        const p = flatParent(el);
        return p && p.nodeType === 1 && p.localName === "details" ? "DisclosureTriangle" : "generic";
      }
      case "table": return isDataTable(el) ? "table" : "LayoutTable";
      case "thead": case "tfoot": case "tbody":
        return ctx && ctx.table && ctx.table !== "LayoutTable" && !ctx.row ? "rowgroup" : "generic";
      case "tr":
        if (!ctx || !ctx.table || ctx.row) return ctx ? "generic" : "row";
        return ctx.table === "LayoutTable" ? "LayoutTableRow" : "row";
      case "td": case "th":
        if (!ctx) return tag === "th" ? "columnheader" : "cell";
        if (!ctx.row || !ctx.table) return "generic";
        if (ctx.row === "LayoutTableRow") return "LayoutTableCell";
        return tag === "th" ? headerCellRole(el) : "cell";
      case "svg":
        // An <svg> with nothing accessible inside is exposed as an image.
        return el.ownerSVGElement ? "group" : svgHasContent(el) ? "SvgRoot" : "image";
    }
    if (el.namespaceURI === "http://www.w3.org/2000/svg") {
      return /^(circle|ellipse|line|path|polygon|polyline|rect|image|use)$/.test(tag) ? "graphics-symbol" : "generic";
    }
    // Roles Blink derives from the layout box of other elements. They are
    // never interactive and do not change names, so only the full tree
    // pays for reading display.
    if (!ctx || S.interactive) return "generic";
    const d = style(el).display;
    if (d === "list-item") return "listitem";
    if (d === "table" || d === "inline-table") return "LayoutTable";
    if (d === "table-row" && ctx && ctx.table && !ctx.row) return ctx.table === "LayoutTable" ? "LayoutTableRow" : "row";
    if (d === "table-cell" && ctx && ctx.row) return ctx.row === "LayoutTableRow" ? "LayoutTableCell" : "cell";
    return "generic";
  }

  function svgHasContent(svg) {
    for (const e of svg.querySelectorAll("text, a, [role], [aria-label], [aria-labelledby], title, desc, foreignObject")) {
      const t = e.localName;
      if (t === "title" || t === "desc") { if (e.parentNode !== svg) return true; continue; }
      if (t === "a") { if (e.hasAttribute("href")) return true; continue; }
      if (t === "text" || t === "foreignObject") { if (e.textContent.trim()) return true; continue; }
      return true;
    }
    return false;
  }

  Object.assign(P, { focusable, computeRole, roleOf });
})
