/*
 * Stealth patches for the page's main world, injected before any page script of every document
 * (Page.addScriptToEvaluateOnNewDocument). human/stealth.py composes the script: this part and the
 * others (stealth_*.js), each one function expression called with a private object S that holds
 * the configuration (S.cfg: the level (light, medium, full), a per-process token and noise seed,
 * languages, screen size, brands and WebGL strings) and the helpers the parts share. This part
 * comes first: it adds the helpers and install(win); the others add their patches to S.patches.
 *
 * Principles:
 * - Patch what a headless browser gets wrong, not what it already gets right: most light patches
 *   apply only when the signal is actually off (cfg.force lists patches to apply regardless,
 *   for tests of the fallbacks).
 * - Patch on prototypes, never on instances: own properties on navigator are a tell.
 * - Every function we install prints as native code, through a patched Function.prototype.toString
 *   backed by a registry shared by all same-origin frames (found through a Symbol.for key that
 *   embeds the per-process token), so even another frame's toString vouches for our functions.
 * - Wrap natives with Proxies that call the native first: a wrong receiver still throws the
 *   native error, and name/length stay the native ones.
 * - Nothing may throw into the page: each patch is applied in its own try/catch.
 * - No globals: S lives in the composed script's closure; what runs later (wrappers, install for
 *   a frame) reads only values taken from S while the script runs, before any page script.
 */
(function core(S) {
  'use strict';
  const cfg = S.cfg;
  const RANK = {light: 1, medium: 2, full: 3};
  const rank = RANK[cfg.level] || 1;
  const force = new Set(cfg.force || []);
  const KEY = Symbol.for('__' + cfg.token);
  const MARK = cfg.token; // our script's sourceURL at full: its frames in error stacks carry it
  const SANITIZE = rank >= 3;

  // Intrinsics captured now: page scripts may later replace them to watch what we call.
  const rApply = Reflect.apply;
  const wmGet = WeakMap.prototype.get;
  const wmHas = WeakMap.prototype.has;
  const wmSet = WeakMap.prototype.set;
  const defineProperty = Object.defineProperty;
  const getDescriptor = Object.getOwnPropertyDescriptor;
  const freeze = Object.freeze;
  const promiseThen = Promise.prototype.then;

  // The registry: function we made -> what native code would print for it.
  function findRegistry() {
    const candidates = [window];
    try { if (window.parent !== window) candidates.push(window.parent); } catch (_) { /* cross-origin */ }
    for (const w of candidates) {
      try {
        const r = rApply(w.Function.prototype.toString, KEY, []);
        if (r && typeof r === 'object') return r; // an earlier instance in this realm or the parent's
      } catch (_) { /* an unpatched toString throws on a Symbol receiver */ }
    }
    return null;
  }
  const registry = findRegistry() || new WeakMap();
  const known = (fn) => rApply(wmHas, registry, [fn]);
  const vouch = (fn, text) => { rApply(wmSet, registry, [fn, text]); return fn; };
  const nativeText = (name) => 'function ' + name + '() { [native code] }';

  // At full, errors that pass through our code lose the stack lines of our frames.
  function clean(err) {
    if (SANITIZE && err && typeof err === 'object') {
      try {
        const stack = err.stack;
        if (typeof stack === 'string' && stack.indexOf(MARK) !== -1) {
          const lines = stack.split('\n');
          const kept = [];
          for (let i = 0; i < lines.length; i++) if (lines[i].indexOf(MARK) === -1) kept.push(lines[i]);
          err.stack = kept.join('\n');
        }
      } catch (_) { /* a frozen or exotic error: leave it */ }
    }
    return err;
  }

  // A Proxy of a native function whose calls go to impl(native, receiver, args).
  function wrap(native, impl) {
    const p = new Proxy(native, {
      apply(target, self, args) {
        try { return impl(target, self, args); } catch (e) { throw clean(e); }
      },
    });
    return vouch(p, nativeText(native.name));
  }

  function patchGetter(obj, prop, impl) {
    const d = obj && getDescriptor(obj, prop);
    if (!d || typeof d.get !== 'function' || !d.configurable) return false;
    defineProperty(obj, prop, {get: wrap(d.get, (get, self) => impl(get, self)), set: d.set,
                               enumerable: d.enumerable, configurable: true});
    return true;
  }

  function patchMethod(obj, prop, impl) {
    const d = obj && getDescriptor(obj, prop);
    if (!d || typeof d.value !== 'function' || !d.configurable) return false;
    defineProperty(obj, prop, {value: wrap(d.value, impl), writable: d.writable, enumerable: d.enumerable,
                               configurable: true});
    return true;
  }

  // A new function (no native to wrap) that prints as native, has no prototype and cannot be
  // constructed, as built-in methods do.
  function fake(name, impl) {
    const holder = {[name](...args) {
      try { return rApply(impl, this, args); } catch (e) { throw clean(e); }
    }};
    return vouch(holder[name], nativeText(name));
  }

  // chrome.csi and chrome.loadTimes are anonymous plain functions (with a prototype) in Chrome.
  function fakePlain(impl) {
    const fn = (() => function () {
      try { return rApply(impl, this, arguments); } catch (e) { throw clean(e); }
    })();
    return vouch(fn, nativeText(''));
  }

  function fakeGetter(name, impl) {
    const get = getDescriptor({get [name]() { return impl(this); }}, name).get;
    return vouch(get, 'function get ' + name + '() { [native code] }');
  }

  // A rejection created while our wrapper was on the stack carries our frame: cleaned at full.
  const rethrow = (e) => { throw clean(e); };
  const settled = (promise) => (SANITIZE ? rApply(promiseThen, promise, [undefined, rethrow]) : promise);

  const attempt = (fn) => { try { fn(); } catch (_) { /* one failed patch must not stop the others */ } };

  // --- light ---------------------------------------------------------------------------------
  function patchToString(win) {
    const FP = win.Function.prototype;
    const d = getDescriptor(FP, 'toString');
    const p = new Proxy(d.value, {
      apply(target, self, args) {
        if (self === KEY) return registry;
        const text = rApply(wmGet, registry, [self]);
        if (text !== undefined) return text;
        try { return rApply(target, self, args); } catch (e) { throw clean(e); }
      },
    });
    vouch(p, nativeText('toString'));
    defineProperty(FP, 'toString', {value: p, writable: d.writable, enumerable: d.enumerable, configurable: true});
  }

  // The patches the other parts add, by name, in the order each level applies them.
  const patches = {__proto__: null};
  const ORDER = [
    ['webdriver', 'chrome', 'plugins', 'languages', 'permissions', 'windowSize', 'markers', 'connection', 'battery'],
    ['userAgentData', 'hardware', 'frames'], // medium
    ['webgl', 'canvas', 'audio'], // full
  ];

  // --- per window ----------------------------------------------------------------------------
  function install(win) {
    let toString;
    try { toString = win.Function.prototype.toString; } catch (_) { return; } // cross-origin
    if (known(toString)) return; // this realm is patched already (by us or by its own injection)
    patchToString(win);
    for (let level = 0; level < rank && level < ORDER.length; level++) {
      const names = ORDER[level];
      for (let i = 0; i < names.length; i++) {
        const patch = patches[names[i]];
        if (patch) attempt(() => patch(win));
      }
    }
  }

  Object.assign(S, {rank, force, rApply, wmGet, wmHas, wmSet, defineProperty, freeze, promiseThen, patchGetter,
                    patchMethod, fake, fakePlain, fakeGetter, rethrow, settled, attempt, patches, install});
})
