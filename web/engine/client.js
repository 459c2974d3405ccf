// The page's only door to the engine: py_engine in Pyodide, hosted by a SharedWorker (one Python
// for every page of this site, so several embedded figures boot it once) or, where the browser has
// none, by a dedicated Web Worker.
//
//   const client = startEngine({ onStatus });   // onStatus may also be set later: client.onStatus = fn
//                                                 (it is called at once with the current status)
//   client.status   -> { stage: "download"|"start"|"engine"|"ready"|"failed", progress, detail,
//                        via: "snapshot"|"fresh"|null, clients, shared }
//   client.ready    -> Promise; resolves when the engine answers, rejects (Error with .detail)
//   client.call(method, params, { signal }) -> Promise<result>; rejects with an Error whose
//                      .detail is the protocol error {type, field, value, allowed, message};
//                      aborting the signal cancels the call in the engine (detail.type "Cancelled")
//   client.cached   -> Promise<number>: the runtime files are in Cache Storage (entries)
//   client.terminate() -> disconnects; pending and later calls reject
//
// Every promise settles: worker errors, load failures and stalls all end in stage "failed".

const STALL_MS = 60000; // no status at all for this long while loading = failed, not a hang

function engineError(message, type = 'EngineError') {
  return { type, field: null, value: null, allowed: null, message };
}

function toError(detail) {
  const err = new Error(detail.message || 'engine error');
  err.detail = detail;
  return err;
}

export function startEngine({ onStatus = () => {}, shared = typeof SharedWorker === 'function', name = 'cbx-engine' } = {}) {
  const pending = new Map();
  let nextId = 1;
  let failure = null;
  let status = { stage: 'download', progress: 0, detail: 'starting the worker', via: null, clients: 1, shared };
  let lastHeard = Date.now();
  let resolveReady, rejectReady, resolveCached;
  const ready = new Promise((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => {}); // the failure is reported through status; no unhandled-rejection noise
  const cached = new Promise((res) => { resolveCached = res; });

  const setStatus = (s) => {
    status = Object.freeze({ stage: s.stage, progress: s.progress, detail: s.detail || '', via: s.via ?? null, clients: s.clients ?? 1, shared });
    try { onStatus(status); } catch (e) { console.error(e); }
  };
  const setListener = (fn) => { onStatus = fn; setStatus(status); };

  let worker, port;
  const fail = (message) => {
    if (failure) return;
    failure = engineError(message);
    clearInterval(watchdog);
    if (shared) port.close(); else worker.terminate();
    setStatus({ ...status, stage: 'failed', detail: message });
    rejectReady(toError(failure));
    for (const { reject } of pending.values()) reject(toError(failure));
    pending.clear();
  };

  if (shared) {
    worker = new SharedWorker(new URL('./shared.js', import.meta.url), { type: 'module', name });
    port = worker.port;
  } else {
    worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    port = worker;
  }
  port.onmessage = (ev) => {
    const msg = ev.data;
    lastHeard = Date.now();
    if (msg.kind === 'status') {
      if (msg.stage === 'failed') return fail(msg.detail);
      setStatus(msg);
      if (msg.stage === 'ready') { clearInterval(watchdog); resolveReady(); }
    } else if (msg.kind === 'cached') {
      resolveCached(msg.stored);
    } else if (msg.kind === 'log') {
      (msg.level === 'error' ? console.error : console.warn)(`[engine] ${msg.text}`);
    } else if (msg.kind === 'reply') {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      const resp = msg.response;
      if (resp.ok) p.resolve(resp.result);
      else p.reject(toError(resp.error || engineError('engine error without detail')));
    }
  };
  // A worker that cannot even start (its script or an import missing, a CSP block) only fires this.
  worker.onerror = (ev) => {
    ev.preventDefault?.();
    fail(`the engine worker stopped: ${ev.message || 'its script could not be loaded'}`);
  };
  port.onmessageerror = () => fail('the engine worker sent a message that could not be read');
  if (shared) port.start();

  const watchdog = setInterval(() => {
    if (Date.now() - lastHeard > STALL_MS) {
      fail(`no progress for ${STALL_MS / 1000} s while in stage "${status.stage}" (${status.detail})`);
    }
  }, 1000);

  setStatus(status);

  return {
    get status() { return status; },
    set onStatus(fn) { setListener(fn); },
    ready,
    cached,
    call(method, params = {}, { signal } = {}) {
      if (failure) return Promise.reject(toError(failure));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        port.postMessage({ id, method, params });
        signal?.addEventListener('abort', () => {
          if (!pending.has(id)) return;
          pending.delete(id);
          port.postMessage({ cancel: id });
          reject(toError(engineError('cancelled', 'Cancelled')));
        }, { once: true });
      });
    },
    terminate() { fail('the engine was stopped'); },
  };
}
