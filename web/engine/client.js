// The page's only door to the engine: py_engine running in Pyodide in a module Web Worker.
//
//   const client = startEngine({ onStatus });
//   client.status   -> { stage: "download"|"start"|"engine"|"ready"|"failed", progress: 0..1, detail }
//   client.ready    -> Promise, resolves when the engine answers, rejects (Error with .detail) on failure
//   client.call(method, params) -> Promise<result>; rejects with an Error whose .detail is the
//                      protocol error {type, field, value, allowed, message}
//   client.cached  -> Promise<number>: resolves when the verified runtime files are in Cache Storage
//                      (the number of entries; 0 without Cache Storage)
//   client.terminate() -> stops the worker; pending and later calls reject
//
// Every promise settles: worker errors, load failures and stalls all end in stage "failed".

const STALL_MS = 60000; // no status at all for this long while loading = failed, not a hang

function engineError(message) {
  return { type: "EngineError", field: null, value: null, allowed: null, message };
}

function toError(detail) {
  const err = new Error(detail.message || "engine error");
  err.detail = detail;
  return err;
}

export function startEngine({ onStatus = () => {}, workerURL } = {}) {
  const pending = new Map();
  let nextId = 1;
  let failure = null; // protocol error object once failed
  let status = { stage: "download", progress: 0, detail: "starting the worker" };
  let lastHeard = Date.now();
  let resolveReady, rejectReady;
  const ready = new Promise((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => {}); // the failure is reported through status; no unhandled-rejection noise
  let resolveCached;
  const cached = new Promise((res) => { resolveCached = res; });

  const setStatus = (s) => {
    status = Object.freeze({ stage: s.stage, progress: s.progress, detail: s.detail || "" });
    try { onStatus(status); } catch (e) { console.error(e); }
  };

  const fail = (message) => {
    if (failure) return;
    failure = engineError(message);
    clearInterval(watchdog);
    worker.terminate();
    setStatus({ stage: "failed", progress: status.progress, detail: message });
    rejectReady(toError(failure));
    for (const { reject } of pending.values()) reject(toError(failure));
    pending.clear();
  };

  const worker = new Worker(workerURL || new URL("./worker.js", import.meta.url), { type: "module" });

  worker.onmessage = (ev) => {
    const msg = ev.data;
    lastHeard = Date.now();
    if (msg.kind === "status") {
      if (msg.stage === "failed") return fail(msg.detail);
      setStatus(msg);
      if (msg.stage === "ready") { clearInterval(watchdog); resolveReady(); }
    } else if (msg.kind === "cached") {
      resolveCached(msg.stored);
    } else if (msg.kind === "reply") {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      let resp;
      try {
        resp = JSON.parse(msg.json);
      } catch (e) {
        return p.reject(toError(engineError(`unreadable engine reply: ${e.message}`)));
      }
      if (resp.ok) p.resolve(resp.result);
      else p.reject(toError(resp.error || engineError("engine error without detail")));
    }
  };
  // A worker that cannot even start (worker.js or its import missing, a CSP block) only fires this.
  worker.onerror = (ev) => {
    ev.preventDefault();
    fail(`the engine worker stopped: ${ev.message || "worker.js could not be loaded"}`);
  };
  worker.onmessageerror = () => fail("the engine worker sent a message that could not be read");

  const watchdog = setInterval(() => {
    if (Date.now() - lastHeard > STALL_MS) {
      fail(`no progress for ${STALL_MS / 1000} s while in stage "${status.stage}" (${status.detail})`);
    }
  }, 1000);

  setStatus(status);

  return {
    get status() { return status; },
    ready,
    cached,
    call(method, params = {}) {
      if (failure) return Promise.reject(toError(failure));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, method, params });
      });
    },
    terminate() { fail("the engine was stopped"); },
  };
}
