// Snapshot engine: accessible names (accname 1.2 as Blink implements it).
(function names(P) {
  "use strict";
  const { isTrue, attr, vis, SKIP, WS, simplify, BULLETS, transform, flatParent, roleOf, NAME_PROHIBITED, focusable,
    NAME_FROM_CONTENT, S, NO_CONTENT, byTag, TEXT_INPUT, style, CONTROL, ATOMIC, mayHavePseudo, flatChildren,
    SPACE_END, SPACE_START, NAME_FROM_ATTR, pseudoText } = P;

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

  Object.assign(P, { idRefs, maskValue, labelsOf, accName });
})
