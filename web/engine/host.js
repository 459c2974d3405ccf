// The engine host: one Python serving every connected page (a SharedWorker's ports, or the one
// page of a dedicated worker). Requests queue in arrival order and run as protocol Jobs in slices
// of a few tens of milliseconds; between slices the host reads its messages, so a request can be
// cancelled at any time and a new one is never stuck behind a long run for more than a slice.
//
// In  (from a page):  {id, method, params}          one protocol call
//                     {cancel: id}                  drop that call (queued or running)
// Out (to a page):    {kind: "status", stage, progress, detail, via, clients}
//                     {kind: "reply", id, response} response: {ok, result} | {ok: false, error};
//                                                   result tables as typed arrays (transferred)
//                     {kind: "cached", stored}      the runtime is in Cache Storage
//                     {kind: "log", level, text}    a shared worker's console, for the page

import { boot } from './boot.js';
import './fetch.js';   // fetched beside boot.js, not after it

const SLICE_S = 0.03;

function engineError(message) {
  return { ok: false, error: { type: 'EngineError', field: null, value: null, allowed: null, message } };
}

/** The reply's tables: {"$buf": i, "type"} → typed arrays over the returned buffers. */
function attach(x, bufs) {
  if (Array.isArray(x)) return x.map((v) => attach(v, bufs));
  if (x && typeof x === 'object') {
    if ('$buf' in x) {
      const b = bufs[x.$buf];
      return x.type === 'u8' ? b : new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8);
    }
    for (const k of Object.keys(x)) x[k] = attach(x[k], bufs);
  }
  return x;
}

/** A macrotask boundary that is not clamped like nested setTimeout: messages get their turn. */
function yieldToMessages() {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => { ch.port1.close(); resolve(); };
    ch.port2.postMessage(0);
  });
}

export function createHost({ forwardConsole = false } = {}) {
  const ports = new Set();
  const queue = [];                 // [{port, id, method, params}]
  let running = null;               // the request being worked on
  let engine = null;                // what boot() returned, once ready
  let failed = null;
  let last = { kind: 'status', stage: 'download', progress: 0, detail: 'starting the engine' };
  let cachedMsg = null;

  const broadcast = (msg) => { for (const p of ports) p.postMessage(msg); };
  const status = (stage, progress, detail = '') => {
    // failed is final: downloads still in flight must not overwrite it (a page that connects
    // later is told `last`)
    if (last.stage === 'failed') return;
    if (stage === last.stage && progress < 1 && progress - last.progress < 0.01) return;   // 1% steps
    last = { kind: 'status', stage, progress, detail, via: engine?.via ?? null, clients: ports.size };
    broadcast(last);
  };
  if (forwardConsole) {
    for (const level of ['warn', 'error']) {
      const orig = console[level].bind(console);
      console[level] = (...a) => { orig(...a); broadcast({ kind: 'log', level, text: a.map(String).join(' ') }); };
    }
  }

  function reply(port, id, response, transfer = []) {
    try { port.postMessage({ kind: 'reply', id, response }, transfer); } catch (e) {
      port.postMessage({ kind: 'reply', id, response: engineError(`the reply could not be sent: ${e.message}`) });
    }
  }

  async function work() {
    while (queue.length) {
      const req = queue.shift();
      running = req;
      let job = null;
      try {
        await needs(req.method);
        if (req.cancelled) continue;
        job = engine.Job(JSON.stringify({ method: req.method, params: req.params ?? {} }), SLICE_S);
        for (;;) {
          const out = job.step();
          if (out) {
            const [text, raw] = out.toJs();
            out.destroy();
            if (!req.cancelled) {
              // each is its own ArrayBuffer (toJs copies out of the wasm heap): transfer, no copy
              const bufs = raw.map((b) => (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : b.slice()));
              reply(req.port, req.id, attach(JSON.parse(text), bufs), bufs.map((b) => b.buffer));
            }
            break;
          }
          await yieldToMessages();
          if (req.cancelled) break;
        }
      } catch (e) {
        // Job.step() never raises, so only a broken interpreter (out of memory, say) gets here.
        if (!req.cancelled) reply(req.port, req.id, engineError(`the engine failed: ${e.message}`));
      } finally {
        job?.destroy();
        running = null;
      }
    }
  }

  // Methods that need a package beyond the engine (py_engine.app.protocol.PACKAGES: numpy for the
  // calibration fit) load it from the site on first use; it is not on the start-up path.
  let packages = null;
  const loaded = new Map();
  async function needs(method) {
    packages ??= JSON.parse(engine.pyodide.runPython('import json\nfrom py_engine.app.protocol import PACKAGES\njson.dumps(PACKAGES)'));
    for (const name of packages[method] || []) {
      if (!loaded.has(name)) loaded.set(name, engine.pyodide.loadPackage(name, { messageCallback: () => {}, errorCallback: (m) => console.warn(m) }));
      await loaded.get(name);
    }
  }

  function onMessage(port, data) {
    if (data && 'cancel' in data) {
      const i = queue.findIndex((r) => r.port === port && r.id === data.cancel);
      if (i >= 0) queue.splice(i, 1);
      if (running && running.port === port && running.id === data.cancel) running.cancelled = true;
      return;
    }
    const { id, method, params } = data || {};
    if (failed) { reply(port, id, engineError(`the engine is not available: ${failed}`)); return; }
    queue.push({ port, id, method, params });
    if (engine && !running && queue.length === 1) work();
  }

  return {
    addPort(port) {
      ports.add(port);
      port.onmessage = (ev) => onMessage(port, ev.data);
      port.start?.();
      port.postMessage({ ...last, clients: ports.size });
      if (cachedMsg) port.postMessage(cachedMsg);
      if (engine) broadcast({ ...last, clients: ports.size });
    },
    start() {
      boot(status).then((e) => {
        engine = e;
        e.cached.then((stored) => { cachedMsg = { kind: 'cached', stored }; broadcast(cachedMsg); });
        status('ready', 1, e.via === 'snapshot' ? 'restored from the memory snapshot' : `booted without the memory snapshot: ${e.note}`);
        if (queue.length && !running) work();
      }, (e) => {
        failed = e && e.message ? e.message : String(e);
        status('failed', 0, failed);
        for (const r of queue.splice(0)) reply(r.port, r.id, engineError(`the engine is not available: ${failed}`));
      });
    },
  };
}
