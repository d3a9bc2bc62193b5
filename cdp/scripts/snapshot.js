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
      "InputTime ColorWell heading image cell gridcell columnheader rowheader caption figure");
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
    const NO_CHILDREN = set("iframe frame fencedframe textarea input select img video audio object embed br wbr hr " +
      "progress meter");
    const ATOMIC = set("img input select textarea button iframe video audio canvas object embed svg progress meter");
    const TEXT_INPUT = set("text email tel url password search number");
    // aria-* attributes that make Chrome ignore role=presentation/none (global states and properties).
    const GLOBAL_ARIA = set("aria-atomic aria-busy aria-controls aria-current aria-describedby aria-description " +
      "aria-details aria-disabled aria-dropeffect aria-errormessage aria-flowto aria-grabbed aria-haspopup " +
      "aria-invalid aria-keyshortcuts aria-label aria-labelledby aria-labeledby aria-live aria-owns aria-relevant " +
      "aria-roledescription");
    const NAME_FROM_ATTR = set("attribute related title value placeholder caption alt");
    const BULLETS = "\u2022".repeat(8);
    const WS = /[ \t\n\r\f]+/g;
    const simplify = (s) => (s ? s.replace(WS, " ").trim() : "");

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
    // ancestors (ctx may be null when naming outside the walk: neutral guesses).
    function roleOf(el, st, ctx) {
      const cached = S.roles.get(el);
      if (cached !== undefined) return cached;
      let role = null;
      const raw = attr(el, "role");
      if (raw) {
        for (const tok of raw.trim().toLowerCase().split(WS)) {
          const r = ARIA.get(tok);
          if (!r) continue;
          // Unnamed form/region are not landmarks: Chrome skips the token.
          if ((r === "form" || r === "region") && !namedByAuthor(el)) continue;
          role = r;
          break;
        }
        if (role === "none" && (focusable(el) || hasGlobalAria(el))) role = null;
        if (role === "none" && (el.localName === "iframe" || el.localName === "frame")) role = null;
        if (role === "option" && ctx && ctx.optionOk !== true) role = "generic";
        if (role === "treeitem" && ctx && ctx.treeOk !== true) role = "generic";
        if (role === "listitem" && ctx && ctx.listOk !== true) role = "generic";
      }
      if (!role) role = nativeRole(el, st || style(el), ctx);
      if (role === "cell" && ctx && (ctx.table === "grid" || ctx.table === "treegrid")) role = "gridcell";
      return role;
    }

    function nativeRole(el, st, ctx) {
      const tag = el.localName;
      switch (tag) {
        case "a": return el.hasAttribute("href") ? "link" : "generic";
        case "img": return "image";
        case "button": return "button";
        case "input": return inputRole(el);
        case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
        case "option": return "option";
        case "optgroup": return "group";
        case "textarea": return "textbox";
        case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
        case "ul": case "ol": case "menu": case "dir": return "list";
        case "li": {
          const p = flatParent(el);
          if (p && p.nodeType === 1 && (p.localName === "ul" || p.localName === "ol" || p.localName === "menu")) {
            const pr = (attr(p, "role") || "").trim().toLowerCase();
            if (pr && pr !== "list" && pr !== "directory") return "none";
          }
          return "listitem";
        }
        case "meter": return "meter";
        case "progress": return "progressbar";
        case "output": return "status";
        case "p": return "paragraph";
        case "label": return "LabelText";
        case "legend": return "Legend";
        case "dl": return "DescriptionList";
        case "dd": return "definition";
        case "dt": case "dfn": return "term";
        case "form": return namedByAuthor(el) ? "form" : "generic";
        case "abbr": return "Abbr";
        case "article": return "article";
        case "code": return "code";
        case "em": return "emphasis";
        case "strong": return "strong";
        case "search": return "search";
        case "del": case "s": return "deletion";
        case "ins": return "insertion";
        case "sub": return "subscript";
        case "sup": return "superscript";
        case "main": return "main";
        case "mark": return "mark";
        case "nav": return "navigation";
        case "aside":
          return ctx && ctx.asideOff && !namedByAuthor(el) ? "generic" : "complementary";
        case "section": return namedByAuthor(el) ? "region" : "generic";
        case "address": case "hgroup": case "fieldset": case "details": return "group";
        case "dialog": return "dialog";
        case "html": case "body": return "generic";
        case "iframe": case "frame": case "fencedframe": return "Iframe";
        case "header": return ctx && ctx.landmarkOff ? "sectionheader" : "banner";
        case "footer": return ctx && ctx.landmarkOff ? "sectionfooter" : "contentinfo";
        case "blockquote": return "blockquote";
        case "caption": return "caption";
        case "figcaption": return "Figcaption";
        case "figure": return "figure";
        case "time": return "time";
        case "hr": return "separator";
        case "canvas": return "Canvas";
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
        case "g": return "group";
        case "math": return "MathMLMath";
        case "mi": return "MathMLIdentifier";
        case "mn": return "MathMLNumber";
        case "mo": return "MathMLOperator";
        case "mfrac": return "MathMLFraction";
        case "msqrt": return "MathMLSquareRoot";
        case "mroot": return "MathMLRoot";
        case "msub": return "MathMLSub";
        case "msup": return "MathMLSup";
        case "msubsup": return "MathMLSubSup";
        case "mtext": case "annotation": return "MathMLText";
        case "mrow": case "mstyle": case "mpadded": case "mphantom": case "semantics": case "merror":
        case "maction": case "annotation-xml": return "MathMLRow";
        case "embed": return "EmbeddedObject";
        case "object": return "PluginObject";
        case "video": return "Video";
        case "audio": return "Audio";
        case "ruby": return "Ruby";
        case "rt": case "rp": return "RubyAnnotation";
        case "br": return "LineBreak";
      }
      // Roles Blink derives from the layout box of other elements.
      const d = st.display;
      if (d === "list-item") return "listitem";
      if (el.namespaceURI === "http://www.w3.org/2000/svg") {
        return /^(circle|ellipse|line|path|polygon|polyline|rect|image|use)$/.test(tag) ? "graphics-symbol" : "generic";
      }
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

    // CSS ::before/::after content is part of the text of its element. Reading
    // pseudo styles is expensive, so only elements matched by a selector of a
    // stylesheet rule that targets ::before/::after are looked at (see
    // pseudoScan); if a sheet cannot be read we look at every element.
    function pseudoScan(root) {
      let sels = [], all = false;
      const visit = (rules) => {
        for (const r of rules) {
          if (r.cssRules && !r.selectorText) { visit(r.cssRules); continue; }
          const t = r.selectorText;
          if (!t) continue;
          if (/:(before|after)\b/i.test(t)) {
            for (const part of t.split(",")) {
              if (!/:(before|after)\b/i.test(part)) continue;
              const base = part.replace(/::?(before|after)\b/gi, "").trim();
              if (!base || /:host|::slotted|::part|&/.test(base)) all = true;
              else sels.push(base);
            }
          }
          if (r.cssRules && r.cssRules.length) visit(r.cssRules);
        }
      };
      const sheets = [...root.styleSheets, ...(root.adoptedStyleSheets || [])];
      for (const sh of sheets) {
        let rules;
        try { rules = sh.cssRules; } catch (e) { all = true; continue; }
        if (rules) visit(rules);
      }
      if (all) return true;
      const found = new Set(root.querySelectorAll("q"));
      for (const s of sels) {
        try { for (const e of root.querySelectorAll(s)) found.add(e); } catch (e) { return true; }
      }
      return found;
    }

    function mayHavePseudo(el) {
      const root = el.getRootNode();
      let info = S.pseudo.get(root);
      if (info === undefined) {
        info = root.styleSheets ? pseudoScan(root) : true;
        S.pseudo.set(root, info);
      }
      return info === true || info.has(el);
    }

    function unescapeCss(s) {
      return s.replace(/\\([0-9a-fA-F]{1,6}[ \t\n]?|[\s\S])/g, (m, g) => {
        if (/^[0-9a-fA-F]/.test(g)) return String.fromCodePoint(parseInt(g, 16));
        return g;
      });
    }

    // Text Blink renders for a ::before/::after box, or its CSS alt text.
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

    function transform(text, el) {
      if (!el || el.nodeType !== 1) return text;
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
      const st = style(el);
      if (st.visibility !== "visible") return false;
      for (let n = el; n && n.nodeType === 1; n = flatParent(n)) if (style(n).display === "none") return false;
      return true;
    }

    function hiddenForName(el, root) {
      const tag = el.localName;
      if (tag === "noscript") return true;
      if (root && !root.visible) return false;
      if (tag === "title" || tag === "desc") return el.namespaceURI === "http://www.w3.org/2000/svg" ? false : true;
      if (isTrue(attr(el, "aria-hidden"))) return true;
      if (SKIP.has(tag)) return true;
      const st = style(el);
      return st.display === "none" || st.visibility !== "visible";
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
        if (tag === "input" || tag === "textarea") return maskValue(el);
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

    // Value with secrets masked; Chrome itself shows password values as bullets.
    function maskValue(el) {
      const v = el.value || "";
      if (isPassword(el)) return v ? (el.type === "password" ? "\u2022".repeat(v.length) : BULLETS) : "";
      return v;
    }

    function optionName(o) {
      const al = attr(o, "aria-label");
      if (al && al.trim()) return simplify(al);
      return simplify(o.label);
    }

    // Blink AXNodeObject::TextAlternative. Returns [text, nameFrom]; a null
    // text means no source was found. root is the aria-labelledby target when
    // traversing one ({el, visible}).
    function textAlternative(node, recursive, root, visited) {
      if (node.nodeType === 3) {
        visited.add(node);
        return [transform(node.data, flatParent(node)), "contents"];
      }
      const el = node;
      const tag = el.localName;
      if (tag === "br") return ["\n", "contents"];
      const role = roleOf(el, null, null);
      if (recursive && !visited.has(el)) {
        const v = valueForName(el, role);
        if (v !== null) return [v, "value"];
      }
      const already = visited.has(el);
      visited.add(el);
      // Slots cannot be named themselves, but their assigned content counts.
      const slot = tag === "slot";
      if (!slot && hiddenForName(el, root)) return ["", "none"];
      if (!slot && !root && !already) {
        const refs = idRefs(el, el.hasAttribute("aria-labelledby") ? "aria-labelledby" : "aria-labeledby");
        if (refs && refs.length) {
          const parts = [];
          for (const t of refs) {
            const r = t === el ? textAlternative(t, true, { el: t, visible: isRenderedVisible(t) }, visited)
              : recursiveText(t, { el: t, visible: isRenderedVisible(t) }, visited)[0];
            visited.add(t);
            const s = Array.isArray(r) ? r[0] : r;
            if (s) parts.push(s);
          }
          const s = parts.join(" ");
          if (s.trim()) return [s, "related"];
        }
      }
      const al = slot ? null : attr(el, "aria-label");
      if (al && al.trim()) return [al, "attribute"];
      const nat = nativeText(el, tag, role, visited);
      if (nat[0] !== null) return nat;
      if (tag !== "select" && (root || contentRole(el, role, recursive))) {
        const t = textFromDescendants(el, root, visited);
        if (t) return [t, "contents"];
      }
      if (root || !prohibited(el, role)) {
        const title = attr(el, "title");
        if (title) return [title, "title"];
      }
      return [null, "none"];
    }

    function recursiveText(node, root, visited) {
      if (node.nodeType === 1 && visited.has(node) && !root) return ["", "none"];
      const r = textAlternative(node, true, root, visited);
      return [r[0] || "", r[1]];
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

    // Native (HTML) name sources, in Blink's order. [null, ...] = none found.
    function nativeText(el, tag, role, visited) {
      const labelable = tag === "button" || (tag === "input" && el.type !== "hidden") || tag === "meter" ||
        tag === "output" || tag === "progress" || tag === "select" || tag === "textarea";
      if (labelable && el.labels && el.labels.length) {
        const parts = [];
        for (const lab of el.labels) {
          const r = recursiveText(lab, null, visited)[0];
          visited.add(lab);
          if (r) parts.push(r);
        }
        return [parts.join(" ").trim(), "related"];
      }
      if (tag === "input") {
        const type = el.type;
        if (type === "submit" || type === "reset" || type === "button") {
          if (el.hasAttribute("value")) return [el.value, "value"];
          return [type === "submit" ? "Submit" : type === "reset" ? "Reset" : null, "contents"];
        }
        if (type === "image") {
          const alt = attr(el, "alt");
          if (alt) return [alt, "attribute"];
          if (el.hasAttribute("value")) return [attr(el, "value"), "attribute"];
          const title = attr(el, "title");
          if (title) return [title, "title"];
          return ["Submit", "value"];
        }
      }
      if (tag === "textarea" || (tag === "input" && TEXT_INPUT.has(el.type))) {
        const title = attr(el, "title");
        if (title) return [title, "title"];
        const ph = (attr(el, "placeholder") || "").replace(/[\r\n]/g, "");
        if (ph) return [ph, "placeholder"];
      }
      if (role === "textbox" || role === "searchbox" || (role === "combobox" && tag === "input")) {
        const ap = attr(el, "aria-placeholder");
        if (ap) return [ap, "placeholder"];
        return [null, "none"];
      }
      if (tag === "img" || (tag === "area")) {
        const alt = attr(el, "alt");
        if (alt !== null) return [alt, "attribute"];
        return [null, "none"];
      }
      if (tag === "table") {
        const cap = el.caption;
        if (cap) return [recursiveText(cap, null, visited)[0], "caption"];
        const sum = attr(el, "summary");
        if (sum !== null) return [sum, "attribute"];
        return [null, "none"];
      }
      if (el.namespaceURI === "http://www.w3.org/2000/svg") {
        for (const c of el.children) {
          if (c.localName === "title") {
            const t = c.textContent;
            if (t) return [t, "related"];
            break;
          }
        }
        return [null, "none"];
      }
      if (tag === "fieldset") {
        for (const c of el.children) {
          if (c.localName === "legend") {
            if (visited.has(c)) break;
            return [recursiveText(c, null, visited)[0], "related"];
          }
        }
      }
      if (tag === "optgroup") {
        const l = attr(el, "label");
        if (l) return [l, "attribute"];
      }
      if (tag === "option") return [optionName(el), "contents"];
      return [null, "none"];
    }

    // Describes how a child box sits in the layout, for Blink's rule on when
    // two parts of a name are separated by a space.
    function boxOf(node, role) {
      if (node.nodeType === 3) return { inline: true, atomic: false, control: false };
      const d = style(node).display;
      const inline = d.startsWith("inline") || d === "ruby" || d === "ruby-text";
      const atomic = inline && (d !== "inline" || ATOMIC.has(node.localName));
      return { inline: inline && d !== "contents", atomic, control: CONTROL.has(role) };
    }

    // Blink AXNodeObject::TextFromDescendants.
    function textFromDescendants(el, root, visited) {
      let acc = "";
      let prev = null, lastFrom = "none", blockBetween = false;
      const add = (text, from, box) => {
        if (text && prev && acc && !/[ \t\n\r\f]$/.test(acc) && !/^[ \t\n\r\f]/.test(text)) {
          if (blockBetween || !prev.inline || !box.inline || prev.atomic || box.atomic ||
            NAME_FROM_ATTR.has(lastFrom) || NAME_FROM_ATTR.has(from) || prev.control || box.control) acc += " ";
        }
        acc += text;
        prev = box;
        blockBetween = false;
        if (text) lastFrom = from;
      };
      const pseudo = (which) => {
        if (!mayHavePseudo(el)) return;
        const p = pseudoText(el, which);
        if (p) add(p.text, p.alt ? "alt" : "contents", { inline: p.inline, atomic: false, control: false });
      };
      pseudo("::before");
      for (const c of flatChildren(el)) {
        if (visited.size > 100) break;
        if (c.nodeType === 3) {
          visited.add(c);
          add(transform(c.data, flatParent(c)), "contents", { inline: true, atomic: false, control: false });
          continue;
        }
        if (c.nodeType !== 1) continue;
        if (hiddenForName(c, root)) {
          if (!SKIP.has(c.localName) && !style(c).display.startsWith("inline") && style(c).display !== "none") blockBetween = true;
          continue;
        }
        const role = roleOf(c, null, null);
        let r;
        if (role === "none") r = [textFromDescendants(c, root, visited), "none"];
        else r = recursiveText(c, root, visited);
        add(r[0], r[1], boxOf(c, role));
      }
      pseudo("::after");
      return acc;
    }

    function flatChildren(node) {
      if (node.shadowRoot) return node.shadowRoot.childNodes;
      if (node.localName === "slot") {
        const a = node.assignedNodes({ flatten: true });
        if (a.length) return a;
      }
      return node.childNodes;
    }

    function accName(el, role) {
      const visited = new Set();
      const r = textAlternative(el, false, null, visited);
      return simplify(r[0]);
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
        const o = el.selectedOptions[0];
        return o ? simplify(o.text) : "";
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
      if (el.labels) for (const l of el.labels) parts.push(l.innerText || l.textContent);
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
        if (el.matches(":disabled") || ctx.ariaDisabled || isTrue(attr(el, "aria-disabled"))) o.disabled = true;
        if (el === S.focused) o.focused = true;
        const ex = (attr(el, "aria-expanded") || "").toLowerCase();
        if (ex === "true" || ex === "false") o.expanded = ex === "true";
        else if (role === "DisclosureTriangle") o.expanded = !!el.parentElement.open;
        if (role === "option") {
          if (el.localName === "option" ? el.selected : isTrue(attr(el, "aria-selected"))) o.selected = true;
        } else if (isTrue(attr(el, "aria-selected"))) o.selected = true;
        if (role === "heading") o.level = headingLevel(el);
        if (el.required || isTrue(attr(el, "aria-required"))) o.required = true;
        if (role === "Iframe") o.frame = true;
        if (S.details) addDetails(o, el, role);
      } else if (node === document) {
        if (document.activeElement === null || document.activeElement === document.body) {
          if (!S.focused) o.focused = true;
        }
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

    function visitText(t, ctx, depth, vis) {
      if (!vis || ctx.noText || S.interactive) return;
      const p = flatParent(t);
      const name = simplify(transform(t.data, p && p.nodeType === 1 ? p : null));
      if (!name) return;
      if (S.maxDepth >= 0 && depth > S.maxDepth) return;
      emit(t, "StaticText", name, depth, null, ctx);
    }

    function walkChildren(node, ctx, depth, vis) {
      const kids = flatChildren(node);
      for (let i = 0; i < kids.length; i++) {
        const c = kids[i];
        if (c.nodeType === 1) walkElement(c, ctx, depth);
        else if (c.nodeType === 3) visitText(c, ctx, depth, vis);
      }
    }

    // Only a few roles change how descendants are interpreted; everything
    // else passes the parent's context through unchanged.
    function childContext(el, role, ctx, included) {
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
      if (isTrue(attr(el, "aria-disabled")) && !ctx.ariaDisabled) { fork(); c.ariaDisabled = true; }
      if (role === "LabelText" && !included) { fork(); c.noText = true; }
      else if (included && ctx.noText) { fork(); c.noText = false; }
      // Chrome shows no text under native <option>s (the select renders them).
      if (el.localName === "option" || role === "RubyAnnotation") { fork(); c.noText = true; }
      if (role === "grid" || role === "treegrid") { fork(); c.grid = true; }
      return c;
    }

    // Whether an element with a non-generic role is part of Chrome's tree.
    function included(el, role, st) {
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
      return !!el.shadowRoot;
    }

    // Blink IsRedundantLabel: a <label> naming a checkbox/radio that has no
    // other element inside is folded into the control.
    function redundantLabel(label) {
      const input = label.control;
      if (!input || input.localName !== "input" || (input.type !== "checkbox" && input.type !== "radio")) return false;
      const st = style(input);
      if (st.display === "none" || st.visibility !== "visible") return false;
      if ((attr(input, "aria-label") || "").trim() || input.hasAttribute("aria-labelledby")) return false;
      const first = label.firstElementChild;
      if (!first) return true;
      if (first !== input) return false;
      return first.nextElementSibling === null;
    }

    function walkElement(el, ctx, depth) {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (S.modalPath && !S.modalPath.has(el) && !S.inModal) return;
      if (isTrue(attr(el, "aria-hidden")) || el.hasAttribute("inert")) return;
      const st = style(el);
      const display = st.display;
      if (display === "none") return;
      const vis = st.visibility === "visible";
      const role = roleOf(el, st, ctx);
      S.roles.set(el, role);
      if (role === "row" && ctx.grid) S.gridRows.add(el);
      const onModalPath = S.modalPath && !S.inModal;
      const inc = vis && !onModalPath && included(el, role, st);
      let d = depth;
      if (inc) {
        const want = S.interactive
          ? INTERACTIVE.has(role) && !(role === "option" && ctx.inCombo)
          : true;
        if (want) {
          if (S.maxDepth >= 0 && depth > S.maxDepth) return;
          emit(el, role, accName(el, role), depth, el, ctx);
          d = depth + 1;
          if (S.maxDepth >= 0 && d > S.maxDepth) return;
        }
      }
      if (NO_CHILDREN.has(tag) && tag !== "select") return;
      if (st.contentVisibility === "hidden") return;
      const cctx = childContext(el, role, ctx, inc);
      const enterModal = S.modalPath && el === S.modal;
      if (enterModal) S.inModal = true;
      if (tag === "details" && !el.open) {
        for (const c of el.children) {
          if (c.localName === "summary") { walkElement(c, cctx, d); break; }
        }
      } else if (tag === "select") {
        for (const c of el.children) walkElement(c, cctx, d);
      } else {
        walkChildren(el, cctx, d, vis);
      }
      if (enterModal) S.inModal = false;
    }

    // Context of the ancestors of a subtree root: walk them without emitting.
    function contextFor(el) {
      const chain = [];
      for (let n = flatParent(el); n && n.nodeType === 1; n = flatParent(n)) chain.push(n);
      let ctx = {};
      for (let i = chain.length - 1; i >= 0; i--) {
        const a = chain[i];
        if (isTrue(attr(a, "aria-hidden")) || a.hasAttribute("inert") || style(a).display === "none") return null;
        if (a.localName === "details" && !a.open && el.localName !== "summary") return null;
        const role = roleOf(a, null, ctx);
        S.roles.set(a, role);
        ctx = childContext(a, role, ctx, style(a).visibility === "visible" && included(a, role, style(a)));
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
      const modal = document.querySelector(":modal");
      S = {
        out: [],
        nextRef: Number.isInteger(opts.nextRef) && opts.nextRef >= 0 ? opts.nextRef : 0,
        interactive: opts.filter === "interactive",
        details: !!opts.details,
        maxDepth: Number.isInteger(opts.maxDepth) ? opts.maxDepth : -1,
        styles: new Map(),
        roles: new Map(),
        pseudo: new Map(),
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
          const ctx = contextFor(root);
          if (ctx) {
            if (S.modalPath) S.inModal = !S.modalPath.has(root) || root === modal ? isInside(root, modal) : false;
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

    return Object.freeze({
      snapshot,
      resolve,
      refOf: (node) => (node && refOf.get(node)) || null,
    });
  })();
}
true;
