// The policy lab's engine: a reader's own scheduler (scheduler = custom, SPEC §10) runs in a Python
// of its own, a dedicated worker (engine/worker.js, restored from the build's memory snapshot like
// every engine), never in the shared engine the other figures use: their runs go on whatever the
// reader's code does.
//
// Stopping code that never returns: Python in Pyodide has no signals, and the interrupt buffer
// needs a SharedArrayBuffer, which only cross-origin-isolated pages get (static hosts cannot send
// the headers; TOOLCHAIN.md). So while a call runs, the lab pings the worker's host (its `jobs`
// hook); the host answers between two slices of work (about 30 ms each, engine/host.js), so no
// answer for STUCK_MS means that one call of the reader's code has not returned. Then the worker
// is terminated, the call fails with a ScenarioError on custom.code, and the next call starts a
// fresh worker (restored from the snapshot in about a second). The same code asked again (a sweep
// of the same scenario) is refused at once with the same message rather than stopped again.
//
//   const lab = createLabEngine();
//   lab.runsCustom(method, params) -> does this request run the reader's code?
//   lab.call(method, params, { signal, onProgress }) -> as client.call (engine/client.js)
//   lab.onAnswer(fn)  fn({ method, params, error, result }) after every call (error: the protocol
//                     error or null)
//   lab.stops         how many workers were stopped so far (test hooks: <html data-lab-stops>, and
//                     data-lab-stop-ms: from the call to the stop, the last time)

import { startEngine } from './client.js';

// The protocol's name of the reader's scheduler (py_engine.policies.CUSTOM).
export const LAB_SCHEDULER = 'custom';
// Natively a hook is stopped after 2 s (policies/custom.py HOOK_SECONDS); the page stops it
// within 2 s: no answer for this long, pinged this often.
const STUCK_MS = 1500;
const PING_MS = 250;
// A test may lengthen the limit (globalThis.__cbxLabStuckMs, set before the page loads) to show,
// without racing the machine's load, that the shared engine answers while the lab's code is stuck.
const stuckMs = () => globalThis.__cbxLabStuckMs ?? STUCK_MS;

function stuckError() {
  const e = new Error(`custom.code: the policy did not return within ${STUCK_MS / 1000} s (an endless loop?); `
    + 'its engine was stopped and a fresh one started for the next run');
  e.detail = { type: 'ScenarioError', field: 'custom.code', value: null, allowed: 'a policy whose hooks return', message: e.message };
  return e;
}

export function createLabEngine({ start = () => startEngine({ shared: false, name: 'cbx-lab' }), root = globalThis.document?.documentElement } = {}) {
  let client = null;
  let stuckCode = null;          // the code whose call was stopped last
  const listeners = new Set();
  const lab = { stops: 0 };

  const engine = () => (client ??= start());

  /** Race the call against the worker going silent; a silent worker is ended and forgotten. */
  async function watched(c, method, params, options) {
    let timer = null;
    const stuck = new Promise((_, reject) => {
      const began = Date.now();
      let heard = began;
      let asking = false;
      timer = setInterval(() => {
        if (Date.now() - heard > stuckMs()) {
          clearInterval(timer);
          if (client === c) client = null;
          lab.stops++;
          stuckCode = params?.scenario?.custom?.code ?? null;
          if (root) Object.assign(root.dataset, { labStops: String(lab.stops), labStopMs: String(Date.now() - began) });
          reject(stuckError());     // first: ending the worker rejects the call too ("stopped")
          c.terminate();
          return;
        }
        if (asking) return;
        asking = true;
        c.jobs().then(() => { heard = Date.now(); asking = false; }, () => {});
      }, PING_MS);
    });
    try {
      return await Promise.race([c.call(method, params, options), stuck]);
    } finally {
      clearInterval(timer);
    }
  }

  lab.runsCustom = (method, params) => {
    const names = params?.schedulers || (method === 'simulate' ? [params?.scenario?.scheduler] : []);
    return names.includes(LAB_SCHEDULER);
  };

  lab.call = async (method, params, options = {}) => {
    let error = null, result = null;
    try {
      if (stuckCode != null && params?.scenario?.custom?.code === stuckCode) throw stuckError();
      const c = engine();
      await c.ready;
      result = await watched(c, method, params, options);
      return result;
    } catch (e) {
      error = e.detail || { type: 'EngineError', message: e.message };
      throw e;
    } finally {
      for (const fn of listeners) fn({ method, params, error, result });
    }
  };

  lab.onAnswer = (fn) => { listeners.add(fn); };
  return lab;
}
