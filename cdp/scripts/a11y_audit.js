// A deterministic accessibility check of the current document: a few rules that catch what most
// hurts people using assistive technology (and agents reading the accessibility tree), each with
// a count and up to five samples. Elements nobody can perceive (not rendered, aria-hidden) are
// skipped. Evaluated in our isolated world, which shares the page's DOM.
// The score is the original's: 100 less 10 per serious, 5 per moderate and 2 per minor instance,
// floored at 0, so the same page scores the same against either server.
(() => {
  const SAMPLES = 5;
  const WEIGHT = { serious: 10, moderate: 5, minor: 2 };   // points off per instance
  const shown = (el) => el.getClientRects().length > 0 && !el.closest("[aria-hidden=true]");
  const text = (el) => (el.textContent || "").replace(/\s+/g, " ").trim();
  const labelledBy = (el) => (el.getAttribute("aria-labelledby") || "").split(/\s+/)
    .map((id) => id && document.getElementById(id)).some((l) => l && text(l));
  const attrName = (el) => ["aria-label", "title"].some((a) => (el.getAttribute(a) || "").trim()) || labelledBy(el);
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) return s + "#" + el.id;
    for (const a of ["name", "type", "href", "src"]) {
      const v = el.getAttribute(a);
      if (v) { s += "[" + a + "=\"" + v.slice(0, 60) + "\"]"; break; }
    }
    const t = text(el).slice(0, 40);
    return t ? s + " \"" + t + "\"" : s;
  };
  const findings = [];
  const rule = (name, severity, els) => {
    if (els.length) findings.push({ rule: name, severity, count: els.length, samples: els.slice(0, SAMPLES).map(describe) });
  };
  const all = (sel) => Array.from(document.querySelectorAll(sel)).filter(shown);
  const labelled = (el) => {
    if (attrName(el)) return true;
    if (el.closest("label") && text(el.closest("label"))) return true;
    return !!(el.id && Array.from(document.querySelectorAll("label[for]"))
      .some((l) => l.htmlFor === el.id && text(l)));
  };

  rule("missing-alt", "serious", all("img:not([alt]), input[type=image]:not([alt]), area[href]:not([alt])")
    .filter((el) => !["presentation", "none"].includes(el.getAttribute("role"))));
  rule("missing-label", "serious", all("input, select, textarea")
    .filter((el) => !["hidden", "submit", "button", "reset", "image"].includes((el.type || "").toLowerCase()))
    .filter((el) => !labelled(el)));
  rule("empty-link", "moderate", all("a[href]").filter((el) => !text(el) && !attrName(el)
    && !Array.from(el.querySelectorAll("img[alt]")).some((i) => i.alt.trim())));
  rule("empty-button", "moderate", all("button, [role=button], input[type=submit], input[type=button]")
    .filter((el) => !text(el) && !attrName(el) && !(el.value || "").trim()
      && !Array.from(el.querySelectorAll("img[alt]")).some((i) => i.alt.trim())));
  if (!(document.documentElement.getAttribute("lang") || "").trim()) rule("missing-lang", "moderate", [document.documentElement]);
  if (!document.title.trim()) rule("missing-title", "moderate", [document.documentElement]);
  // A heading more than one level below the one before it (h1 then h3) breaks the outline.
  const skips = [];
  let prev = 0;
  document.querySelectorAll("h1, h2, h3, h4, h5, h6").forEach((h) => {
    const level = Number(h.tagName[1]);
    if (prev > 0 && level > prev + 1) skips.push(h);
    prev = level;
  });
  rule("heading-skip", "minor", skips);
  const seen = new Map();
  document.querySelectorAll("[id]").forEach((el) => seen.set(el.id, (seen.get(el.id) || []).concat([el])));
  rule("duplicate-id", "minor", Array.from(seen.values()).filter((els) => els.length > 1).map((els) => els[1]));

  findings.sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
  const lost = findings.reduce((n, f) => n + f.count * WEIGHT[f.severity], 0);
  return { score: Math.max(0, 100 - lost), findings };
})()
