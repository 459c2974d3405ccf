// Where answers come from: the build-time snapshot (dist/snapshot.json, native results for the
// requests listed in web/snapshot-requests.json) until the in-page engine is ready, then the
// engine itself. One call() for both, so the rest of the page never knows the difference.

import { canonical } from './state.js';

export class Source {
  constructor() {
    this.snapshot = new Map();
    this.client = null;
    this.live = false;
    this.failed = null;
    this.pending = 0;          // engine calls in flight (the worker answers them in order)
    this.onPending = null;
    this.readyPromise = new Promise((res, rej) => { this._ready = res; this._fail = rej; });
    this.readyPromise.catch(() => {});
  }

  async loadSnapshot(url = 'snapshot.json') {
    try {
      const r = await fetch(url);
      if (!r.ok) return 0;
      const list = await r.json();
      for (const { request, response } of list) this.snapshot.set(canonical(request), response);
    } catch { /* no snapshot: the page waits for the engine */ }
    return this.snapshot.size;
  }

  /** Start the Pyodide worker through engine-client.js; onStatus gets its staged progress. */
  async start(onStatus) {
    try {
      const mod = await import('./engine-client.js');
      this.client = mod.startEngine({ onStatus });
      await this.client.ready;
      this.live = true;
      this._ready();
    } catch (err) {
      this.failed = err;
      this._fail(err);
      onStatus?.({ stage: 'failed', progress: 0, detail: err?.detail?.message || err?.message || String(err) });
    }
  }

  hasSnapshot(method, params) { return this.snapshot.has(canonical({ method, params })); }

  /** Resolve with the protocol result, or reject with an Error whose .detail is the protocol error. */
  async call(method, params) {
    if (!this.live) {
      const resp = this.snapshot.get(canonical({ method, params }));
      if (resp) return unwrap(resp);
    }
    this.pending++;
    this.onPending?.(this.pending);
    try {
      if (!this.live) await this.readyPromise;
      return await this.client.call(method, params);
    } finally {
      this.pending--;
      this.onPending?.(this.pending);
    }
  }
}

function unwrap(resp) {
  if (resp.ok) return structuredClone(resp.result);
  const e = new Error(resp.error?.message || 'engine error');
  e.detail = resp.error;
  throw e;
}
