/*
 * Stealth patches for the page's main world, injected before any page script of every document
 * (Page.addScriptToEvaluateOnNewDocument). human/stealth.py appends the configuration: the level
 * (light, medium, full), a per-process token and noise seed, languages, screen size, brands and
 * WebGL strings.
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
 */
(function (cfg) {
  'use strict';
  if (!cfg || !cfg.level || cfg.level === 'off') return;
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

  function patchWebdriver(win) {
    if (!force.has('webdriver') && win.navigator.webdriver !== true) return;
    patchGetter(win.Navigator.prototype, 'webdriver', (get, self) => { rApply(get, self, []); return false; });
  }

  function patchChrome(win) {
    const need = force.has('chrome');
    let chrome = win.chrome;
    if (!chrome || typeof chrome !== 'object' || need) {
      chrome = {};
      defineProperty(win, 'chrome', {value: chrome, writable: true, enumerable: true, configurable: true});
    }
    const t = () => win.performance.timing;
    if (!chrome.app || need) {
      chrome.app = { // in Chrome's key order
        isInstalled: false,
        getDetails: fake('getDetails', () => null),
        getIsInstalled: fake('getIsInstalled', () => false),
        installState: fake('installState', () => undefined),
        runningState: fake('runningState', () => 'cannot_run'),
        InstallState: {DISABLED: 'disabled', INSTALLED: 'installed', NOT_INSTALLED: 'not_installed'},
        RunningState: {CANNOT_RUN: 'cannot_run', READY_TO_RUN: 'ready_to_run', RUNNING: 'running'},
      };
    }
    if (!chrome.csi || need) {
      chrome.csi = fakePlain(() => ({onloadT: t().domContentLoadedEventEnd, startE: t().navigationStart,
                                       pageT: win.performance.now(), tran: 15}));
    }
    if (!chrome.loadTimes || need) {
      chrome.loadTimes = fakePlain(() => {
        const s = (v) => v / 1000;
        const paint = win.performance.getEntriesByType('paint')[0];
        return {
          requestTime: s(t().navigationStart), startLoadTime: s(t().navigationStart),
          commitLoadTime: s(t().responseStart), finishDocumentLoadTime: s(t().domContentLoadedEventEnd),
          finishLoadTime: s(t().loadEventEnd), firstPaintAfterLoadTime: 0,
          firstPaintTime: paint ? s(t().navigationStart + paint.startTime) : 0,
          navigationType: 'Other', wasFetchedViaSpdy: false, wasNpnNegotiated: true,
          npnNegotiatedProtocol: 'http/1.1', wasAlternateProtocolAvailable: false, connectionInfo: 'http/1.1',
        };
      });
    }
    // Pages check chrome.runtime to tell a desktop Chrome from an automated one: provided on every
    // page (the original's light level does the same).
    if (!chrome.runtime || need) {
      const noId = (fn) => 'Error in invocation of runtime.' + fn + ': chrome.runtime.' + fn.split('(')[0] +
        '() called from a webpage must specify an Extension ID (string) for its first argument.';
      const event = () => ({addListener: fake('addListener', () => undefined),
                            removeListener: fake('removeListener', () => undefined),
                            hasListener: fake('hasListener', () => false)});
      chrome.runtime = {
        OnInstalledReason: {CHROME_UPDATE: 'chrome_update', INSTALL: 'install',
                            SHARED_MODULE_UPDATE: 'shared_module_update', UPDATE: 'update'},
        OnRestartRequiredReason: {APP_UPDATE: 'app_update', OS_UPDATE: 'os_update', PERIODIC: 'periodic'},
        PlatformArch: {ARM: 'arm', ARM64: 'arm64', MIPS: 'mips', MIPS64: 'mips64', X86_32: 'x86-32', X86_64: 'x86-64'},
        PlatformNaclArch: {ARM: 'arm', MIPS: 'mips', MIPS64: 'mips64', X86_32: 'x86-32', X86_64: 'x86-64'},
        PlatformOs: {ANDROID: 'android', CROS: 'cros', FUCHSIA: 'fuchsia', LINUX: 'linux', MAC: 'mac',
                     OPENBSD: 'openbsd', WIN: 'win'},
        RequestUpdateCheckStatus: {NO_UPDATE: 'no_update', THROTTLED: 'throttled', UPDATE_AVAILABLE: 'update_available'},
        id: undefined,
        connect: fake('connect', function (extensionId) {
          if (typeof extensionId !== 'string') {
            throw new win.TypeError(noId('connect(optional string extensionId, optional object connectInfo)'));
          }
          return {name: '', sender: undefined, onDisconnect: event(), onMessage: event(),
                  postMessage: fake('postMessage', () => undefined), disconnect: fake('disconnect', () => undefined)};
        }),
        sendMessage: fake('sendMessage', function (extensionId) {
          if (typeof extensionId !== 'string') {
            throw new win.TypeError(noId('sendMessage(optional string extensionId, any message, optional object options, optional function callback)'));
          }
          return undefined;
        }),
      };
    }
  }

  // The PDF viewer entries every desktop Chrome has listed since version 94.
  const PLUGIN_NAMES = ['PDF Viewer', 'Chrome PDF Viewer', 'Chromium PDF Viewer', 'Microsoft Edge PDF Viewer',
                        'WebKit built-in PDF'];
  const MIME_TYPES = [['application/pdf', 'pdf'], ['text/pdf', 'pdf']];

  function patchPlugins(win) {
    const nav = win.navigator;
    if (!force.has('plugins') && nav.plugins && nav.plugins.length > 0 && nav.mimeTypes.length > 0) return;
    const {Plugin, PluginArray, MimeType, MimeTypeArray} = win;
    if (!Plugin || !PluginArray || !MimeType || !MimeTypeArray) return;
    // Objects made from the real prototypes; the prototypes' getters learn to answer for them.
    const data = new WeakMap();
    const own = (obj) => rApply(wmGet, data, [obj]);
    const list = (proto, items, nameOf) => {
      const obj = Object.create(proto);
      items.forEach((item, i) => defineProperty(obj, i, {value: item, enumerable: true, configurable: true}));
      items.forEach((item) => {
        const n = nameOf(item);
        if (!(n in obj)) defineProperty(obj, n, {value: item, enumerable: false, configurable: true});
      });
      return obj;
    };
    const plugins = [];
    const mimes = MIME_TYPES.map(([type, suffixes]) => {
      const m = Object.create(MimeType.prototype);
      rApply(wmSet, data, [m, {type, suffixes, description: 'Portable Document Format', enabledPlugin: null}]);
      return m;
    });
    for (const name of PLUGIN_NAMES) {
      const p = list(Plugin.prototype, mimes, (m) => own(m).type);
      rApply(wmSet, data, [p, {name, filename: 'internal-pdf-viewer', description: 'Portable Document Format',
                              items: mimes}]);
      plugins.push(p);
    }
    for (const m of mimes) own(m).enabledPlugin = plugins[0];
    const pluginArray = list(PluginArray.prototype, plugins, (p) => own(p).name);
    rApply(wmSet, data, [pluginArray, {items: plugins}]);
    const mimeArray = list(MimeTypeArray.prototype, mimes, (m) => own(m).type);
    rApply(wmSet, data, [mimeArray, {items: mimes}]);

    const field = (proto, prop) => patchGetter(proto, prop, (get, self) => {
      const d = own(self);
      return d ? d[prop] : rApply(get, self, []);
    });
    const sized = (proto, key) => {
      patchGetter(proto, 'length', (get, self) => { const d = own(self); return d ? d.items.length : rApply(get, self, []); });
      patchMethod(proto, 'item', (native, self, args) => {
        const d = own(self);
        if (!d) return rApply(native, self, args);
        return d.items[args[0] >>> 0] || null;
      });
      patchMethod(proto, 'namedItem', (native, self, args) => {
        const d = own(self);
        if (!d) return rApply(native, self, args);
        for (let i = 0; i < d.items.length; i++) if (own(d.items[i])[key] === String(args[0])) return d.items[i];
        return null;
      });
    };
    sized(PluginArray.prototype, 'name');
    sized(MimeTypeArray.prototype, 'type');
    sized(Plugin.prototype, 'type');
    for (const prop of ['name', 'filename', 'description']) field(Plugin.prototype, prop);
    for (const prop of ['type', 'suffixes', 'description', 'enabledPlugin']) field(MimeType.prototype, prop);
    patchMethod(PluginArray.prototype, 'refresh', (native, self, args) => (own(self) ? undefined : rApply(native, self, args)));
    patchGetter(win.Navigator.prototype, 'plugins', (get, self) => { rApply(get, self, []); return pluginArray; });
    patchGetter(win.Navigator.prototype, 'mimeTypes', (get, self) => { rApply(get, self, []); return mimeArray; });
  }

  function patchLanguages(win) {
    const nav = win.navigator;
    if (!force.has('languages') && nav.languages && nav.languages.length > 0 && nav.language) return;
    const langs = freeze((cfg.languages || ['en-US', 'en']).slice());
    patchGetter(win.Navigator.prototype, 'languages', (get, self) => { rApply(get, self, []); return langs; });
    patchGetter(win.Navigator.prototype, 'language', (get, self) => { rApply(get, self, []); return langs[0]; });
  }

  // permissions.query({name: 'notifications'}) must agree with Notification.permission (headless
  // browsers have said "denied" to one and "prompt" to the other). A disagreeing answer gets the
  // state Notification implies, on the real PermissionStatus object.
  function patchPermissions(win) {
    if (!win.Permissions || !win.Notification || !win.PermissionStatus) return;
    const fixed = new WeakMap();
    let stateGetterPatched = false;
    const WANT = {default: 'prompt', granted: 'granted', denied: 'denied'};
    patchMethod(win.Permissions.prototype, 'query', (native, self, args) => {
      const res = rApply(native, self, args);
      const desc = args[0];
      if (!desc || typeof desc !== 'object' || desc.name !== 'notifications') return settled(res);
      return rApply(promiseThen, res, [(status) => {
        const want = WANT[win.Notification.permission];
        if (!want || status.state === want) return status;
        if (!stateGetterPatched) {
          stateGetterPatched = patchGetter(win.PermissionStatus.prototype, 'state', (get, s) => {
            const v = rApply(get, s, []);
            return rApply(wmHas, fixed, [s]) ? rApply(wmGet, fixed, [s]) : v;
          });
        }
        rApply(wmSet, fixed, [status, want]);
        return status;
      }, rethrow]);
    });
  }

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

  // navigator.connection: desktop Chrome reports downlinkMax (and type) with the launch flag we
  // pass; a browser started without it (attached) gets the same answers here. A zero rtt is a
  // headless tell.
  function patchConnection(win) {
    const NI = win.NetworkInformation && win.NetworkInformation.prototype;
    const conn = win.navigator.connection;
    if (!NI || !conn) return;
    if (!('downlinkMax' in conn) || force.has('connection')) {
      defineProperty(NI, 'downlinkMax', {get: fakeGetter('downlinkMax', () => Infinity), enumerable: true,
                                         configurable: true});
    }
    if (!('type' in conn) || force.has('connection')) {
      defineProperty(NI, 'type', {get: fakeGetter('type', () => 'ethernet'), enumerable: true, configurable: true});
    }
    if (conn.rtt === 0 || force.has('connection')) {
      patchGetter(NI, 'rtt', (get, self) => rApply(get, self, []) || 50);
    }
  }

  // navigator.getBattery: a desktop on mains power (what Chrome itself answers without a battery),
  // where the browser offers none (pages that are not secure contexts, attached browsers).
  function patchBattery(win) {
    const N = win.Navigator.prototype;
    if (typeof win.navigator.getBattery === 'function' && !force.has('battery')) return;
    const proto = Object.create(win.EventTarget.prototype);
    const values = {charging: true, chargingTime: 0, dischargingTime: Infinity, level: 1};
    for (const key of Object.keys(values)) {
      defineProperty(proto, key, {get: fakeGetter(key, () => values[key]), enumerable: true, configurable: true});
    }
    for (const key of ['onchargingchange', 'onchargingtimechange', 'ondischargingtimechange', 'onlevelchange']) {
      defineProperty(proto, key, {value: null, writable: true, enumerable: true, configurable: true});
    }
    defineProperty(proto, Symbol.toStringTag, {value: 'BatteryManager', configurable: true});
    const manager = Object.create(proto);
    defineProperty(N, 'getBattery', {value: fake('getBattery', () => win.Promise.resolve(manager)), writable: true,
                                     enumerable: true, configurable: true});
  }

  // --- medium --------------------------------------------------------------------------------
  function patchUserAgentData(win) {
    const nav = win.navigator;
    // Chrome only exposes it to secure contexts; at full, plain-http pages get it too, as detection
    // scripts (and challenge pages) served over http look for it and take its absence as a bot.
    if (!win.isSecureContext && rank < 3) return;
    // As Chrome's: the lists frozen, their entries not.
    const brands = freeze((cfg.brands || []).map((b) => ({brand: b.brand, version: b.version})));
    const full = freeze((cfg.fullVersionList || []).map((b) => ({brand: b.brand, version: b.version})));
    const uad = nav.userAgentData;
    const headless = (list) => {
      for (let i = 0; i < (list || []).length; i++) if (/headless/i.test(list[i].brand)) return true;
      return false;
    };
    if (uad && !headless(uad.brands) && !force.has('userAgentData')) return;
    const low = () => ({brands: brands, mobile: false, platform: cfg.platform || 'Linux'});
    const high = {architecture: cfg.architecture || 'x86', bitness: cfg.bitness || '64', model: '',
                  platformVersion: cfg.platformVersion || '', uaFullVersion: cfg.uaFullVersion || '',
                  fullVersionList: full, wow64: false, formFactors: ['Desktop']};
    if (uad && win.NavigatorUAData) {
      const P = win.NavigatorUAData.prototype;
      patchGetter(P, 'brands', (get, self) => { rApply(get, self, []); return brands; });
      patchMethod(P, 'toJSON', (native, self, args) => { rApply(native, self, args); return low(); });
      patchMethod(P, 'getHighEntropyValues', (native, self, args) => rApply(promiseThen, rApply(native, self, args), [(v) => {
        if (v && typeof v === 'object') {
          if ('brands' in v) v.brands = brands;
          if ('fullVersionList' in v) v.fullVersionList = full;
        }
        return v;
      }, rethrow]));
      return;
    }
    // No NavigatorUAData at all: a plain object with the same shape.
    const data = {
      brands, mobile: false, platform: cfg.platform || 'Linux',
      getHighEntropyValues: fake('getHighEntropyValues', (hints) => {
        const out = low();
        for (const h of hints || []) if (h in high) out[h] = high[h];
        return win.Promise.resolve(out);
      }),
      toJSON: fake('toJSON', low),
    };
    defineProperty(win.Navigator.prototype, 'userAgentData',
                   {get: fakeGetter('userAgentData', () => data), enumerable: true, configurable: true});
  }

  function patchHardware(win) {
    const N = win.Navigator.prototype;
    if (cfg.hardwareConcurrency) {
      patchGetter(N, 'hardwareConcurrency', (get, self) => { rApply(get, self, []); return cfg.hardwareConcurrency; });
    }
    if (cfg.deviceMemory && 'deviceMemory' in N) {
      patchGetter(N, 'deviceMemory', (get, self) => { rApply(get, self, []); return cfg.deviceMemory; });
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

  // --- full ----------------------------------------------------------------------------------
  const SOFTWARE_GL = /swiftshader|llvmpipe|softpipe|software/i;

  function patchWebGL(win) {
    const software = new WeakMap(); // context -> whether its real renderer is a software one
    for (const C of [win.WebGLRenderingContext, win.WebGL2RenderingContext]) {
      if (!C) continue;
      patchMethod(C.prototype, 'getParameter', (native, self, args) => {
        const v = rApply(native, self, args);
        const p = args[0];
        if (p !== 0x9245 && p !== 0x9246) return v; // UNMASKED_VENDOR_WEBGL, UNMASKED_RENDERER_WEBGL
        if (!rApply(wmHas, software, [self])) {
          rApply(wmSet, software, [self, SOFTWARE_GL.test(String(rApply(native, self, [0x9246])))]);
        }
        if (!rApply(wmGet, software, [self]) || typeof v !== 'string') return v;
        return p === 0x9245 ? cfg.webglVendor : cfg.webglRenderer;
      });
    }
  }

  // Canvas and audio fingerprints: a small noise, the same for every read in this browser session
  // (a value that changes between two reads is a tell of its own) and different in the next one.
  const SEED = (cfg.seed >>> 0) || 42;
  function mix(i) {
    let h = (SEED ^ Math.imul(i, 0x9E3779B1)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85EBCA6B);
    h = Math.imul(h ^ (h >>> 13), 0xC2B2AE35);
    return (h ^ (h >>> 16)) >>> 0;
  }

  // One pixel in sixteen (by its place on the canvas) gets the low bit of one colour flipped;
  // transparent pixels are left alone.
  function noisePixels(data, x0, y0, width, canvasWidth) {
    for (let p = 0, n = data.length; p < n; p += 4) {
      if (data[p + 3] === 0) continue;
      const k = p >>> 2;
      const h = mix((y0 + ((k / width) | 0)) * canvasWidth + x0 + (k % width));
      if ((h & 15) !== 0) continue;
      const c = p + ((h >>> 4) % 3);
      data[c] = data[c] ^ 1;
    }
  }

  function patchCanvas(win) {
    const C = win.HTMLCanvasElement && win.HTMLCanvasElement.prototype;
    const C2D = win.CanvasRenderingContext2D && win.CanvasRenderingContext2D.prototype;
    if (!C || !C2D) return;
    const kinds = new WeakMap(); // canvas -> its context type: only 2d drawings are noised
    const nativeGetImageData = C2D.getImageData;
    const nativePut = C2D.putImageData;
    const nativeDraw = C2D.drawImage;
    const nativeGetContext = C.getContext;
    const createElement = win.Document.prototype.createElement;
    patchMethod(C, 'getContext', (native, self, args) => {
      const ctx = rApply(native, self, args);
      if (ctx && !rApply(wmHas, kinds, [self])) rApply(wmSet, kinds, [self, String(args[0])]);
      return ctx;
    });
    patchMethod(C2D, 'getImageData', (native, self, args) => {
      const img = rApply(native, self, args);
      const canvas = self.canvas;
      if (img && canvas) noisePixels(img.data, args[0] | 0, args[1] | 0, img.width, canvas.width);
      return img;
    });
    // The export of a noised copy, so the canvas itself is never changed.
    const noisedCopy = (canvas) => {
      if (rApply(wmGet, kinds, [canvas]) !== '2d' || !canvas.width || !canvas.height) return null;
      const copy = rApply(createElement, win.document, ['canvas']);
      copy.width = canvas.width;
      copy.height = canvas.height;
      const ctx = rApply(nativeGetContext, copy, ['2d']);
      rApply(nativeDraw, ctx, [canvas, 0, 0]);
      const img = rApply(nativeGetImageData, ctx, [0, 0, copy.width, copy.height]);
      noisePixels(img.data, 0, 0, copy.width, copy.width);
      rApply(nativePut, ctx, [img, 0, 0]);
      return copy;
    };
    for (const name of ['toDataURL', 'toBlob']) {
      patchMethod(C, name, (native, self, args) => {
        let copy = null;
        try { copy = noisedCopy(self); } catch (_) { /* a tainted canvas: the native call throws as it should */ }
        return rApply(native, copy || self, args);
      });
    }
  }

  function patchAudio(win) {
    const AB = win.AudioBuffer && win.AudioBuffer.prototype;
    if (!AB) return;
    const noised = new WeakSet();
    const wsHas = WeakSet.prototype.has;
    const wsAdd = WeakSet.prototype.add;
    patchMethod(AB, 'getChannelData', (native, self, args) => {
      const data = rApply(native, self, args);
      if (data && !rApply(wsHas, noised, [data])) {
        rApply(wsAdd, noised, [data]);
        for (let i = 0, n = data.length; i < n; i += 97) {
          // Samples are float32: a nudge under half a unit in the last place would round away and
          // leave the fingerprint native for some seeds, so each one moves by at least one unit.
          const before = data[i];
          const nudge = ((mix(i) / 4294967296) - 0.5) * 2e-7;
          data[i] = before + nudge;
          if (data[i] === before) data[i] = before + (nudge < 0 ? -1 : 1) * Math.max(Math.abs(before) * 1.2e-7, 1e-30);
        }
      }
      return data;
    });
    // copyFromChannel reads the same samples: noised first, through getChannelData.
    const noisedGet = AB.getChannelData;
    patchMethod(AB, 'copyFromChannel', (native, self, args) => {
      rApply(noisedGet, self, [args[1] | 0]);
      return rApply(native, self, args);
    });
    const AN = win.AnalyserNode && win.AnalyserNode.prototype;
    patchMethod(AN, 'getFloatFrequencyData', (native, self, args) => {
      const out = rApply(native, self, args);
      const arr = args[0];
      if (arr && arr.length) for (let i = 0; i < arr.length; i += 7) arr[i] += ((mix(i) / 4294967296) - 0.5) * 1e-4;
      return out;
    });
  }

  // --- per window ----------------------------------------------------------------------------
  function install(win) {
    let toString;
    try { toString = win.Function.prototype.toString; } catch (_) { return; } // cross-origin
    if (known(toString)) return; // this realm is patched already (by us or by its own injection)
    patchToString(win);
    attempt(() => patchWebdriver(win));
    attempt(() => patchChrome(win));
    attempt(() => patchPlugins(win));
    attempt(() => patchLanguages(win));
    attempt(() => patchPermissions(win));
    attempt(() => patchWindowSize(win));
    attempt(() => removeMarkers(win));
    attempt(() => patchConnection(win));
    attempt(() => patchBattery(win));
    if (rank >= 2) {
      attempt(() => patchUserAgentData(win));
      attempt(() => patchHardware(win));
      attempt(() => patchFrames(win));
    }
    if (rank >= 3) {
      attempt(() => patchWebGL(win));
      attempt(() => patchCanvas(win));
      attempt(() => patchAudio(win));
    }
  }

  attempt(() => install(window));
})(/*@config*/ null);
