// DOM helpers for our isolated world, added to the walker's __pinchtab object.
(() => {
  if (!globalThis.__pinchtab || globalThis.__pinchtab.query) return;
  // The walker's object may be frozen; ours extends a copy of it.
  const pt = globalThis.__pinchtab = Object.assign({}, globalThis.__pinchtab);

  // Every element under root, including those inside open shadow roots (document order).
  function* deep(root) {
    const stack = [root];
    while (stack.length) {
      const node = stack.pop();
      const kids = [];
      if (node.shadowRoot) kids.push(...node.shadowRoot.children);
      kids.push(...(node.children || []));
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      if (node.nodeType === 1) yield node;
    }
  }

  // A CSS selector: the light DOM first (fast), then open shadow roots.
  pt.query = (sel, root) => {
    root = root || document;
    const found = root.querySelector(sel);
    if (found) return found;
    for (const el of deep(root)) if (el.shadowRoot) {
      const inner = pt.query(sel, el.shadowRoot);
      if (inner) return inner;
    }
    return null;
  };

  pt.count = (sel, root) => {
    root = root || document;
    let n = root.querySelectorAll(sel).length;
    for (const el of deep(root)) if (el.shadowRoot) n += pt.count(sel, el.shadowRoot);
    return n;
  };

  const NOISE = 'nav, footer, aside, header, [role=navigation], [role=banner], [role=contentinfo], ' +
    '[role=complementary], [aria-hidden=true], .ad, .ads, .advert, .sidebar, .cookie, .cookies, ' +
    '.popup, .modal, [class*=cookie-banner], [id*=cookie-banner]';

  function visible(el) {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  }

  // Readable text: the main article if there is one, else the body without page chrome.
  pt.readable = () => {
    const main = [...document.querySelectorAll('article, [role=main], main')].find(visible);
    if (main) return tidy(main.innerText || '');
    if (!document.body) return '';
    // innerText needs layout, so measure the live body and subtract the noise blocks' text.
    let text = document.body.innerText || '';
    for (const el of document.body.querySelectorAll(NOISE)) {
      const t = el.innerText;
      if (t && t.trim()) text = text.replace(t, '');
    }
    return tidy(text);
  };

  pt.rawText = () => (document.body ? document.body.innerText || '' : '');

  function tidy(t) {
    return t.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
  }
})();
true;
