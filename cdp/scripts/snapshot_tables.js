// Snapshot engine: the role and name tables of Chrome's accessibility tree, and small helpers.
(function tables(P) {
  "use strict";

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

  const attr = (el, name) => el.getAttribute(name);
  const isTrue = (v) => v !== null && v.toLowerCase() === "true";

  // Elements by tag in a document (a fast, cached collection) or a shadow root.
  const byTag = (root, tag) => (root.getElementsByTagName ? root.getElementsByTagName(tag) :
    root.querySelectorAll ? root.querySelectorAll(tag) : []);

  Object.assign(P, { ARIA, set, INTERACTIVE, NAME_FROM_CONTENT, NO_CONTENT, NAME_PROHIBITED, CONTROL, CHECKABLE,
    VALUED, TABLE_LIKE, ROW_LIKE, TABLE_NEUTRAL, SKIP, NO_CHILDREN, ATOMIC, FORM_TAGS, TEXT_INPUT, GLOBAL_ARIA,
    NAME_FROM_ATTR, BULLETS, WS, SPACE_END, SPACE_START, simplify, attr, isTrue, byTag });
})
