/*
 * Stealth part: WebGL's unmasked vendor and renderer, where the real ones name a software
 * renderer (a headless tell). Full level.
 * One function expression over the shared object S (see stealth_core.js).
 */
(function webgl(S) {
  'use strict';
  const {cfg, rApply, wmGet, wmHas, wmSet, patchMethod, patches} = S;

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

  patches.webgl = patchWebGL;
})
