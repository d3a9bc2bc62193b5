/*
 * Stealth part: window.chrome as desktop Chrome has it (chrome.app, chrome.csi, chrome.loadTimes,
 * chrome.runtime), which headless Chrome lacks and detection scripts look for. Light level.
 * One function expression over the shared object S (see stealth_core.js).
 */
(function chromeApis(S) {
  'use strict';
  const {force, defineProperty, fake, fakePlain, patches} = S;

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

  patches.chrome = patchChrome;
})
