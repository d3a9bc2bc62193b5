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

  pt.count = (sel, root) => pt.matches('css', sel).length;

  // Every element a css/xpath/text selector matches in this document, in document order.
  pt.matches = (kind, value) => {
    if (kind === 'css') {
      const out = [...document.querySelectorAll(value)];
      for (const el of deep(document.documentElement || document)) {
        if (el.shadowRoot) out.push(...el.shadowRoot.querySelectorAll(value));
      }
      return out;
    }
    if (kind === 'xpath') {
      const r = document.evaluate(value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      const out = [];
      for (let i = 0; i < r.snapshotLength; i++) {
        const n = r.snapshotItem(i);
        out.push(n.nodeType === 1 ? n : n.parentElement);
      }
      return out.filter(Boolean);
    }
    if (kind === 'text') {
      // The innermost elements whose text holds the words (case and spacing ignored).
      const needle = value.replace(/\s+/g, ' ').trim().toLowerCase();
      const norm = (el) => (el.textContent || '').replace(/\s+/g, ' ').toLowerCase();
      const out = [];
      for (const el of deep(document.body || document.documentElement)) {
        if (/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|HEAD)$/.test(el.tagName)) continue;
        if (!norm(el).includes(needle)) continue;
        const kids = [...el.children, ...(el.shadowRoot ? el.shadowRoot.children : [])];
        if (!kids.some((k) => norm(k).includes(needle))) out.push(el);
      }
      return out;
    }
    throw new Error('unknown selector kind ' + kind);
  };

  // The count of matches and the index-th one (negative: from the end).
  pt.pick = (kind, value, index) => {
    const all = pt.matches(kind, value);
    const i = index < 0 ? all.length + index : index;
    return {count: all.length, el: all[i] || null};
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
    const main = [...document.querySelectorAll('main, [role=main]')].find(visible);
    if (main) return tidy(main.innerText || '');
    if (!document.body) return '';
    // innerText needs layout, so measure the live body and subtract the noise blocks' text.
    let text = document.body.innerText || '';
    for (const el of document.body.querySelectorAll(NOISE)) {
      const t = el.innerText;
      if (t && t.trim()) text = text.replace(t, '');
    }
    // An article stands for the page only when it holds most of its text (a post). A feed's,
    // an index's or search results' several articles are the page's content together.
    let article = '';
    for (const el of document.querySelectorAll('article')) {
      const t = visible(el) ? el.innerText || '' : '';
      if (t.trim().length > article.trim().length) article = t;
    }
    if (article && article.trim().length * 2 > text.trim().length) return tidy(article);
    return tidy(text);
  };

  pt.rawText = () => (document.body ? document.body.innerText || '' : '');

  function tidy(t) {
    return t.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
  }
})();
true;

// Resolves once the DOM has been quiet for quietMs (no mutations), or after capMs at the latest:
// "the page has settled" without a fixed sleep.
(() => {
  const pt = globalThis.__pinchtab;
  if (!pt || pt.quiet) return;
  pt.quiet = (quietMs, capMs) => new Promise((resolve) => {
    const started = performance.now();
    let timer = null;
    const done = () => { obs.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve(performance.now() - started); };
    const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quietMs); });
    obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    timer = setTimeout(done, quietMs);
    const cap = setTimeout(done, capMs);
  });
})();
true;
