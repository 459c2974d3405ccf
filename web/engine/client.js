// The page's only door to the engine: py_engine in Pyodide, hosted by a SharedWorker (one Python
// for every page of this site, so several embedded figures boot it once) or, where the browser has
// none or refuses one, by a dedicated Web Worker.
//
//   const client = startEngine({ onStatus });   // onStatus may also be set later: client.onStatus = fn
//                                                 (it is called at once with the current status)
//   client.status   -> { stage: "download"|"start"|"engine"|"ready"|"failed", progress, detail,
//                        via: "snapshot"|"fresh"|null, clients, shared }
//   client.ready    -> Promise; resolves when the engine answers, rejects (Error with .detail)
//   client.call(method, params, { signal, onProgress }) -> Promise<result>; rejects with an Error
//                      whose .detail is the protocol error {type, field, value, allowed, message};
//                      aborting the signal cancels the call in the engine (detail.type "Cancelled");
//                      onProgress({done, total, unit}) while a long call works (the engine's own
//                      count: requests finished of total; protocol Job.progress)
//   client.cached   -> Promise<number>: how many of this build's runtime files are in Cache
//                      Storage: all of them, or 0 (none, or storage refused: a cross-site frame)
//   client.jobs()   -> Promise<{pages, queued, running, done, dropped}>: the host's work (a test hook)
//   client.terminate() -> disconnects; pending and later calls reject
//
// Every promise settles: worker errors, load failures and stalls all end in stage "failed".
//
// A shared engine must not work for a page that has gone: the page says goodbye on pagehide, and
// holds a Web Lock for as long as it lives, which the host also asks for, so a tab that never said
// goodbye (killed, crashed) is noticed too. A page that comes back from the back/forward cache
// sends its unanswered calls again.
//
// Shared or dedicated: inside a frame of another site, browsers that partition storage (Safari by
// default, Brave, Chromium's third-party storage blocking, incognito) refuse the SharedWorker, and
// Cache Storage with it. A SharedWorker that fails before it has said anything is replaced by a
// dedicated Worker; that one keeps its downloads in memory when Cache Storage is refused.

const STALL_MS = 60000; // no status at all for this long while loading = failed, not a hang

function engineError(message, type = 'EngineError') {
  return { type, field: null, value: null, allowed: null, message };
}

function toError(detail) {
  const err = new Error(detail.message || 'engine error');
  err.detail = detail;
  return err;
}

/** A SharedWorker, or null where the browser has none or refuses one at once. */
function sharedWorker(name) {
  if (typeof SharedWorker !== 'function') return null;
  try {
    return new SharedWorker(new URL('./shared.js', import.meta.url), { type: 'module', name });
  } catch {
    return null;   // e.g. a SecurityError in a partitioned third-party frame
  }
}

/** Hold a Web Lock for as long as this page lives; the host asks for it too, and gets it when the
 *  page is gone. -> a function that lets it go (terminate), or null where there are no locks. */
function holdLifeLock(lockName, onHeld) {
  if (!globalThis.navigator?.locks) return null;
  let release;
  const held = new Promise((res) => { release = res; });
  try {
    navigator.locks.request(lockName, () => { onHeld(); return held; }).catch(() => {});
  } catch {
    return null;   // storage refused in this context: the pagehide goodbye still works
  }
  return release;
}

