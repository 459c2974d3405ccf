// Pyodide host (module Web Worker): loads the Python runtime and the py_engine wheel, then answers
// protocol calls. Everything it fetches is checked against manifest.json (written by build.py)
// before use, so a missing or corrupted file fails loudly with its name instead of hanging.
//
// In:  {id, method, params}                       one protocol call
// Out: {kind: "status", stage, progress, detail}  stage: download | start | engine | ready | failed
//      {kind: "reply", id, json}                  json: the protocol response, a JSON string
//      {kind: "cached", stored}                   the runtime files are in Cache Storage (entries)

// A CSP violation inside a worker reaches no page listener: report it loudly from here.
self.addEventListener("securitypolicyviolation", (e) =>
  console.error(`CSP violation in the engine worker: ${e.violatedDirective} blocked ${e.blockedURI}`));

const SITE = new URL("../", import.meta.url); // worker.js sits in engine/, one level under the site root

// The Python side: JSON string in, JSON string out, never raises (py_engine.protocol.handle_json
// guards malformed requests and non-JSON numbers itself, and is tested natively).
const SHIM = "from py_engine.protocol import handle_json as _cbx_call";

let lastStatus = { stage: "", progress: -1 };
function status(stage, progress, detail = "") {
  // Throttle download progress to 1% steps; every stage change goes out.
  if (stage === lastStatus.stage && progress < 1 && progress - lastStatus.progress < 0.01) return;
  lastStatus = { stage, progress };
  postMessage({ kind: "status", stage, progress, detail });
}

function errorReply(id, message) {
  const error = { type: "EngineError", field: null, value: null, allowed: null, message };
  postMessage({ kind: "reply", id, json: JSON.stringify({ ok: false, error }) });
}

async function sha256hex(bytes) {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// Fetch a file fully, reporting bytes as they arrive, and check its sha256.
async function fetchVerified(url, name, sha256, onBytes) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`${name}: could not be fetched (${e.message})`);
  }
  if (!res.ok) throw new Error(`${name}: HTTP ${res.status} ${res.statusText}`.trim());
  const chunks = [];
  let size = 0;
  const reader = res.body.getReader();
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
    throw new Error(`${name}: integrity check failed (sha256 ${got.slice(0, 12)}…, ` +
                    `manifest says ${sha256.slice(0, 12)}…) — the file is corrupted or tampered`);
  }
  return bytes;
}

// Verified files are kept in Cache Storage under their sha256, so a repeat visit downloads nothing
// (the HTTP cache may drop a 10 MB .wasm). Bytes read back are checked again; a bad or missing
// entry just means a download. No Cache Storage (some private modes): always download.
const CACHE_NAME = "cbx-runtime-v1";
const cacheKey = (url, sha256) => `${url}?sha256=${sha256}`;

async function openCache() {
  try { return await caches.open(CACHE_NAME); } catch { return null; }
}

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

// Keep exactly the current files: entries of older builds are dropped. Returns how many entries
// the cache holds for this build (0 without Cache Storage).
async function storeInCache(cache, entries) {
  if (!cache) return 0;
  try {
    const keep = new Set(entries.map(([url, sha256]) => cacheKey(url, sha256)));
    for (const req of await cache.keys()) if (!keep.has(req.url)) await cache.delete(req);
    for (const [url, sha256, bytes] of entries) {
      if (!(await cache.match(cacheKey(url, sha256)))) await cache.put(cacheKey(url, sha256), new Response(bytes));
    }
    return (await cache.keys()).length;
  } catch { return 0; /* quota or private mode: next visit downloads again */ }
}

// Files downloaded and verified in the download stage, by absolute URL. Pyodide's own fetch()es of
// them are answered from here: no second download (Chromium does not cache a 10 MB .wasm in every
// profile) and no gap between checking a file and using it.
const verified = new Map();
const networkFetch = self.fetch.bind(self);

function hexToBase64(hex) {
  return btoa(String.fromCharCode(...hex.match(/../g).map((h) => parseInt(h, 16))));
}

self.fetch = (input, init = {}) => {
  const url = new URL(input instanceof Request ? input.url : String(input), SITE).href;
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
  const type = url.endsWith(".wasm") ? "application/wasm" : "application/octet-stream";
  return Promise.resolve(new Response(hit.bytes, { status: 200, headers: { "Content-Type": type } }));
};

