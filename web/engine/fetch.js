// Verified downloads for the engine host: every file is checked against the sha256 that
// manifest.json gives before anything uses it. Files shipped gzipped are inflated as they arrive
// (the inflated bytes are used only once the gzip bytes have passed their check).
//
// Checked files are kept in Cache Storage under their sha256, inflated, so a repeat visit
// downloads and inflates nothing; an entry is checked again when it is read, and a bad or missing
// one just means a download. Entries of other builds are dropped, except the offline copy's
// (sw.js): an update interrupted before its site files were all stored must not strand the old
// copy without its runtime. Where Cache Storage is refused, the files stay in memory. Pyodide's
// own fetch()es of these files are answered from the checked bytes (installFetch), and the .wasm
// is compiled while the other files still arrive (precompile).

export async function sha256hex(bytes) {
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function inflateStream(stream, name) {
  try {
    return new Uint8Array(await new Response(stream.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
  } catch (e) {
    throw new Error(`${name}: not a valid gzip file (${e.message})`);
  }
}

/** Inflate gzip bytes; a clear error names the file when they are not gzip. */
export async function gunzip(bytes, name) {
  if (typeof DecompressionStream !== 'function') throw new Error(`${name}: this browser cannot inflate gzip (no DecompressionStream)`);
  return inflateStream(new Blob([bytes]).stream(), name);
}

/**
 * Fetch a file fully, reporting bytes as they arrive, and check its sha256 -> its bytes; with
 * inflate, also its inflated bytes (inflated as it downloads): {bytes, raw}.
 */
async function fetchVerified(url, name, sha256, onBytes, inflate) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`${name}: could not be fetched (${e.message})`);
  }
  if (!res.ok) {
    res.body?.cancel().catch(() => {});   // release the connection
    throw new Error(`${name}: HTTP ${res.status} ${res.statusText}`.trim());
  }
  let body = res.body;
  let raw = null;
  if (inflate) {
    const [a, b] = body.tee();
    body = a;
    raw = inflateStream(b, name);
    raw.catch(() => {});   // reported when awaited, after the check
  }
  const chunks = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    onBytes(value.length);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { bytes.set(c, at); at += c.length; }
  const got = await sha256hex(bytes);
  if (got !== sha256) {
    throw new Error(`${name}: integrity check failed (sha256 ${got.slice(0, 12)}…, `
                    + `manifest says ${sha256.slice(0, 12)}…) — the file is corrupted or tampered`);
  }
  // A gzip file that passed its check inflates deterministically (the build checked the inflated
  // bytes against their pin), so they need no second hash here.
  return { bytes, raw: raw && await raw };
}

const CACHE_NAME = 'cbx-runtime-v1';
const cacheKey = (url, sha256) => `${url}?sha256=${sha256}`;

async function openCache() {
  try { return await caches.open(CACHE_NAME); } catch { return null; }
}

/** A cached file, checked again, or null. */
async function fromCache(cache, url, sha256) {
  if (!cache) return null;
  try {
    const hit = await cache.match(cacheKey(url, sha256));
    if (!hit) return null;
    const bytes = new Uint8Array(await hit.arrayBuffer());
    if ((await sha256hex(bytes)) === sha256) return bytes;
    await cache.delete(cacheKey(url, sha256));
  } catch { /* treat as a miss */ }
  return null;
}

/**
 * Store this build's files and drop every entry but those and `keep` ([{url, sha256}]: the offline
 * copy's files, when sw.js holds an older build) -> how many of this build's files are stored: all
 * of `entries`, or 0 when any could not be (the offline claim needs every one).
 */
async function storeInCache(cache, entries, keep) {
  if (!cache) return 0;
  try {
    const mine = new Set(entries.map(([url, sha256]) => cacheKey(url, sha256)));
    const keepKeys = new Set([...mine, ...(await keep).map((it) => cacheKey(it.url, it.sha256))]);
    for (const req of await cache.keys()) if (!keepKeys.has(req.url)) await cache.delete(req);
    for (const [url, sha256, bytes] of entries) {
      if (!(await cache.match(cacheKey(url, sha256)))) await cache.put(cacheKey(url, sha256), new Response(bytes));
    }
    const stored = (await cache.keys()).filter((req) => mine.has(req.url)).length;
    return stored === mine.size ? stored : 0;
  } catch { return 0; /* quota or private mode: the next visit downloads again */ }
}

