// The offline copy (sw.js): registered once the engine is live, so it never competes with the
// engine's own downloads; the page says "works offline" when both the site (the service worker's
// cache) and the runtime (the worker's cache) are stored.

export function keepOffline(runtimeCached, onReady) {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register('./sw.js').then(
    () => Promise.all([navigator.serviceWorker.ready, runtimeCached]),
  ).then(([, stored]) => { if (stored > 0) onReady(); }, () => { /* no offline copy: the page works as before */ });
}
