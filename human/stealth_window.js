/*
 * Stealth part: the window itself (outer size and screen, automation drivers' leftover globals at
 * light; same-origin iframes the injection did not reach at medium).
 * One function expression over the shared object S (see stealth_core.js).
 */
(function windowApis(S) {
  'use strict';
  const {cfg, force, rApply, patchGetter, attempt, install, patches} = S;

  function patchWindowSize(win) {
    if (force.has('outer') || win.outerWidth === 0 || win.outerHeight === 0) {
      patchGetter(win, 'outerWidth', (get, self) => rApply(get, self, []) || win.innerWidth);
      // A browser window's frame and toolbars are about 85 px tall.
      patchGetter(win, 'outerHeight', (get, self) => rApply(get, self, []) || win.innerHeight + 85);
    }
    const S = win.Screen && win.Screen.prototype;
    const scr = win.screen;
    if (!S || !scr) return;
    const ow = win.outerWidth, oh = win.outerHeight;
    if (!force.has('screen') && scr.width >= ow && scr.height >= oh && scr.availWidth <= scr.width &&
        scr.availHeight <= scr.height) return;
    // A screen at least as large as the window, as on a desktop with the window maximized.
    const w = Math.max((cfg.screen || [])[0] || 0, ow, scr.width);
    const h = Math.max((cfg.screen || [])[1] || 0, oh, scr.height);
    for (const [prop, v] of [['width', w], ['availWidth', w], ['height', h], ['availHeight', h]]) {
      patchGetter(S, prop, (get, self) => { rApply(get, self, []); return v; });
    }
  }

  // Automation drivers leave globals behind (chromedriver's cdc_ arrays, Selenium's hooks).
  function removeMarkers(win) {
    for (const name of Object.getOwnPropertyNames(win)) {
      if (/^\$?cdc_|^__(?:webdriver|selenium|driver|fxdriver)/.test(name)) attempt(() => { delete win[name]; });
    }
  }
  // Same-origin iframes: patch their window when the page first reaches it through the element
  // (a frame whose document came before our script, or one our injection did not reach).
  function patchFrames(win) {
    const P = win.HTMLIFrameElement && win.HTMLIFrameElement.prototype;
    patchGetter(P, 'contentWindow', (get, self) => {
      const w = rApply(get, self, []);
      if (w) attempt(() => install(w));
      return w;
    });
    patchGetter(P, 'contentDocument', (get, self) => {
      const d = rApply(get, self, []);
      if (d && d.defaultView) attempt(() => install(d.defaultView));
      return d;
    });
  }

  patches.windowSize = patchWindowSize;
  patches.markers = removeMarkers;
  patches.frames = patchFrames;
})
