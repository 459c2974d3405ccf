// The engine host: one Python serving every connected page (a SharedWorker's ports, or the one
// page of a dedicated worker). Each request runs as a protocol Job in slices of a few tens of
// milliseconds; between slices the host reads its messages, so a request can be cancelled at any
// time.
//
// Fair to every page: each page's requests queue in its own arrival order, and the host works the
// pages round-robin, one slice of one page's oldest request at a time. A light figure is never
// stuck behind another page's heavy run (it gets every other slice), and a page that has gone
// (its goodbye on pagehide, or its Web Lock released: closed, navigated away, killed) has its work
// dropped at once.
//
// In  (from a page):  {id, method, params}          one protocol call
//                     {cancel: id}                  drop that call (queued or running)
//                     {page: lockName}              the page holds this Web Lock while it lives
//                     {bye: true}                   the page is going: drop its work
//                     {id, host: "jobs"}            the host's work, as a reply (a test hook):
//                                                   {pages, queued, running, done, dropped}
// Out (to a page):    {kind: "status", stage, progress, detail, via, clients}
//                     {kind: "progress", id, done, total, unit}  how far call `id` is (protocol
//                                                   Job.progress(): requests finished of total,
//                                                   from the simulator), at most every
//                                                   PROGRESS_MS, and when done reaches total
//                     {kind: "reply", id, response} response: {ok, result} | {ok: false, error};
//                                                   result tables as typed arrays (transferred)
//                     {kind: "cached", stored}      this build's runtime files in Cache Storage
//                     {kind: "log", level, text}    a shared worker's console, for the page

import { boot } from './boot.js';
import './fetch.js';   // fetched beside boot.js, not after it

