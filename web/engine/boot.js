// Boot the engine inside a worker: read manifest.json, download and check every runtime file, the
// engine wheel and the engine's memory snapshot (made at build time by tools/memsnap.mjs), then
// restore Python from that snapshot, about a second. If the snapshot cannot be used (missing,
// tampered, no DecompressionStream, a failed restore), boot Python the slow way and say why; a
// failure of the runtime itself names the file and ends the boot.
//
// boot(status) -> {pyodide, Job, handleJson, via: "snapshot" | "fresh", note}

import { downloadAll, serveVerified, forgetVerified, installFetch, precompile } from './fetch.js';
import { shapeCheck, zipProblem, RUNTIME_FILES, ENGINE_MODULE } from './shapes.js';

export const SITE = new URL('../', import.meta.url);   // this file sits in engine/ under the site root

async function readManifest() {
  try {
    // Always revalidate: a manifest cached across a redeploy would flag every new file as tampered.
    const res = await fetch(new URL('manifest.json', SITE), { cache: 'no-cache' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const m = await res.json();
    if (!m?.pyodide?.runtime || !m?.engine?.wheel) throw new Error('not a manifest of this site (pyodide.runtime or engine.wheel missing)');
    const missing = RUNTIME_FILES.filter((f) => !m.pyodide.runtime[f]?.sha256);
    if (missing.length) throw new Error(`lists no ${missing.join(', ')} under pyodide.runtime`);
    if (typeof m.pyodide.indexURL !== 'string' || !m.engine.sha256) throw new Error('pyodide.indexURL or engine.sha256 missing');
    return m;
  } catch (e) {
    throw new Error(`manifest.json: ${e.message}`);
  }
}

/** What a build downloads, from its manifest: every runtime file, the engine wheel and (optional)
 *  the memory snapshot (shipped gzipped, like the .wasm), each {url, name, sha256, bytes, check?,
 *  gzip?, optional?} as fetch.js downloadAll takes them. */
function runtimeItems(manifest) {
  const py = manifest.pyodide;
  const indexURL = new URL(py.indexURL, SITE).href;
  const runtime = Object.entries(py.runtime).map(([f, v]) => ({
    url: indexURL + f, name: `pyodide/${f}`, sha256: v.sha256, bytes: v.bytes, check: shapeCheck(f),
    gzip: v.gzip && { url: indexURL + v.gzip.file, sha256: v.gzip.sha256, bytes: v.gzip.bytes } }));
  const eng = manifest.engine;
  const wheel = { url: new URL(eng.wheel, SITE).href, name: eng.wheel, sha256: eng.sha256, bytes: eng.bytes,
    check: (b) => zipProblem(b, [ENGINE_MODULE]) };
  const ms = eng.memory_snapshot;
  const snap = ms && { url: new URL(ms.file.replace(/\.gz$/, ''), SITE).href, name: ms.file.replace(/\.gz$/, ''),
    sha256: ms.raw_sha256, bytes: ms.raw_bytes, gzip: { url: new URL(ms.file, SITE).href, sha256: ms.sha256, bytes: ms.bytes }, optional: true };
  return { runtime, wheel, snap, items: [...runtime, wheel, ...(snap ? [snap] : [])] };
}

// The offline copy's manifest: sw.js writes it here once every site file of that build is cached
// (the same names as OFFLINE_COPY / OFFLINE_KEY in sw.js).
const OFFLINE_COPY = 'cbx-offline';
const OFFLINE_KEY = 'manifest.json';

/** The manifest of the build the service worker keeps for offline visits, or null (none, or no
 *  Cache Storage here). */
async function offlineCopyManifest() {
  try {
    const hit = await caches.match(new URL(OFFLINE_KEY, SITE).href, { cacheName: OFFLINE_COPY });
    const m = hit && await hit.json();
    return m?.pyodide?.runtime && m?.engine?.wheel ? m : null;
  } catch {
    return null;
  }
}

const quiet = { stdout: () => {}, stderr: (s) => console.warn(s) };

/** The engine's files into site-packages (a fresh boot; a restored snapshot imported every engine
 *  module at build time, and unpacking would cost ~0.4 s of zipfile/shutil imports). */
function install(pyodide, wheel) {
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  try {
    pyodide.unpackArchive(wheel.bytes, 'wheel', { extractDir: sitePackages });
  } catch (e) {
    throw new Error(`${wheel.name}: not a usable wheel (${e.message})`);
  }
  pyodide.runPython('import importlib; importlib.invalidate_caches()');
}

// Pyodide 0.27.7's memory-snapshot header (pyodide.asm.js makeSnapshot / restoreSnapshot): a
// magic number, then the offset of the heap image. Pyodide hangs instead of failing on a buffer
// that is not a snapshot, so the header is checked first.
const SNAPSHOT_MAGIC = 1886286592;
const SNAPSHOT_HEADER = 48;
const RESTORE_STALL_MS = 30000;   // a valid restore takes about a second; this only ends a hang

async function restore(loadPyodide, indexURL, raw) {
  const head = new Uint32Array(raw.buffer, raw.byteOffset, Math.min(4, raw.byteLength >> 2));
  if (raw.byteLength < SNAPSHOT_HEADER || head[0] !== SNAPSHOT_MAGIC || head[1] < SNAPSHOT_HEADER || head[1] >= raw.byteLength) {
    throw new Error('not a Pyodide memory snapshot (bad header)');
  }
  let timer;
  const stall = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer after ${RESTORE_STALL_MS / 1000} s`)), RESTORE_STALL_MS); });
  try {
    return await Promise.race([loadPyodide({ indexURL, _loadSnapshot: raw, ...quiet }), stall]);
  } finally {
    clearTimeout(timer);
  }
}

export async function boot(status) {
  if (typeof WebAssembly !== 'object') throw new Error('this browser has no WebAssembly');
  if (!crypto.subtle) throw new Error('integrity checks need a secure context (https or localhost)');
  status('download', 0, 'manifest.json');
  const offline = offlineCopyManifest();   // (read while the manifest arrives)
  const manifest = await readManifest();
  const py = manifest.pyodide;
  const indexURL = new URL(py.indexURL, SITE).href;
  installFetch(SITE);

  const { runtime, wheel, snap, items } = runtimeItems(manifest);
  const eng = manifest.engine, ms = eng.memory_snapshot;
  // Cache Storage keeps this build's files and those of the offline copy (sw.js), which may be an
  // older build whose update was interrupted: its next offline visit needs them.
  const keep = offline.then((m) => (m && m.build !== manifest.build ? runtimeItems(m).items : []))
    .catch(() => []);   // an unreadable copy keeps nothing
  let asmJs = null, wasm = null;
  const { files, cached } = await downloadAll(items, keep, (p, got, total) =>
    status('download', p, `${(got / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`),
  (it, bytes) => {   // start on each file as soon as it is checked, while the others arrive
    if (it.url.endsWith('.wasm')) wasm = { name: it.name, compiled: precompile(it.url, bytes) };
    // Pyodide's loader imports pyodide.asm.js by URL (a script cannot be run from bytes under this
    // CSP); it skips that when the module factory is there, so import the checked file now.
    if (it.url.endsWith('pyodide.asm.js')) asmJs = import(it.url);
  });
  runtime.forEach((it, i) => serveVerified(it.url, files[i], it.sha256));
  wheel.bytes = files[runtime.length];

  if (wasm) {
    try { await wasm.compiled; } catch (e) { throw new Error(`${wasm.name}: not a valid WebAssembly module (${e.message})`); }
  }
  const [{ loadPyodide }] = await Promise.all([import(indexURL + 'pyodide.mjs'), asmJs]);
  let pyodide = null, via = 'fresh', note = '';
  if (!snap) note = 'this build has no memory snapshot';
  else if (files[items.length - 1] instanceof Error) note = files[items.length - 1].message;
  else {
    status('start', 0.2, 'restoring Python from the memory snapshot');
    try {
      pyodide = await restore(loadPyodide, indexURL, files[items.length - 1]);
      via = 'snapshot';
    } catch (e) {
      note = `${ms.file}: could not be restored (${e.message})`;
    }
  }
  if (!pyodide) {
    status('start', 0.2, `starting Python ${py.python} without the memory snapshot: ${note}`);
    pyodide = await loadPyodide({ indexURL, ...quiet });
    install(pyodide, wheel);   // (a restored snapshot has every engine module in memory already)
  }
  forgetVerified();   // ~15 MB that Pyodide has taken in

  status('engine', 0.8, `py_engine ${eng.version}`);
  let handleJson, Job;
  try {
    pyodide.runPython('from py_engine.app.protocol import handle_json as _cbx_call, Job as _cbx_job');
    handleJson = pyodide.globals.get('_cbx_call');
    Job = pyodide.globals.get('_cbx_job');
  } catch (e) {
    throw new Error(`${wheel.name}: py_engine could not be imported (${String(e.message).split('\n').filter(Boolean).pop()})`);
  }
  const probe = JSON.parse(handleJson(JSON.stringify({ method: 'schema', params: {} })));
  if (!probe.ok) throw new Error(`py_engine self-test failed: ${probe.error && probe.error.message}`);
  return { pyodide, handleJson, Job, via, note, cached, manifest };
}
