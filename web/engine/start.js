// Starts the engine before anything else of the page loads (index.html loads only this module;
// its graph is three small files), then loads the page: the engine's requests go out first, and
// Python boots while the page's own modules arrive. The page picks the client up with earlyEngine().
//
// A page opened on the default view (no query) also asks now for its main run's build-time answer:
// index.html keeps that preload inert in <template id="default-view-preloads"> (written by
// tools/site.py), because any query may run another scenario (an embed, a preset, a field), and
// there the answer would be downloaded for nothing (with the browser's "preloaded but not used"
// warning). The page's own fetch of it (engine/source.js) is then served by the preload.

import { startEngine } from './client.js';
import { BUILD } from './build.js';

// One engine per build: an old build's shared worker (another tab) is not reused.
let client = globalThis.__cbxEngine ?? null;
if (!client && typeof document !== 'undefined') {
  client = globalThis.__cbxEngine = startEngine({ name: `cbx-engine-${BUILD}` });
  if (!location.search) preloadDefaultView();
  import('../main.js');
}

function preloadDefaultView() {
  const preloads = document.getElementById('default-view-preloads');
  if (preloads) document.head.append(document.importNode(preloads.content, true));
}

export function earlyEngine() {
  client ??= globalThis.__cbxEngine ??= startEngine({ name: `cbx-engine-${BUILD}` });
  return client;
}