const SLICE_S = 0.03;
const PROGRESS_MS = 150;   // a page redraws its progress line this often at most

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
  const pages = new Map();          // port -> {queue: [{id, method, params, job, waiting, progress, progressAt}]}
  let lastServed = null;            // the page whose request had the last slice (round-robin)
  let working = false;
  let engine = null;                // what boot() returned, once ready
  let failed = null;
  let last = { kind: 'status', stage: 'download', progress: 0, detail: 'starting the engine' };
  let cachedMsg = null;
  const counts = { done: 0, dropped: 0 };

  const broadcast = (msg) => { for (const p of pages.keys()) p.postMessage(msg); };
  const status = (stage, progress, detail = '') => {
    // failed is final: downloads still in flight must not overwrite it (a page that connects
    // later is told `last`)
    if (last.stage === 'failed') return;
    if (stage === last.stage && progress < 1 && progress - last.progress < 0.01) return;   // 1% steps
    last = { kind: 'status', stage, progress, detail, via: engine?.via ?? null, clients: pages.size };
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

  /** Take a request off its page's queue (answered, cancelled or dropped); its job is freed. */
  function remove(page, req) {
    const i = page.queue.indexOf(req);
    if (i >= 0) page.queue.splice(i, 1);
    req.job?.destroy();
    req.job = null;
  }

  // Methods that need a package beyond the engine (py_engine.app.protocol.PACKAGES: numpy for the
  // calibration fit) load it from the site on first use; it is not on the start-up path. Meanwhile
  // that request waits and the other pages' requests go on.
  let packages = null;
  const loaded = new Map();         // name -> {promise, done}
  function packagesLoading(method) {
    packages ??= JSON.parse(engine.pyodide.runPython('import json\nfrom py_engine.app.protocol import PACKAGES\njson.dumps(PACKAGES)'));
    const waits = [];
    for (const name of packages[method] || []) {
      if (!loaded.has(name)) {
        const entry = { done: false };
        entry.promise = engine.pyodide.loadPackage(name, { messageCallback: () => {}, errorCallback: (m) => console.warn(m) })
          .catch((e) => console.warn(`${name}: ${e.message}`)).finally(() => { entry.done = true; });
        loaded.set(name, entry);
      }
      if (!loaded.get(name).done) waits.push(loaded.get(name).promise);
    }
    return waits.length ? Promise.all(waits) : null;
  }

  /** The next page after the last one served whose oldest request can take a slice. */
  function nextRequest() {
    const order = [...pages.keys()];
    const from = order.indexOf(lastServed) + 1;   // -1 + 1 = 0 when that page has gone
    for (let k = 0; k < order.length; k++) {
      const port = order[(from + k) % order.length];
      const req = pages.get(port).queue[0];
      if (req && !req.waiting) return [port, req];
    }
    return null;
  }

  /** The job's progress to its page, if it has news: the last of a run always goes (done =
   *  total, then the answer), the others at most every PROGRESS_MS. */
  function sendProgress(port, req) {
    const text = req.job.progress();
    if (text == null || text === req.progress) return;
    const p = JSON.parse(text);
    const now = Date.now();
    if (p.done < p.total && now - req.progressAt < PROGRESS_MS) return;
    req.progress = text;
    req.progressAt = now;
    port.postMessage({ kind: 'progress', id: req.id, ...p });
  }

  /** One slice of req's work; replies and takes it off the queue when it is done. */
  function slice(port, req) {
    const page = pages.get(port);
    try {
      if (!req.job) {
        const wait = packagesLoading(req.method);
        if (wait) {
          req.waiting = true;
          wait.finally(() => { req.waiting = false; work(); });
          return;
        }
        req.job = engine.Job(JSON.stringify({ method: req.method, params: req.params ?? {} }), SLICE_S);
      }
      const out = req.job.step();
      if (!out) { sendProgress(port, req); return; }
      const [text, raw] = out.toJs();
      out.destroy();
      remove(page, req);
      counts.done++;
      // each is its own ArrayBuffer (toJs copies out of the wasm heap): transfer, no copy
      const bufs = raw.map((b) => (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : b.slice()));
      reply(port, req.id, attach(JSON.parse(text), bufs), bufs.map((b) => b.buffer));
    } catch (e) {
      // Job.step() never raises, so only a broken interpreter (out of memory, say) gets here.
      remove(page, req);
      reply(port, req.id, engineError(`the engine failed: ${e.message}`));
    }
  }

  async function work() {
    if (working || !engine) return;
    working = true;
    try {
      for (let next = nextRequest(); next; next = nextRequest()) {
        lastServed = next[0];
        slice(...next);
        await yieldToMessages();   // cancels, goodbyes and new pages' requests are read here
      }
    } finally {
      working = false;
    }
  }

  /** A page has gone: its requests are dropped, queued or running, and it is no client any more. */
  function dropPage(port) {
    const page = pages.get(port);
    if (!page) return;
    for (const req of [...page.queue]) { remove(page, req); counts.dropped++; }
    pages.delete(port);
    if (engine) broadcast({ ...last, clients: pages.size });
  }

  function jobs() {
    const queues = [...pages.values()].map((p) => p.queue);
    return { pages: pages.size, queued: queues.reduce((n, q) => n + q.length, 0),
      running: queues.filter((q) => q[0]?.job).length, ...counts };
  }

  function onMessage(port, data) {
    if (!pages.has(port)) pages.set(port, { queue: [] });   // back from the back/forward cache
    const page = pages.get(port);
    if (data && data.bye) { dropPage(port); return; }
    if (data && typeof data.page === 'string') {
      // Granted only once the page has let go of its lock: it has gone, even without a goodbye.
      navigator.locks?.request(data.page, () => dropPage(port)).catch(() => {});
      return;
    }
    if (data && 'cancel' in data) {
      const req = page.queue.find((r) => r.id === data.cancel);
      if (req) remove(page, req);
      return;
    }
    const { id, method, params, host } = data || {};
    if (host === 'jobs') { reply(port, id, { ok: true, result: jobs() }); return; }
    if (failed) { reply(port, id, engineError(`the engine is not available: ${failed}`)); return; }
    page.queue.push({ id, method, params, job: null, waiting: false, progress: null, progressAt: 0 });
    work();
  }

  return {
    addPort(port) {
      pages.set(port, { queue: [] });
      port.onmessage = (ev) => onMessage(port, ev.data);
      port.start?.();
      port.postMessage({ ...last, clients: pages.size });
      if (cachedMsg) port.postMessage(cachedMsg);
      if (engine) broadcast({ ...last, clients: pages.size });
    },
    start() {
      boot(status).then((e) => {
        engine = e;
        e.cached.then((stored) => { cachedMsg = { kind: 'cached', stored }; broadcast(cachedMsg); });
        status('ready', 1, e.via === 'snapshot' ? 'restored from the memory snapshot' : `booted without the memory snapshot: ${e.note}`);
        work();
      }, (e) => {
        failed = e && e.message ? e.message : String(e);
        status('failed', 0, failed);
        for (const [port, page] of pages) {
          for (const r of page.queue.splice(0)) reply(port, r.id, engineError(`the engine is not available: ${failed}`));
        }
      });
    },
  };
}
