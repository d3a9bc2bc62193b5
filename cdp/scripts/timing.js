// Navigation Timing, paint and Core Web Vitals of the current document, in milliseconds from the
// navigation's start. Evaluated (awaited) in our isolated world: the performance timeline is the
// document's, so it reads the same from there as from the page's world.
(() => new Promise((resolve) => {
  const round = (v) => (typeof v === "number" && isFinite(v) ? Math.round(v * 10) / 10 : 0);
  const nav = performance.getEntriesByType("navigation")[0];
  let fcp = performance.getEntriesByType("paint").find((p) => p.name === "first-contentful-paint");
  const resources = performance.getEntriesByType("resource");
  let lcp = 0;
  let cls = 0;
  const observers = [];
  const watch = (type, take) => {
    try {
      const o = new PerformanceObserver((list) => list.getEntries().forEach(take));
      o.observe({ type, buffered: true });
      observers.push(o);
    } catch (e) { /* this entry type is not supported here */ }
  };
  watch("largest-contentful-paint", (e) => { lcp = e.renderTime || e.loadTime || e.startTime; });
  watch("layout-shift", (e) => { if (!e.hadRecentInput) cls += e.value; });
  watch("paint", (e) => { if (e.name === "first-contentful-paint") fcp = e; });
  // Buffered entries arrive in a task of their own: give them one before answering; a visible page
  // just loaded paints within a frame or two, so its first paint is waited for (a second at most).
  const started = performance.now();
  const answer = () => {
    if (!fcp && document.visibilityState === "visible" && performance.now() - started < 1000) {
      setTimeout(answer, 30);
      return;
    }
    observers.forEach((o) => o.disconnect());
    const transfer = resources.reduce((n, r) => n + (r.transferSize || 0), nav ? nav.transferSize || 0 : 0);
    resolve({
      ttfbMs: round(nav && nav.responseStart),
      fcpMs: round(fcp && fcp.startTime),
      lcpMs: round(lcp),
      cls: Math.round(cls * 10000) / 10000,
      domContentLoadedMs: round(nav && nav.domContentLoadedEventEnd),
      loadMs: round(nav && nav.loadEventEnd),
      resourceCount: resources.length,
      transferSizeBytes: transfer,
    });
  };
  setTimeout(answer, 30);
}))()
