// The encoder page of a recording: a blank page of ours (never a tab) that Pinchtab feeds a tab's
// screencast frames. WebM: Chromium's own MediaRecorder encodes a canvas we draw each frame on
// (VP8, timed by when frames arrive). GIF: a small encoder here (a fixed 252-colour palette and
// LZW), each frame shown until the next arrived. Pinchtab then reads the file out in chunks.
(() => {
  if (globalThis.__rec) return;
  let S = null;

  // 6 levels of red, 7 of green, 6 of blue: 252 colours, no per-frame palette to compute.
  const R = 6, G = 7, B = 6;
  function palette() {
    const p = new Uint8Array(256 * 3);
    let i = 0;
    for (let r = 0; r < R; r++) for (let g = 0; g < G; g++) for (let b = 0; b < B; b++) {
      p[i++] = Math.round(r * 255 / (R - 1)); p[i++] = Math.round(g * 255 / (G - 1)); p[i++] = Math.round(b * 255 / (B - 1));
    }
    return p;
  }

  function indices(rgba) {
    const n = rgba.length >> 2, out = new Uint8Array(n);
    for (let i = 0, j = 0; i < n; i++, j += 4) {
      const r = (rgba[j] * (R - 1) + 127) / 255 | 0, g = (rgba[j + 1] * (G - 1) + 127) / 255 | 0,
        b = (rgba[j + 2] * (B - 1) + 127) / 255 | 0;
      out[i] = (r * G + g) * B + b;
    }
    return out;
  }

  // GIF's LZW: 8-bit symbols, codes from 9 to 12 bits, least significant bit first, and a clear
  // code when the table is full.
  function lzw(pixels) {
    const CLEAR = 256, EOI = 257, bytes = [];
    let size = 9, next = EOI + 1, table = new Map(), acc = 0, bits = 0;
    const emit = (code) => {
      acc |= code << bits; bits += size;
      while (bits >= 8) { bytes.push(acc & 255); acc >>>= 8; bits -= 8; }
    };
    emit(CLEAR);
    let prefix = pixels[0];
    for (let i = 1; i < pixels.length; i++) {
      const k = pixels[i], key = prefix * 256 + k, code = table.get(key);
      if (code !== undefined) { prefix = code; continue; }
      emit(prefix);
      if (next === 4096) {
        emit(CLEAR);
        table = new Map(); next = EOI + 1; size = 9;
      } else {
        if (next >= (1 << size)) size++;
        table.set(key, next++);
      }
      prefix = k;
    }
    emit(prefix);
    emit(EOI);
    if (bits > 0) bytes.push(acc & 255);
    return bytes;
  }

  function gifFrame(w, h, pixels) {
    const data = lzw(pixels), out = [0x2c, 0, 0, 0, 0, w & 255, w >> 8, h & 255, h >> 8, 0, 8];
    for (let i = 0; i < data.length; i += 255) {
      const n = Math.min(255, data.length - i);
      out.push(n);
      for (let j = 0; j < n; j++) out.push(data[i + j]);
    }
    out.push(0);
    return Uint8Array.from(out);
  }

  function gifFile(w, h, frames, endMs) {
    const head = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, w & 255, w >> 8, h & 255, h >> 8, 0xf7, 0, 0];
    const loop = [0x21, 0xff, 0x0b, ...Array.from("NETSCAPE2.0", (c) => c.charCodeAt(0)), 3, 1, 0, 0, 0];
    const parts = [Uint8Array.from(head), palette(), Uint8Array.from(loop)];
    frames.forEach((f, i) => {
      const until = i + 1 < frames.length ? frames[i + 1].t : Math.max(endMs, f.t + 10);
      const cs = Math.max(2, Math.min(65535, Math.round((until - f.t) / 10)));  // hundredths of a second
      parts.push(Uint8Array.from([0x21, 0xf9, 4, 4, cs & 255, cs >> 8, 0, 0]), f.bytes);
    });
    parts.push(Uint8Array.from([0x3b]));
    return concat(parts);
  }

  function concat(parts) {
    let n = 0;
    for (const p of parts) n += p.length;
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of parts) { out.set(p, o); o += p.length; }
    return out;
  }

  globalThis.__rec = {
    start(format, width, height, bitsPerSecond) {
      const canvas = document.createElement("canvas");
      canvas.width = width; canvas.height = height;
      const ctx = canvas.getContext("2d", { willReadFrequently: format === "gif" });
      ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, width, height);
      S = { format, width, height, canvas, ctx, frames: [], chunks: [], out: null, startedAt: performance.now() };
      if (format === "webm") {
        S.stream = canvas.captureStream(0);
        S.track = S.stream.getVideoTracks()[0];
        S.recorder = new MediaRecorder(S.stream, { mimeType: "video/webm;codecs=vp8", videoBitsPerSecond: bitsPerSecond });
        S.recorder.ondataavailable = (e) => { if (e.data && e.data.size) S.chunks.push(e.data); };
        S.recorder.start(1000);
      }
      return true;
    },

    async frame(b64, mime) {
      const blob = await (await fetch(`data:${mime};base64,${b64}`)).blob();
      const img = await createImageBitmap(blob);
      S.ctx.drawImage(img, 0, 0, S.width, S.height);
      img.close();
      if (S.format === "webm") S.track.requestFrame();
      else {
        const px = S.ctx.getImageData(0, 0, S.width, S.height).data;
        S.frames.push({ t: performance.now() - S.startedAt, bytes: gifFrame(S.width, S.height, indices(px)) });
      }
      return true;
    },

    async finish() {
      if (S.format === "webm") {
        S.track.requestFrame();  // the last picture lasts until the end
        // The encoder works asynchronously and a stop drops what it has not encoded yet: give the
        // last frame a moment, or a recording stopped right after its start has no frame at all.
        const until = performance.now() + 2000;
        do {
          await new Promise((done) => setTimeout(done, 50));
          S.recorder.requestData();
          await new Promise((done) => setTimeout(done, 0));  // dataavailable is its own task
        } while (!S.chunks.length && performance.now() < until);
        await new Promise((done) => { S.recorder.onstop = done; S.recorder.stop(); });
        S.out = new Uint8Array(await new Blob(S.chunks, { type: "video/webm" }).arrayBuffer());
      } else {
        S.out = gifFile(S.width, S.height, S.frames, performance.now() - S.startedAt);
      }
      return S.out.length;
    },

    chunk(offset, length) {
      const part = S.out.subarray(offset, offset + length);
      let s = "";
      for (let i = 0; i < part.length; i += 0x8000) s += String.fromCharCode.apply(null, part.subarray(i, i + 0x8000));
      return btoa(s);
    },
  };
})();
true;
