// What a scraper keeps of a document: title, meta tags, JSON-LD, links and the content as light
// Markdown. A function of the document, so it serves a rendered page (``document``) and a fetched,
// unrendered one (``new DOMParser().parseFromString(html, "text/html")``) alike.
(doc, base) => {
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const meta = {};
  doc.querySelectorAll("meta[name], meta[property]").forEach((m) => {
    const key = m.getAttribute("name") || m.getAttribute("property");
    const value = m.getAttribute("content");
    if (key && value && Object.keys(meta).length < 50) meta[key.toLowerCase()] = value.slice(0, 500);
  });
  const schema = [];
  doc.querySelectorAll('script[type="application/ld+json"]').forEach((s) => {
    try { const v = JSON.parse(s.textContent); (Array.isArray(v) ? v : [v]).forEach((x) => schema.push(x)); } catch (e) { /* not JSON */ }
  });
  const links = [];
  doc.querySelectorAll("a[href]").forEach((a) => {
    try {
      const u = new URL(a.getAttribute("href"), base);
      if (u.protocol === "http:" || u.protocol === "https:") { u.hash = ""; links.push(u.href); }
    } catch (e) { /* not a URL */ }
  });
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "NAV", "FOOTER", "HEADER", "FORM", "IFRAME"]);
  const out = [];
  const inline = (el) => clean(el.textContent);
  const walk = (el) => {
    for (const node of el.children) {
      if (SKIP.has(node.tagName) || node.hidden || node.getAttribute("aria-hidden") === "true") continue;
      const tag = node.tagName;
      if (/^H[1-6]$/.test(tag)) { const t = inline(node); if (t) out.push("#".repeat(+tag[1]) + " " + t); }
      else if (tag === "P" || tag === "BLOCKQUOTE") { const t = inline(node); if (t) out.push((tag === "P" ? "" : "> ") + t); }
      else if (tag === "LI") { const t = inline(node); if (t) out.push("- " + t); }
      else if (tag === "PRE") { out.push("```\n" + node.textContent.replace(/\n+$/, "") + "\n```"); }
      else if (tag === "TR") { const cells = Array.from(node.children).map(inline); if (cells.some(Boolean)) out.push("| " + cells.join(" | ") + " |"); }
      else if (node.children.length === 0 || Array.from(node.childNodes).some((c) => c.nodeType === 3 && c.textContent.trim())) {
        const t = inline(node); if (t) out.push(t);   // a leaf, or text mixed with inline markup
      }
      else walk(node);
    }
  };
  const root = doc.querySelector("main, article, [role=main]") || doc.body;
  if (root) walk(root);
  return { title: clean(doc.title), meta, schema: schema.slice(0, 20), links, markdown: out.join("\n\n") };
}