/**
 * Download every item in parallel, verified: [{url, name, sha256, bytes, gzip?: {url, sha256,
 * bytes}}] (sha256 and url: the file itself; gzip: how it is shipped) -> {files: [Uint8Array |
 * Error] in order (the file's own bytes, inflated), cached: Promise<how many are in Cache Storage
 * once the background fill is done: all that were downloaded, or 0>}. An item with optional: true
 * yields its Error instead of failing the lot; an item's check(bytes) (after the hash) returns
 * what is wrong with it, or null. onFile(item, bytes) is called as each file is ready (to start
 * work on it at once). keep: Promise<items> also kept in the cache (another build's), or dropped.
 * Where Cache Storage is refused (a partitioned cross-site frame) the files are only in memory.
 */
export async function downloadAll(items, keep, onProgress, onFile = () => {}) {
  const total = items.reduce((s, it) => s + ((it.gzip || it).bytes || 0), 0) || 1;
  let received = 0;
  const progress = (n) => { received += n; onProgress(Math.min(received / total, 1), received, total); };
  const cache = await openCache();
  const toStore = [];
  const out = await Promise.all(items.map(async (it) => {
    try {
      let bytes = await fromCache(cache, it.url, it.sha256);
      if (bytes) {
        progress((it.gzip || it).bytes || bytes.length);
      } else if (it.gzip) {
        if (typeof DecompressionStream !== 'function') throw new Error(`${it.name}: this browser cannot inflate gzip (no DecompressionStream)`);
        bytes = (await fetchVerified(it.gzip.url, `${it.name}.gz`, it.gzip.sha256, progress, true)).raw;
      } else {
        bytes = (await fetchVerified(it.url, it.name, it.sha256, progress, false)).bytes;
      }
      const problem = it.check?.(bytes);
      if (problem) throw new Error(`${it.name}: ${problem}`);
      toStore.push([it.url, it.sha256, bytes]);
      onFile(it, bytes);
      return bytes;
    } catch (e) {
      if (it.optional) return e;
      throw e;
    }
  }));
  return { files: out, cached: storeInCache(cache, toStore, keep) };
}

const verified = new Map();   // absolute URL -> {bytes, sha256}

/** From now on, fetch(url) of a verified file is answered from its checked bytes. */
export function serveVerified(url, bytes, sha256) { verified.set(new URL(url).href, { bytes, sha256 }); }
export function forgetVerified() { verified.clear(); }

function hexToBase64(hex) {
  return btoa(String.fromCharCode(...hex.match(/../g).map((h) => parseInt(h, 16))));  // bounded: a 32-byte hash
}

/** Wrap self.fetch so Pyodide's requests for verified files get the checked bytes. */
export function installFetch(base) {
  const networkFetch = self.fetch.bind(self);
  self.fetch = (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input), base).href;
    const hit = verified.get(url);
    if (!hit) return networkFetch(input, init);
    // Keep Subresource Integrity semantics for requests that carry it (loadPackage does).
    if (init.integrity) {
      const m = /^sha256-(\S+)$/.exec(init.integrity.trim());
      if (!m) return networkFetch(input, init);
      if (m[1] !== hexToBase64(hit.sha256)) {
        return Promise.reject(new TypeError(`Failed to fetch '${url}': integrity mismatch (sha256)`));
      }
    }
    const type = url.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
    return Promise.resolve(new Response(hit.bytes, { status: 200, headers: { 'Content-Type': type, 'X-Verified-Url': url } }));
  };
}

/**
 * Compile a verified .wasm now (while the other files still download) and let Pyodide's
 * WebAssembly.instantiateStreaming of it use that module instead of compiling it again.
 */
export function precompile(url, bytes) {
  const compiled = WebAssembly.compile(bytes);
  compiled.catch(() => {});           // boot awaits it (and names the file) before Pyodide starts
  const streaming = WebAssembly.instantiateStreaming.bind(WebAssembly);
  WebAssembly.instantiateStreaming = async (source, imports) => {
    const res = await source;
    if (res?.headers?.get('X-Verified-Url') !== new URL(url).href) return streaming(res, imports);
    const module = await compiled;
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
  return compiled;
}
