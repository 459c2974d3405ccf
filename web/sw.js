// The offline copy: after one visit the explorer opens with no network at all (a lecture hall).
//
// Install precaches the site's own files, as manifest.json lists them for this build, each checked
// against its sha256, in a cache named after the build (cbx-site-<build>). The big runtime files
// are not copied here: the engine's worker keeps them, checked, in its own cache (engine/fetch.js).
// Requests are answered network first, so an online visit always gets the deployed site; when the
// network fails, the offline copy answers. (Not cached: pyodide/*.whl, so a calibration fit needs
// the network once.) Every online navigation also reads manifest.json: a new build is precached in
// the background and replaces the old one (the update when back online).
//
// The offline copy is the build whose manifest sits in the cache cbx-offline: written only once
// every site file of that build is stored, so an update the network interrupted leaves the old
// copy in charge (and its partial cache is finished by the next online visit). The engine's worker
// reads the same entry to keep that build's runtime files (engine/boot.js, OFFLINE_COPY).
//
// A page asks, with a MessagePort, whether its own build is the offline copy:
//   page -> {type: "cbx:offline?", build}   sw -> {ok: true} | {ok: false, reason}
// answered once any precache of that build has finished (or failed).

const PREFIX = 'cbx-site-';
const OFFLINE_COPY = 'cbx-offline';
const SITE = new URL('./', self.location).href;
const OFFLINE_KEY = new URL('manifest.json', SITE).href;

async function sha256hex(buf) {
  const d = await crypto.subtle.digest('SHA-256', buf);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Files only the worker's runtime cache needs (engine/boot.js downloads and checks them; Pyodide
 *  gets them from there). Its two scripts are imported by URL, so those are cached here too. */
function runtimeFiles(m) {
  const out = new Set([m.engine.wheel]);
  if (m.engine.memory_snapshot) out.add(m.engine.memory_snapshot.file);
  const dir = m.pyodide.indexURL.replace(/^\.\//, '');
  for (const [f, v] of Object.entries(m.pyodide.runtime)) {
    if (/\.m?js$/.test(f)) continue;
    out.add(dir + (v.gzip ? v.gzip.file : f));
  }
  return out;
}

async function readManifest() {
  const res = await fetch(new URL('manifest.json', SITE), { cache: 'no-cache' });
  if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
  return { manifest: await res.clone().json(), response: res };
}

let current;   // the offline copy's build (null: none), once read
async function currentBuild() {
  if (current === undefined) {
    const hit = await caches.match(OFFLINE_KEY, { cacheName: OFFLINE_COPY });
    current = hit ? (await hit.json()).build ?? null : null;
  }
  return current;
}

/** Cache every site file of manifest m (checked against its sha256); only then make it the
 *  offline copy and drop older builds. */
async function precache(m, manifestResponse) {
  const name = PREFIX + m.build;
  const skip = runtimeFiles(m);
  const cache = await caches.open(name);
  // numpy and its kin (pyodide/*.whl) load only for a calibration fit: not worth 5 MB per visitor
  const files = Object.entries(m.files).filter(([f]) => !skip.has(f) && !f.endsWith('.whl'));
  for (const [f, { sha256 }] of files) {
    const url = new URL(f, SITE).href;
    if (await cache.match(url)) continue;   // stored by an earlier, interrupted precache: checked then
    const res = await fetch(url, { cache: 'no-cache' });
    if (!res.ok) throw new Error(`${f}: HTTP ${res.status}`);
    const body = await res.arrayBuffer();
    if ((await sha256hex(body)) !== sha256) throw new Error(`${f}: does not match manifest.json (a deploy in progress?)`);
    await cache.put(url, new Response(body, { headers: res.headers }));
  }
  await cache.put(SITE, (await cache.match(new URL('index.html', SITE).href)).clone());
  await cache.put(OFFLINE_KEY, manifestResponse.clone());
  // The commit: from here on this build is the offline copy.
  await (await caches.open(OFFLINE_COPY)).put(OFFLINE_KEY, manifestResponse);
  for (const k of await caches.keys()) if (k.startsWith(PREFIX) && k !== name) await caches.delete(k);
  current = m.build;
}

const precaching = new Map();   // build -> Promise: one precache of a build at a time
function precacheOnce(m, response) {
  if (!precaching.has(m.build)) {
    precaching.set(m.build, precache(m, response).finally(() => precaching.delete(m.build)));
  }
  return precaching.get(m.build);
}

async function refresh() {
  try {
    const { manifest, response } = await readManifest();
    if (manifest.build !== (await currentBuild())) await precacheOnce(manifest, response);
  } catch { /* offline or mid-deploy: keep the copy we have */ }
}

/** Is `build` the offline copy? Precaches it first when the deployed site is that build. */
async function offlineCopyIs(build) {
  try {
    if ((await currentBuild()) === build) return { ok: true };
    const { manifest, response } = await readManifest();
    if (manifest.build !== build) return { ok: false, reason: `the site now serves build ${manifest.build}` };
    await precacheOnce(manifest, response);
    return (await currentBuild()) === build ? { ok: true } : { ok: false, reason: 'another build was stored meanwhile' };
  } catch (e) {
    return { ok: false, reason: `this build is not stored (${e.message})` };
  }
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const { manifest, response } = await readManifest();
    await precacheOnce(manifest, response);
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => { event.waitUntil(self.clients.claim()); });

self.addEventListener('message', (event) => {
  const [port] = event.ports;
  if (event.data?.type !== 'cbx:offline?' || !port) return;
  event.waitUntil(offlineCopyIs(String(event.data.build)).then((answer) => port.postMessage(answer)));
});

async function fromCache(request) {
  const build = await currentBuild();
  if (!build) return null;
  const cache = await caches.open(PREFIX + build);
  const url = new URL(request.url);
  url.search = '';            // ?preset=… and the like are the page's state, not another file
  return (await cache.match(url.href)) || (request.mode === 'navigate' ? cache.match(SITE) : null);
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || !request.url.startsWith(SITE)) return;
  event.respondWith((async () => {
    try {
      const res = await fetch(request);
      if (request.mode === 'navigate') event.waitUntil(refresh());
      return res;
    } catch (err) {
      const hit = await fromCache(request);
      if (hit) return hit;
      throw err;
    }
  })());
});
