// Where answers come from: the build-time snapshot (native answers to every request the page makes
// before its engine is live: engine/requests.js startupRequests, written by tools/snapshot.py) until
// the in-page engine is ready, then the engine itself. One call() for both, so the rest of the page
// never knows the difference.
//
// snapshot/index.json maps a request's canonical JSON to the file holding its response; each file
// is fetched only when asked for, so an embed loads only its own figure's answers.
//
// A request that runs the reader's own policy (the lab's lane) goes to the lab's engine instead
// (engine/lab.js: a worker of its own, stopped when the code never returns).

import { canonical } from './requests.js';
import { earlyEngine } from './start.js';
import { createLabEngine } from './lab.js';
import { asTables } from '../state/records.js';

export class Source {
  constructor({ onPending = () => {}, onMiss = () => {} } = {}) {
    this.index = new Map();
    this.files = new Map();    // file -> Promise<response>
    this.client = null;
    this.live = false;
    this.failed = null;
    this.pending = 0;          // engine calls in flight (the worker answers them in order)
    this.misses = 0;           // calls made before `ready` that the snapshot could not answer
    this.onPending = onPending;
    this.onMiss = onMiss;
    this.lab = createLabEngine();
    this.readyPromise = new Promise((res, rej) => { this._ready = res; this._fail = rej; });
    this.readyPromise.catch(() => {});
  }

  async loadSnapshot(url = 'snapshot/index.json') {
    try {
      const r = await fetch(url);
      if (!r.ok) return 0;
      for (const [key, file] of Object.entries(await r.json())) this.index.set(key, new URL(file, new URL(url, location.href)).href);
    } catch { /* no snapshot: the page waits for the engine */ }
    return this.index.size;
  }

  /** Use the engine engine/start.js began loading; onStatus gets its staged progress. */
  async start(onStatus) {
    try {
      this.client = earlyEngine();
      this.client.onStatus = onStatus;
      await this.client.ready;
      this.live = true;
      this._ready();
    } catch (err) {
      this.failed = err;
      this._fail(err);
      onStatus?.({ stage: 'failed', progress: 0, detail: err?.detail?.message || err?.message || String(err) });
    }
  }

  hasSnapshot(method, params) { return this.index.has(canonical({ method, params })); }

  async fromSnapshot(key) {
    const file = this.index.get(key);
    if (!this.files.has(file)) {
      this.files.set(file, fetch(file).then((r) => {
        if (!r.ok) throw new Error(`${file}: HTTP ${r.status}`);
        return r.json();
      }).then((resp) => (resp.ok ? { ...resp, result: asTables(resp.result) } : resp)));   // the page reads tables
    }
    return unwrap(await this.files.get(file));
  }

  /** Resolve with the protocol result, or reject with an Error whose .detail is the protocol error;
   *  options {signal, onProgress} as client.call: aborting `signal` cancels the call in the engine
   *  (or before it is sent), onProgress hears how far the engine is; `engine`: a call the page
   *  makes of the engine alone, also while it loads (no start-up request: not the snapshot's). */
  async call(method, params, options = {}) {
    if (this.lab.runsCustom(method, params)) return this.counted(() => this.lab.call(method, params, options));
    if (!this.live && !options.engine) {
      const key = canonical({ method, params });
      if (this.index.has(key)) {
        try { return await this.fromSnapshot(key); } catch (e) { if (e.detail) throw e; /* unreadable: ask the engine */ }
      } else {
        this.misses++;
        this.onMiss(this.misses, method);
      }
    }
    return this.counted(async () => {
      if (!this.live) await Promise.race([this.readyPromise, aborted(options.signal)]);
      return this.client.call(method, params, options);
    });
  }

  async counted(call) {
    this.pending++;
    this.onPending(this.pending);
    try {
      return await call();
    } finally {
      this.pending--;
      this.onPending(this.pending);
    }
  }
}

/** Rejects when `signal` aborts (a call cancelled while the engine still loads stops waiting). */
function aborted(signal) {
  return new Promise((_, reject) => {
    signal?.addEventListener('abort', () => {
      const e = new Error('cancelled');
      e.detail = { type: 'Cancelled', field: null, value: null, allowed: null, message: 'cancelled' };
      reject(e);
    }, { once: true });
  });
}

function unwrap(resp) {
  if (resp.ok) return resp.result;
  const e = new Error(resp.error?.message || 'engine error');
  e.detail = resp.error;
  throw e;
}
