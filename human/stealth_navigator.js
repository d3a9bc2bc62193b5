/*
 * Stealth part: what navigator tells a page (webdriver, plugins and mime types, languages,
 * permissions, connection, battery at light; userAgentData and the hardware figures at medium).
 * One function expression over the shared object S (see stealth_core.js).
 */
(function navigatorApis(S) {
  'use strict';
  const {cfg, rank, force, rApply, wmGet, wmHas, wmSet, defineProperty, freeze, promiseThen, patchGetter,
         patchMethod, fake, fakeGetter, rethrow, settled, patches} = S;

  // --- light ---------------------------------------------------------------------------------
  function patchWebdriver(win) {
    if (!force.has('webdriver') && win.navigator.webdriver !== true) return;
    patchGetter(win.Navigator.prototype, 'webdriver', (get, self) => { rApply(get, self, []); return false; });
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

  patches.webdriver = patchWebdriver;
  patches.plugins = patchPlugins;
  patches.languages = patchLanguages;
  patches.permissions = patchPermissions;
  patches.connection = patchConnection;
  patches.battery = patchBattery;
  patches.userAgentData = patchUserAgentData;
  patches.hardware = patchHardware;
})