export function startEngine({ onStatus = () => {}, shared = typeof SharedWorker === 'function', name = 'cbx-engine' } = {}) {
  const pending = new Map();   // id -> {resolve, reject, message, onProgress}
  let nextId = 1;
  let failure = null;
  let heard = false;           // the worker has said something (a SharedWorker that did is not replaced)
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

  let worker, port, releaseLock = null;
  const pageLock = `cbx-page-${globalThis.crypto?.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;
  const post = (msg) => { try { port.postMessage(msg); } catch { /* closed */ } };
  const goodbye = () => { if (shared && !failure) post({ bye: true }); };
  const welcomeBack = (ev) => {        // back from the back/forward cache: the host dropped our work
    if (!ev.persisted || !shared || failure) return;
    post({ page: pageLock });
    resendPending();
  };
  const resendPending = () => { for (const [id, p] of pending) post({ id, ...p.message }); };

  const fail = (message) => {
    if (failure) return;
    goodbye();
    failure = engineError(message);
    clearInterval(watchdog);
    releaseLock?.();
    globalThis.removeEventListener?.('pagehide', goodbye);
    globalThis.removeEventListener?.('pageshow', welcomeBack);
    if (shared) port.close(); else worker.terminate();
    setStatus({ ...status, stage: 'failed', detail: message });
    rejectReady(toError(failure));
    for (const { reject } of pending.values()) reject(toError(failure));
    pending.clear();
  };

  const onMessage = (ev) => {
    const msg = ev.data;
    heard = true;
    lastHeard = Date.now();
    if (msg.kind === 'status') {
      if (msg.stage === 'failed') return fail(msg.detail);
      setStatus(msg);
      if (msg.stage === 'ready') { clearInterval(watchdog); resolveReady(); }
    } else if (msg.kind === 'cached') {
      resolveCached(msg.stored);
    } else if (msg.kind === 'log') {
      (msg.level === 'error' ? console.error : console.warn)(`[engine] ${msg.text}`);
    } else if (msg.kind === 'progress') {
      const p = pending.get(msg.id);
      try { p?.onProgress?.({ done: msg.done, total: msg.total, unit: msg.unit }); } catch (e) { console.error(e); }
    } else if (msg.kind === 'reply') {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      const resp = msg.response;
      if (resp.ok) p.resolve(resp.result);
      else p.reject(toError(resp.error || engineError('engine error without detail')));
    }
  };

  function connectDedicated() {
    shared = false;
    worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    port = worker;
    wire();
  }

  function wire() {
    port.onmessage = onMessage;
    port.onmessageerror = () => fail('the engine worker sent a message that could not be read');
    // A worker that cannot even start (its script or an import missing, a CSP block) only fires
    // this; so does a SharedWorker the browser refuses here (a partitioned cross-site frame).
    worker.onerror = (ev) => {
      ev.preventDefault?.();
      if (shared && !heard && !failure) {
        port.close();
        releaseLock?.();
        releaseLock = null;
        connectDedicated();
        resendPending();
        setStatus({ ...status, detail: 'a shared worker was refused here: starting a dedicated one' });
        return;
      }
      fail(`the engine worker stopped: ${ev.message || 'its script could not be loaded'}`);
    };
    if (shared) {
      const sharedPort = port;
      sharedPort.start();
      releaseLock = holdLifeLock(pageLock, () => sharedPort.postMessage({ page: pageLock }));
    }
  }

  if (shared) {
    worker = sharedWorker(name);
    if (worker) { port = worker.port; wire(); } else connectDedicated();
  } else {
    connectDedicated();
  }
  globalThis.addEventListener?.('pagehide', goodbye);
  globalThis.addEventListener?.('pageshow', welcomeBack);

  const watchdog = setInterval(() => {
    if (Date.now() - lastHeard > STALL_MS) {
      fail(`no progress for ${STALL_MS / 1000} s while in stage "${status.stage}" (${status.detail})`);
    }
  }, 1000);

  setStatus(status);

  function request(message, { signal, onProgress } = {}) {
    if (failure) return Promise.reject(toError(failure));
    // cancelled before it was sent (while waiting for the engine to load): never sent
    if (signal?.aborted) return Promise.reject(toError(engineError('cancelled', 'Cancelled')));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, message, onProgress });
      post({ id, ...message });
      signal?.addEventListener('abort', () => {
        if (!pending.has(id)) return;
        pending.delete(id);
        post({ cancel: id });
        reject(toError(engineError('cancelled', 'Cancelled')));
      }, { once: true });
    });
  }

  return {
    get status() { return status; },
    set onStatus(fn) { setListener(fn); },
    ready,
    cached,
    call(method, params = {}, options = {}) { return request({ method, params }, options); },
    jobs() { return request({ host: 'jobs' }); },
    terminate() { fail('the engine was stopped'); },
  };
}