async function boot() {
  if (typeof WebAssembly !== "object") throw new Error("this browser has no WebAssembly");
  if (!crypto.subtle) throw new Error("integrity checks need a secure context (https or localhost)");

  status("download", 0, "manifest.json");
  let manifest;
  try {
    // Always revalidate: a manifest cached across a redeploy would flag every new file as tampered.
    const res = await fetch(new URL("manifest.json", SITE), { cache: "no-cache" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    manifest = await res.json();
  } catch (e) {
    throw new Error(`manifest.json: ${e.message}`);
  }
  const py = manifest.pyodide;
  const indexURL = new URL(py.indexURL, SITE).href;

  // Download stage: every runtime file, numpy and the engine wheel, in parallel, each verified
  // against the manifest. This catches a missing or broken .wasm up front (Pyodide itself can hang
  // on one); Pyodide then gets the verified bytes through the fetch() wrapper above.
  const numpy = py.packages.numpy;
  const items = [
    ...Object.entries(py.runtime).map(([f, v]) => ({ url: indexURL + f, name: `pyodide/${f}`, ...v })),
    { url: indexURL + numpy.file, name: `pyodide/${numpy.file}`, sha256: numpy.sha256, bytes: numpy.bytes },
    { url: new URL(manifest.engine.wheel, SITE).href, name: manifest.engine.wheel,
      sha256: manifest.engine.sha256, bytes: manifest.engine.bytes },
  ];
  const total = items.reduce((s, it) => s + (it.bytes || 0), 0) || 1;
  let received = 0;
  const progress = (n) => {
    received += n;
    status("download", Math.min(received / total, 1), `${(received / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`);
  };
  const cache = await openCache();
  const blobs = await Promise.all(items.map(async (it) => {
    const cached = await fromCache(cache, it.url, it.sha256);
    if (cached) { progress(cached.length); return cached; }
    return fetchVerified(it.url, it.name, it.sha256, progress);
  }));
  // In the background; the page hears when it is done (a test waits for that, not for a time).
  storeInCache(cache, items.map((it, i) => [it.url, it.sha256, blobs[i]]))
    .then((stored) => postMessage({ kind: "cached", stored }));
  items.forEach((it, i) => verified.set(new URL(it.url).href, { bytes: blobs[i], sha256: it.sha256 }));
  const engineWheel = blobs[blobs.length - 1];

  status("start", 0, `Python ${py.python} (Pyodide ${py.version})`);
  const { loadPyodide } = await import(indexURL + "pyodide.mjs");
  // packages: numpy loads while Python boots (it overlaps the bootstrap).
  const pyodide = await loadPyodide({
    indexURL, packages: ["numpy"], stdout: () => {}, stderr: (s) => console.warn(s),
  });

  // loadPackage does not reject when a download or its integrity check fails: it logs and goes
  // on. Ask again (a no-op when numpy is in), collect the errors, check loadedPackages ourselves.
  status("engine", 0.1, "numpy");
  const errors = [];
  await pyodide.loadPackage(["numpy"], { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
  if (!("numpy" in pyodide.loadedPackages)) {
    throw new Error(`numpy did not load${errors.length ? ": " + errors.join("; ") : ""}`);
  }

  // The engine wheel: unpack the bytes verified above (no second download, nothing can change
  // between check and use). Measured against loadPackage(url) and micropip.install(url): see README.
  status("engine", 0.6, `py_engine ${manifest.engine.version}`);
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(engineWheel, "wheel", { extractDir: sitePackages });
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
  pyodide.runPython(SHIM);
  verified.clear(); // ~17 MB we no longer need
  const call = pyodide.globals.get("_cbx_call");
  // Prove the round trip before announcing ready.
  const probe = JSON.parse(call(JSON.stringify({ method: "schema", params: {} })));
  if (!probe.ok) throw new Error(`py_engine self-test failed: ${probe.error && probe.error.message}`);
  return call;
}

const engine = boot();
engine.then(
  () => status("ready", 1, ""),
  (e) => status("failed", 0, e && e.message ? e.message : String(e)),
);

onmessage = async (ev) => {
  const { id, method, params } = ev.data;
  let call;
  try {
    call = await engine;
  } catch (e) {
    errorReply(id, `the engine is not available: ${e.message}`);
    return;
  }
  try {
    postMessage({ kind: "reply", id, json: call(JSON.stringify({ method, params: params ?? {} })) });
  } catch (e) {
    // handle_json() never raises, so only a broken interpreter (out of memory, say) gets here.
    errorReply(id, `the engine failed: ${e.message}`);
  }
};
