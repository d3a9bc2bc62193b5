/*
 * Stealth part: a per-session noise on canvas and audio fingerprints. Full level.
 * One function expression over the shared object S (see stealth_core.js).
 */
(function noise(S) {
  'use strict';
  const {cfg, rApply, wmGet, wmHas, wmSet, patchMethod, patches} = S;

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
          // Each nudge moves the sample away from zero: nudges of both signs could cancel in a
          // fingerprint's sum of magnitudes and leave it native for some seeds. Samples are float32:
          // a nudge under half a unit in the last place would round away, so each moves by at least one.
          const before = data[i];
          const away = before < 0 ? -1 : 1;
          data[i] = before + away * (mix(i) / 4294967296) * 1e-7;
          if (data[i] === before) data[i] = before + away * Math.max(Math.abs(before) * 1.2e-7, 1e-30);
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

  patches.canvas = patchCanvas;
  patches.audio = patchAudio;
})
