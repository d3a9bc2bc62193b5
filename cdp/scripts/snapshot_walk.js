// Snapshot engine: the states of an emitted node, and the walk that emits nodes in document order.
(function walk(P) {
  "use strict";
  const { attr, maskValue, simplify, idRefs, labelsOf, refFor, S, CHECKABLE, VALUED, FORM_TAGS, isTrue, closedRoots,
    transform, vis, shadowOf, flatChildren, TABLE_LIKE, ROW_LIKE, TABLE_NEUTRAL, SKIP, computeRole, INTERACTIVE,
    accName, NO_CHILDREN, flatParent } = P;

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

  Object.assign(P, { walkElement, contextFor });
})
