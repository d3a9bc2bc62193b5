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
// The engine ships as four files that are one script once joined in order
// (cdp/browser.py snapshot_script): this one opens the closure and holds the
// refs, the role tables, the per-call state and visibility; snapshot_roles.js
// computes roles, snapshot_names.js accessible names, and snapshot_walk.js
// walks the tree, closes the closure and returns the installed object. The
// parts share the closure's scope, so calls between them cost what calls
// within one file cost.
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
