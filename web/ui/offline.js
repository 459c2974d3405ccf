// The offline copy (sw.js): registered once the engine is live, so it never competes with the
// engine's own downloads. The page says "works offline" only when this very build is stored: its
// site files (the service worker's offline copy, which it asks for by build) and its runtime (all
// of this build's files in the worker's cache). After a rebuild the old copy stays in charge until
// the new one is complete; an update the network interrupted is no claim.
//
// Test hook: <html data-offline="incomplete" data-offline-note="…"> when the claim is not made
// (the caller's onReady sets data-offline="ready" when it is).

import { BUILD } from '../engine/build.js';

/** The service worker's answer: is this build its offline copy? (It finishes a precache first.) */
function askOfflineCopy(worker) {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = (e) => { ch.port1.close(); resolve(e.data || { ok: false, reason: 'no answer' }); };
    worker.postMessage({ type: 'cbx:offline?', build: BUILD }, [ch.port2]);
  });
}

export function keepOffline(runtimeCached, onReady) {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  const incomplete = (reason) => Object.assign(document.documentElement.dataset, { offline: 'incomplete', offlineNote: reason });
  navigator.serviceWorker.register('./sw.js').then(() => navigator.serviceWorker.ready).then(
    (reg) => Promise.all([askOfflineCopy(reg.active), runtimeCached]),
  ).then(([site, stored]) => {
    if (site.ok && stored > 0) onReady();
    else incomplete(site.ok ? 'the runtime is not stored in this browser' : site.reason);
  }, () => { /* no offline copy (refused here, say in a cross-site frame): the page works as before */ });
}
