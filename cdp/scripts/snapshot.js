// Pinchtab in-page accessibility snapshot engine.
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
// The script may be evaluated several times in the same world: it installs
// itself once and evaluates to true. It only reads the DOM and defines no
// global other than __pinchtab.
if (!globalThis.__pinchtab) {
  globalThis.__pinchtab = (() => {
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

    // ---- tables ---------------------------------------------------------
    // ARIA role tokens Chrome recognises, mapped to the role string that
    // Accessibility.getFullAXTree reports for them.
    const ARIA = new Map();
    for (const r of ("alert alertdialog application article banner blockquote button caption cell checkbox code " +
      "columnheader combobox comment complementary contentinfo definition deletion dialog document emphasis " +
      "feed figure form generic grid gridcell group heading insertion link list listbox listitem log main mark " +
      "marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation note option " +
      "paragraph progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox " +
      "sectionfooter sectionheader separator slider spinbutton status strong subscript suggestion superscript " +
      "switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem " +
      "graphics-document graphics-object graphics-symbol").split(" ")) ARIA.set(r, r);
    for (const r of ("abstract acknowledgments afterword appendix backlink biblioentry bibliography biblioref chapter " +
      "colophon conclusion cover credit credits dedication endnote endnotes epigraph epilogue errata example " +
      "footnote foreword glossary glossref index introduction noteref notice pagebreak pagefooter pageheader " +
      "pagelist part preface prologue pullquote qna subtitle tip toc").split(" ")) ARIA.set("doc-" + r, "doc-" + r);
    ARIA.set("directory", "list");
    ARIA.set("img", "image");
    ARIA.set("image", "image");
    ARIA.set("presentation", "none");
    ARIA.set("none", "none");

    const set = (s) => new Set(s.split(" "));
    // Roles an agent acts on, and the few that give those controls context.
    const INTERACTIVE = set("button link textbox searchbox combobox listbox option checkbox radio switch slider " +
      "spinbutton menuitem menuitemcheckbox menuitemradio tab treeitem Iframe DisclosureTriangle Date DateTime " +
      "InputTime ColorWell heading image cell gridcell columnheader rowheader caption figure row");
    // Roles whose own name comes from their content (Blink SupportsNameFromContents).
    const NAME_FROM_CONTENT = set("button cell checkbox columnheader DisclosureTriangle gridcell heading " +
      "LayoutTableCell link option math menuitem menuitemcheckbox menuitemradio radio rowheader switch tab " +
      "treeitem tooltip term doc-backlink doc-biblioref doc-noteref doc-glossref");
    // Container roles that never contribute their content to an ancestor's name.
    const NO_CONTENT = set("alert alertdialog application article banner blockquote ColorWell combobox comment " +
      "complementary contentinfo Date DateTime dialog document EmbeddedObject feed figure form graphics-document " +
      "graphics-object graphics-symbol grid group sectionheader sectionfooter Iframe image InputTime listbox log " +
      "main marquee menu menubar meter navigation note PluginObject progressbar radiogroup RootWebArea rowgroup " +
      "scrollbar search searchbox slider spinbutton status suggestion table tablist tabpanel textbox timer " +
      "toolbar tree treegrid Video Audio SvgRoot MathMLMath");
    // Roles for which a title attribute is not used as the name.
    const NAME_PROHIBITED = set("caption code definition deletion emphasis generic insertion mark none paragraph " +
      "strong subscript superscript time");
    // Roles treated as controls when deciding whether to put a space between parts of a name.
    const CONTROL = set("button checkbox ColorWell combobox Date DateTime InputTime DisclosureTriangle listbox menu " +
      "menubar menuitem menuitemcheckbox menuitemradio radio scrollbar searchbox slider spinbutton switch tab " +
      "textbox tree");
    const CHECKABLE = set("checkbox radio switch menuitemcheckbox menuitemradio");
    const VALUED = set("textbox searchbox spinbutton slider combobox");
    const TABLE_LIKE = set("table LayoutTable grid treegrid");
    const ROW_LIKE = set("row LayoutTableRow");
    // Roles that keep the table context of their children (Blink IsNeutralWithinTable).
    const TABLE_NEUTRAL = set("generic none group rowgroup");
    // Elements that are never rendered, or whose children are not rendered as DOM content.
    const SKIP = set("head script style template noscript title meta link base param source track datalist area map");
    const NO_CHILDREN = set("iframe frame fencedframe textarea input img video audio object embed br wbr hr " +
      "progress meter");
    const ATOMIC = set("img input select textarea button iframe video audio canvas object embed svg progress meter");
    const FORM_TAGS = set("button input select textarea option optgroup");
    const TEXT_INPUT = set("text email tel url password search number");
    // aria-* attributes that make Chrome ignore role=presentation/none (global states and properties).
    const GLOBAL_ARIA = set("aria-atomic aria-busy aria-controls aria-current aria-describedby aria-description " +
      "aria-details aria-disabled aria-dropeffect aria-errormessage aria-flowto aria-grabbed aria-haspopup " +
      "aria-invalid aria-keyshortcuts aria-label aria-labelledby aria-labeledby aria-live aria-owns aria-relevant " +
      "aria-roledescription");
    const NAME_FROM_ATTR = set("attribute related title value placeholder caption alt");
    const BULLETS = "\u2022".repeat(8);
    const WS = /[ \t\n\r\f]+/g;
    const SPACE_END = /[ \t\n\r\f]$/;
    const SPACE_START = /^[ \t\n\r\f]/;
    // Blink's SimplifyWhiteSpace: HTML whitespace only (no-break spaces stay).
    const EDGE_SPACE = /^ | $/g;
    const simplify = (s) => (s ? s.replace(WS, " ").replace(EDGE_SPACE, "") : "");

    // ---- per-call state ---------------------------------------------------
    let S = null;

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

    const attr = (el, name) => el.getAttribute(name);
    const isTrue = (v) => v !== null && v.toLowerCase() === "true";

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

    // Flat-tree parent: slot for slotted nodes, host for shadow-root children.
    function flatParent(node) {
      const slot = node.assignedSlot;
      if (slot) return slot;
      const p = node.parentNode;
      if (p && p.nodeType === 11) return p.host || null;
      return p;
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
      r = computeRole(el, needsContext(el) ? contextFor(el) || {} : null, el.hasAttributes());
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

    // ---- accessible names (accname 1.2 as Blink implements it) ------------

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

    function isRenderedVisible(el) {
      // Used for aria-labelledby targets: Blink exposes all content of a
      // hidden target, but checks visibility normally for visible ones.
      if (!el.isConnected) return false;
      if (isTrue(attr(el, "aria-hidden"))) return false;
      return vis(el) === 2;
    }

    function hiddenForName(el, root) {
      const tag = el.localName;
      if (tag === "noscript") return true;
      if (root && !root.visible) return false;
      if (tag === "title" || tag === "desc") return el.namespaceURI === "http://www.w3.org/2000/svg" ? false : true;
      if (isTrue(attr(el, "aria-hidden"))) return true;
      if (SKIP.has(tag)) return true;
      return vis(el) !== 2;
    }

    function idRefs(el, name) {
      const v = attr(el, name);
      if (!v) return null;
      const root = el.getRootNode();
      const out = [];
      for (const id of v.trim().split(WS)) {
        const t = id && root.getElementById ? root.getElementById(id) : null;
        if (t) out.push(t);
      }
      return out;
    }

    // Value an embedded control contributes to the name of something else
    // (accname step 2E); null when the element is not such a control.
    function valueForName(el, role) {
      const tag = el.localName;
      if (role === "textbox" || role === "searchbox" || (role === "combobox" && tag === "input")) {
        if (tag === "input" || tag === "textarea") return maskValue(el, true);
        return el.isContentEditable ? el.textContent : "";
      }
      if (role === "slider" || role === "spinbutton" || role === "progressbar" || role === "meter" || role === "scrollbar") {
        const vt = attr(el, "aria-valuetext");
        if (vt !== null) return vt;
        let v = NaN;
        if (tag === "input" || tag === "progress" || tag === "meter") v = el.value === "" ? NaN : Number(el.value);
        if (isNaN(v) && attr(el, "aria-valuenow") !== null) v = parseFloat(attr(el, "aria-valuenow"));
        if (!isNaN(v)) return String(v);
        return null;
      }
      if (role === "combobox" || role === "listbox") {
        if (tag === "select") return [...el.selectedOptions].map((o) => optionName(o)).join(" ");
        const names = [];
        for (const o of el.querySelectorAll("[role=option]")) if (isTrue(attr(o, "aria-selected"))) names.push(simplify(o.textContent));
        return names.join(" ");
      }
      return null;
    }

    function isPassword(el) {
      if (el.localName !== "input") return false;
      if (el.type === "password") return true;
      const ac = (attr(el, "autocomplete") || "").toLowerCase();
      return /\b(current|new)-password\b/.test(ac);
    }

    // Value with secrets masked. In names a password field contributes what
    // Chrome renders (one bullet per character); reported values are always
    // eight bullets, and fields marked as passwords by autocomplete only are
    // masked too.
    function maskValue(el, forName) {
      const v = el.value || "";
      if (!isPassword(el)) return v;
      if (!v) return "";
      return forName && el.type === "password" ? "\u2022".repeat(v.length) : BULLETS;
    }

    function optionName(o) {
      const al = attr(o, "aria-label");
      if (al && al.trim()) return simplify(al);
      return simplify(o.label);
    }

    // Where the text returned by the last textAlternative() came from (Blink's
    // NameFrom): parts named by an attribute are always set apart by a space.
    let FROM = "none";

    // Blink AXNodeObject::TextAlternative: the text, or null when no source
    // was found. root is the aria-labelledby target ({el, visible}) while
    // traversing one.
    function textAlternative(node, recursive, root, visited) {
      FROM = "contents";
      if (node.nodeType === 3) {
        visited.add(node);
        visited.texts++;
        return transform(node.data, flatParent(node));
      }
      const el = node;
      const tag = el.localName;
      if (tag === "br") return "\n";
      const role = roleOf(el);
      if (recursive && !visited.has(el)) {
        const v = valueForName(el, role);
        if (v !== null) { FROM = "value"; return v; }
      }
      const already = visited.has(el);
      visited.add(el);
      // Slots cannot be named themselves, but their assigned content counts.
      const slot = tag === "slot";
      const attrs = el.hasAttributes();
      if (!slot && hiddenForName(el, root)) { FROM = "none"; return ""; }
      if (!slot && attrs && !root && !already) {
        const refs = idRefs(el, el.hasAttribute("aria-labelledby") ? "aria-labelledby" : "aria-labeledby");
        if (refs && refs.length) {
          const parts = [];
          for (const t of refs) {
            const troot = { el: t, visible: isRenderedVisible(t) };
            const r = t === el ? textAlternative(t, true, troot, visited) : recursiveText(t, troot, visited);
            visited.add(t);
            if (r) parts.push(r);
          }
          const s = parts.join(" ");
          if (s.trim()) { FROM = "related"; return s; }
        }
      }
      const al = slot || !attrs ? null : attr(el, "aria-label");
      if (al && al.trim()) { FROM = "attribute"; return al; }
      const nat = nativeText(el, tag, role, visited);
      if (nat !== null) return nat;
      if (tag !== "select" && (root || contentRole(el, role, recursive))) {
        const t = textFromDescendants(el, root, visited);
        if (t) { FROM = "contents"; return t; }
      }
      if (attrs && (root || !prohibited(el, role))) {
        const title = attr(el, "title");
        if (title) { FROM = "title"; return title; }
      }
      FROM = "none";
      return null;
    }

    function recursiveText(node, root, visited) {
      if (node.nodeType === 1 && visited.has(node) && !root) { FROM = "none"; return ""; }
      return textAlternative(node, true, root, visited) || "";
    }

    function prohibited(el, role) {
      return NAME_PROHIBITED.has(role) && !focusable(el);
    }

    function contentRole(el, role, recursive) {
      if (NAME_FROM_CONTENT.has(role)) return true;
      if (role === "row") return S.gridRows.has(el);
      if (NO_CONTENT.has(role) || role.startsWith("doc-") || role.startsWith("MathML")) return false;
      if (recursive) return true;
      // Blink repairs a focused, focusable element without a role by naming it from its content.
      return role !== "RootWebArea" && el === S.focused && focusable(el) && !el.isContentEditable &&
        el.localName !== "body" && el.localName !== "html";
    }

    // Elements by tag in a document (a fast, cached collection) or a shadow root.
    const byTag = (root, tag) => (root.getElementsByTagName ? root.getElementsByTagName(tag) :
      root.querySelectorAll ? root.querySelectorAll(tag) : []);

    // <label>s of a control, in tree order. Element.labels is quadratic on a
    // first call over a large document, so build one map per tree scope.
    function labelsOf(el) {
      const root = S.shadows ? el.getRootNode() : document;
      let m = S.labels.get(root);
      if (!m) {
        m = new Map();
        if (root.querySelectorAll) {
          for (const l of byTag(root, "label")) {
            const c = l.control;
            if (!c) continue;
            const a = m.get(c);
            if (a) a.push(l); else m.set(c, [l]);
          }
        }
        S.labels.set(root, m);
      }
      return m.get(el) || null;
    }

    // Native (HTML) name sources, in Blink's order. null = none found; sets FROM.
    function nativeText(el, tag, role, visited) {
      const labelable = tag === "button" || (tag === "input" && el.type !== "hidden") || tag === "meter" ||
        tag === "output" || tag === "progress" || tag === "select" || tag === "textarea";
      const labels = labelable ? labelsOf(el) : null;
      if (labels) {
        const parts = [];
        for (const lab of labels) {
          const r = recursiveText(lab, null, visited);
          visited.add(lab);
          if (r) parts.push(r);
        }
        return (FROM = "related", parts.join(" ").trim());
      }
      if (tag === "input") {
        const type = el.type;
        if (type === "submit" || type === "reset" || type === "button") {
          if (el.hasAttribute("value")) return (FROM = "value", el.value);
          return (FROM = "contents", type === "submit" ? "Submit" : type === "reset" ? "Reset" : null);
        }
        if (type === "image") {
          const alt = attr(el, "alt");
          if (alt) return (FROM = "attribute", alt);
          if (el.hasAttribute("value")) return (FROM = "attribute", attr(el, "value"));
          const title = attr(el, "title");
          if (title) return (FROM = "title", title);
          return (FROM = "value", "Submit");
        }
      }
      if (tag === "textarea" || (tag === "input" && TEXT_INPUT.has(el.type))) {
        const title = attr(el, "title");
        if (title) return (FROM = "title", title);
        const ph = (attr(el, "placeholder") || "").replace(/[\r\n]/g, "");
        if (ph) return (FROM = "placeholder", ph);
      }
      if (role === "textbox" || role === "searchbox" || (role === "combobox" && tag === "input")) {
        const ap = attr(el, "aria-placeholder");
        if (ap) return (FROM = "placeholder", ap);
        return null;
      }
      if (tag === "img" || (tag === "area")) {
        const alt = attr(el, "alt");
        if (alt !== null) return (FROM = "attribute", alt);
        return null;
      }
      if (tag === "table") {
        const cap = el.caption;
        if (cap) return (FROM = "caption", recursiveText(cap, null, visited));
        const sum = attr(el, "summary");
        if (sum !== null) return (FROM = "attribute", sum);
        return null;
      }
      if (el.namespaceURI === "http://www.w3.org/2000/svg") {
        for (const c of el.children) {
          if (c.localName === "title") {
            const t = c.textContent;
            if (t) return (FROM = "related", t);
            break;
          }
        }
        return null;
      }
      if (tag === "fieldset") {
        for (const c of el.children) {
          if (c.localName === "legend") {
            if (visited.has(c)) break;
            return (FROM = "related", recursiveText(c, null, visited));
          }
        }
      }
      if (tag === "optgroup") {
        const l = attr(el, "label");
        if (l) return (FROM = "attribute", l);
      }
      if (tag === "option") return (FROM = "contents", optionName(el));
      return null;
    }

    // How a child box sits in the layout, for Blink's rule on when two parts
    // of a name are separated by a space: a bit set of these flags.
    const INLINE = 1, ATOMIC_BOX = 2, CONTROL_BOX = 4;
    function boxOf(node, role) {
      const d = style(node).display;
      let b = CONTROL.has(role) ? CONTROL_BOX : 0;
      if (d === "contents") return b;
      if (d.startsWith("inline") || d === "ruby" || d === "ruby-text") {
        b |= INLINE;
        if (d !== "inline" || ATOMIC.has(node.localName)) b |= ATOMIC_BOX;
      }
      return b;
    }

    // Blink AXNodeObject::TextFromDescendants.
    function textFromDescendants(el, root, visited) {
      // Form controls render their value in a user-agent shadow tree.
      const tag = el.localName;
      if (tag === "textarea" || (tag === "input" && (TEXT_INPUT.has(el.type) || el.type === ""))) return maskValue(el, true);
      if (tag === "input") {
        // The text of the user-agent button (Chrome's en-US strings).
        const type = el.type;
        if (type === "submit" || type === "reset" || type === "button")
          return el.hasAttribute("value") ? el.value : type === "submit" ? "Submit" : type === "reset" ? "Reset" : "";
        if (type === "file") return el.multiple ? "Choose Files" : "Choose File";
        return "";
      }
      const pseudo = mayHavePseudo(el);
      const kids = flatChildren(el);
      // The common case: plain text inside a link, button or heading.
      if (!pseudo && kids.length === 1 && kids[0].nodeType === 3) {
        visited.add(kids[0]);
        visited.texts++;
        return transform(kids[0].data, el);
      }
      let acc = "";
      let prev = -1, lastFrom = "none", blockBetween = false;
      const add = (text, from, box) => {
        if (text && prev >= 0 && acc && !SPACE_END.test(acc) && !SPACE_START.test(text)) {
          if (blockBetween || !(prev & INLINE) || !(box & INLINE) || ((prev | box) & (ATOMIC_BOX | CONTROL_BOX)) ||
            NAME_FROM_ATTR.has(lastFrom) || NAME_FROM_ATTR.has(from)) acc += " ";
        }
        acc += text;
        prev = box;
        blockBetween = false;
        if (text) lastFrom = from;
      };
      if (pseudo) {
        const p = pseudoText(el, "::before");
        if (p) add(p.text, p.alt ? "alt" : "contents", p.inline ? INLINE : 0);
      }
      for (let i = 0; i < kids.length; i++) {
        const c = kids[i];
        // Blink stops after about 100 pieces of text (its limit on visited
        // objects counts the named element and the text it reached).
        if (visited.texts > 100) break;
        const type = c.nodeType;
        if (type === 3) {
          visited.add(c);
          visited.texts++;
          add(transform(c.data, el), "contents", INLINE);
          continue;
        }
        if (type !== 1) continue;
        if (hiddenForName(c, root)) {
          // A hidden block between two inline parts still separates them.
          if (!SKIP.has(c.localName) && vis(c) !== 0 && !style(c).display.startsWith("inline")) blockBetween = true;
          continue;
        }
        const role = roleOf(c);
        let r, from;
        if (role === "none") { r = textFromDescendants(c, root, visited); from = "none"; }
        else { r = recursiveText(c, root, visited); from = FROM; }
        add(r, from, boxOf(c, role));
      }
      if (pseudo) {
        const p = pseudoText(el, "::after");
        if (p) add(p.text, p.alt ? "alt" : "contents", p.inline ? INLINE : 0);
      }
      return acc;
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

    function accName(el, role) {
      const visited = new Set();
      visited.texts = 1;
      const name = simplify(textAlternative(el, false, null, visited));
      return el.localName === "input" && el.type === "file" ? withFiles(name, el) : name;
    }

    // Chrome names a file input after its label (else its button text) and
    // appends what the input displays about the chosen files.
    function withFiles(name, el) {
      const n = el.files ? el.files.length : 0;
      if (n === 0) return name;
      const shown = n === 1 ? el.files[0].name : n + " files";
      return name ? name + ": " + shown : shown;
    }

    // ---- states -----------------------------------------------------------
    function checkedState(el, role) {
      if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) {
        if (el.type === "checkbox" && el.indeterminate && role !== "switch") return "mixed";
        return el.checked;
      }
      const v = (attr(el, "aria-checked") || "").trim().toLowerCase();
      if (!v) return false;
      if (v === "mixed") return role === "checkbox" || role === "menuitemcheckbox" ? "mixed" : false;
      return v !== "false";
    }

    function controlValue(el, role) {
      const tag = el.localName;
      if (tag === "input" || tag === "textarea") return maskValue(el);
      if (tag === "select") {
        const i = el.selectedIndex;
        return i >= 0 ? simplify(el.options[i].text) : "";
      }
      if (role === "slider" || role === "spinbutton") {
        const vt = attr(el, "aria-valuetext");
        if (vt !== null) return vt;
        return attr(el, "aria-valuenow") || "";
      }
      return simplify(el.isContentEditable ? el.innerText : el.textContent);
    }

    function labelText(el) {
      const parts = [];
      const refs = idRefs(el, "aria-labelledby");
      if (refs) for (const r of refs) parts.push(r.innerText || r.textContent);
      const labels = labelsOf(el);
      if (labels) for (const l of labels) parts.push(l.innerText || l.textContent);
      return simplify(parts.join(" "));
    }

    function addDetails(o, el, role) {
      const put = (k, v) => { v = simplify(v); if (v) o[k] = v; };
      if (!el) return;
      put("label", labelText(el));
      put("placeholder", attr(el, "placeholder") || attr(el, "aria-placeholder"));
      put("alt", attr(el, "alt"));
      put("title", attr(el, "title"));
      put("testid", attr(el, "data-testid") || attr(el, "data-test-id") || attr(el, "data-test") ||
        attr(el, "data-qa") || attr(el, "testid"));
      if (el !== document.documentElement && el.innerText !== undefined) {
        const t = simplify(el.innerText);
        if (t) o.text = t.length > 500 ? t.slice(0, 500) : t;
      }
      if (role === "link" && el.href) o.href = typeof el.href === "string" ? el.href : el.href.baseVal;
    }

    // ---- the walk -----------------------------------------------------------
    function emit(node, role, name, depth, el, ctx) {
      const o = { ref: refFor(node, S), role, name, depth };
      if (el) {
        o.tag = el.localName;
        if (CHECKABLE.has(role)) o.checked = checkedState(el, role);
        if (VALUED.has(role)) o.value = controlValue(el, role);
        if ((FORM_TAGS.has(o.tag) && el.matches(":disabled")) || ctx.ariaDisabled || isTrue(attr(el, "aria-disabled")))
          o.disabled = true;
        if (el === S.focused) o.focused = true;
        const ex = (attr(el, "aria-expanded") || "").toLowerCase();
        if (ex === "true" || ex === "false") o.expanded = ex === "true";
        else if (role === "DisclosureTriangle") o.expanded = !!el.parentElement.open;
        else if (el.popoverTargetElement) o.expanded = el.popoverTargetElement.matches(":popover-open");
        if (role === "option") {
          if (el.localName === "option" ? el.selected : isTrue(attr(el, "aria-selected"))) o.selected = true;
        } else if (isTrue(attr(el, "aria-selected"))) o.selected = true;
        if (role === "heading") o.level = headingLevel(el);
        if (el.required || isTrue(attr(el, "aria-required"))) o.required = true;
        if (role === "Iframe") o.frame = true;
        if (closedRoots.has(el)) o.shadow = "closed";
        if (S.details) addDetails(o, el, role);
      }
      S.out.push(o);
    }

    function headingLevel(el) {
      const n = parseInt(attr(el, "aria-level"), 10);
      if (n > 0) return n;
      const m = /^h([1-6])$/.exec(el.localName);
      if (m) return +m[1];
      return el.hasAttribute("aria-level") ? 1 : 2;
    }

    function visitText(t, ctx, depth, parent) {
      if (S.interactive || ctx.noText || (S.modalPath && !S.inModal)) return;
      const name = simplify(transform(t.data, parent));
      if (!name || vis(parent) !== 2) return;
      if (S.maxDepth >= 0 && depth > S.maxDepth) return;
      emit(t, "StaticText", name, depth, null, ctx);
    }

    function walkChildren(el, tag, ctx, depth) {
      if (S.interactive) {
        // Text is never emitted here: visit elements only, so the (costly)
        // wrappers of text nodes are never created in our world.
        let first = null;
        const sr = shadowOf(el);
        if (sr) {
          S.shadows = true;
          first = sr.firstElementChild;
        }
        else if (tag === "slot") {
          const a = el.assignedNodes({ flatten: true });
          if (a.length) {
            for (let i = 0; i < a.length; i++) if (a[i].nodeType === 1) walkElement(a[i], ctx, depth);
            return;
          }
          first = el.firstElementChild;
        } else first = el.firstElementChild;
        for (let c = first; c; c = c.nextElementSibling) walkElement(c, ctx, depth);
        return;
      }
      const kids = flatChildren(el);
      for (let i = 0; i < kids.length; i++) {
        const c = kids[i];
        const type = c.nodeType;
        if (type === 1) walkElement(c, ctx, depth);
        else if (type === 3) visitText(c, ctx, depth, el);
      }
    }

    // Only a few roles change how descendants are interpreted; everything
    // else passes the parent's context through unchanged.
    function childContext(el, role, ctx, included, attrs) {
      // Most elements are plain containers that change nothing.
      if (role === "generic" && !attrs && !ctx.table && !ctx.noText) {
        const tag = el.localName;
        if (tag !== "section" && tag !== "aside") return ctx;
      }
      let c = ctx;
      const fork = () => (c === ctx ? (c = Object.assign({}, ctx)) : c);
      if (TABLE_LIKE.has(role)) { fork(); c.table = role; c.row = null; }
      else if (ROW_LIKE.has(role)) { fork(); c.row = role; }
      else if (!TABLE_NEUTRAL.has(role) && (ctx.table || ctx.row)) { fork(); c.table = c.row = null; }
      if (role === "listbox") { fork(); c.optionOk = true; }
      else if (role === "combobox" && el.localName === "select") { fork(); c.optionOk = true; c.inCombo = true; }
      else if (role !== "group" && role !== "generic" && role !== "none" && ctx.optionOk) { fork(); c.optionOk = false; c.inCombo = false; }
      if (role === "tree") { fork(); c.treeOk = true; }
      else if (role !== "group" && role !== "generic" && role !== "none" && role !== "treeitem" && ctx.treeOk) { fork(); c.treeOk = false; }
      if (role === "list") { fork(); c.listOk = true; }
      else if (role !== "generic" && role !== "none" && ctx.listOk) { fork(); c.listOk = false; }
      const tag = el.localName;
      if (role === "article" || role === "main" || role === "navigation" || tag === "section" ||
        (tag === "aside" || role === "complementary")) {
        if (!ctx.landmarkOff || (role !== "main" && !ctx.asideOff)) {
          fork(); c.landmarkOff = true; if (role !== "main") c.asideOff = true;
        }
      }
      if (attrs && !ctx.ariaDisabled && isTrue(attr(el, "aria-disabled"))) { fork(); c.ariaDisabled = true; }
      if (role === "LabelText" && !included) { fork(); c.noText = true; }
      else if (included && ctx.noText) { fork(); c.noText = false; }
      // Chrome shows no text under native <option>s (the select renders them).
      if (el.localName === "option" || role === "RubyAnnotation") { fork(); c.noText = true; }
      if (role === "grid" || role === "treegrid") { fork(); c.grid = true; }
      return c;
    }

    // Whether an element with a non-generic role is part of Chrome's tree.
    function included(el, role) {
      switch (role) {
        case "generic": case "none": case "LineBreak": case "RubyAnnotation": return false;
        case "rowgroup": return el.localName !== "tbody";
        case "image":
          if (el.localName === "img" && attr(el, "alt") === "" && !hasAnyAria(el) && !attr(el, "title")) return false;
          return true;
        case "LabelText": return !redundantLabel(el);
        case "paragraph": case "caption": case "Figcaption":
          return hasRenderedContent(el);
        case "Canvas":
          if (hasRenderedContent(el) || hasAnyAria(el) || attr(el, "title")) return true;
          return false;
        case "graphics-symbol": case "group":
          if (el.namespaceURI === "http://www.w3.org/2000/svg") {
            if (hasAnyAria(el) || attr(el, "role")) return true;
            for (const c of el.children) if (c.localName === "title" || c.localName === "desc") return true;
            return false;
          }
          return true;
      }
      return true;
    }

    function hasAnyAria(el) {
      for (const a of el.attributes) if (a.name.startsWith("aria-")) return true;
      return false;
    }

    function hasRenderedContent(el) {
      for (let c = el.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 1) return true;
        if (c.nodeType === 3 && c.data.trim()) return true;
      }
      return !!shadowOf(el);
    }

    // Blink IsRedundantLabel: a <label> naming a checkbox/radio that has no
    // other element inside is folded into the control.
    function redundantLabel(label) {
      const input = label.control;
      if (!input || input.localName !== "input" || (input.type !== "checkbox" && input.type !== "radio")) return false;
      if (vis(input) !== 2) return false;
      if ((attr(input, "aria-label") || "").trim() || input.hasAttribute("aria-labelledby")) return false;
      const first = label.firstElementChild;
      if (!first) return true;
      if (first !== input) return false;
      return first.nextElementSibling === null;
    }

    function walkElement(el, ctx, depth) {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (S.modalPath && !S.inModal && !S.modalPath.has(el)) return;
      const attrs = el.hasAttributes();
      if (attrs && (isTrue(attr(el, "aria-hidden")) || el.hasAttribute("inert"))) return;
      const role = computeRole(el, ctx, attrs);
      if (role !== "generic") S.roles.set(el, role);
      if (role === "row" && ctx.grid) S.gridRows.add(el);
      const want = S.interactive
        ? INTERACTIVE.has(role) && !(role === "option" && ctx.inCombo)
        : role !== "generic" && role !== "none";
      let inc = false;
      let d = depth;
      // Rendering is only checked for nodes we may emit (and for [hidden],
      // to prune cheaply); hidden generic containers are walked through and
      // each candidate inside finds itself unrendered.
      if (want || (attrs && el.hasAttribute("hidden"))) {
        const v = vis(el);
        if (v === 0) return;
        if (want && v === 2 && (!S.modalPath || S.inModal || el === S.modal) && included(el, role)) {
          inc = true;
          if (S.maxDepth >= 0 && depth > S.maxDepth) return;
          emit(el, role, accName(el, role), depth, el, ctx);
          d = depth + 1;
          if (S.maxDepth >= 0 && d > S.maxDepth) return;
        }
      }
      if (NO_CHILDREN.has(tag)) return;
      const cctx = childContext(el, role, ctx, inc, attrs);
      const enterModal = S.modalPath && el === S.modal;
      if (enterModal) S.inModal = true;
      if (tag === "details" && !el.open) {
        // Only the summary of a closed <details> is rendered.
        for (const c of el.children) {
          if (c.localName === "summary") { walkElement(c, cctx, d); break; }
        }
      } else if (tag === "select") {
        // Options and groups only: a select renders nothing else.
        for (const c of el.children) walkElement(c, cctx, d);
      } else {
        walkChildren(el, tag, cctx, d);
      }
      if (enterModal) S.inModal = false;
    }

    // Context of the ancestors of an element: derived as the walk would, top down.
    function contextFor(el) {
      const chain = [];
      for (let n = flatParent(el); n && n.nodeType === 1; n = flatParent(n)) chain.push(n);
      let ctx = {};
      for (let i = chain.length - 1; i >= 0; i--) {
        const a = chain[i];
        if (isTrue(attr(a, "aria-hidden")) || a.hasAttribute("inert") || vis(a) === 0) return null;
        if (a.localName === "details" && !a.open && el.localName !== "summary") return null;
        const role = S.roles.get(a) || computeRole(a, ctx, a.hasAttributes());
        ctx = childContext(a, role, ctx, vis(a) === 2 && included(a, role), a.hasAttributes());
      }
      return ctx;
    }

    function deepActive() {
      let a = document.activeElement;
      while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
      return a && a !== document.body && a !== document.documentElement ? a : null;
    }

    function snapshot(opts, root) {
      opts = opts || {};
      // A modal dialog (showModal) makes everything outside it inert for Chrome.
      let modal = null;
      for (const d of document.getElementsByTagName("dialog")) if (d.open && d.matches(":modal")) modal = d;
      S = {
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
      };
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
        return { nodes: S.out, nextRef: S.nextRef };
      } finally {
        S = null;
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

    return Object.freeze({
      adoptClosedRoot: (host, root) => { closedRoots.set(host, root); hostsDirty = true; },
      isClosedHost: (el) => closedRoots.has(el),
      unknownHosts,
      snapshot,
      resolve,
      refOf: (node) => (node && refOf.get(node)) || null,
    });
  })();
}
true;
