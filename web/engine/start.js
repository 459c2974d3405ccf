// Starts the engine before anything else of the page loads (index.html loads only this module;
// its graph is three small files), then loads the page: the engine's requests go out first, and
// Python boots while the page's own modules arrive. The page picks the client up with earlyEngine().

import { startEngine } from './client.js';
import { BUILD } from './build.js';

// One engine per build: an old build's shared worker (another tab) is not reused.
let client = globalThis.__cbxEngine ?? null;
if (!client && typeof document !== 'undefined') {
  client = globalThis.__cbxEngine = startEngine({ name: `cbx-engine-${BUILD}` });
  import('../main.js');
}

export function earlyEngine() {
  client ??= globalThis.__cbxEngine ??= startEngine({ name: `cbx-engine-${BUILD}` });
  return client;
}
