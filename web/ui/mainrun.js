// The main comparison's engine run: one at a time, and changes that arrive meanwhile collapse into
// one more run (latest wins); while it waits the figures say "computing…" (no engine yet) or, after
// a moment in the engine, "simulating…" with how far the engine is and the time left
// (ui/runprogress.js). A run in flight has a Cancel button (Escape too), also while it waits for
// the engine to load. The page says what to run and what to do with the answer; this module says
// when, and what the figures show meanwhile.

import { coalesce, latest } from '../engine/latest.js';
import { canonical } from '../engine/requests.js';
import { showNote, markStale, cancellable, CANCELS, STALE } from './headline.js';
import { createEstimate, showProgress } from './runprogress.js';
import { $ } from './dom.js';

/**
 * source: the engine (engine/source.js); root: <html> (data-busy, a test / bench hook, is set until
 * the latest values are drawn); request(): the main request for the page's state now;
 * onResult({cmp, req, fromSnapshot}): the answer for the latest values; onNone(): there is no
 * main run (request() null: an embed of a figure that reads nothing of it); onKeep(): draw again the
 * last answer kept (after a refusal; not an answer: no test hook moves);
 * onError(detail): the engine refused the values or failed (the page says where and why);
 * behind(): is the engine busy with the fleet's run first (a fleet's page: then "simulating…"
 * says so); onCancel(): the reader's Cancel also stops the side figures' runs, so the engine is
 * free as the note says.
 * Returns {run(): a promise settled once the latest values are answered, settled(): the run in
 * flight, cancel(): stop the run in flight (false when none), stopped(): the reader stopped the
 * latest run, whenLive(needed): once the engine
 * is live and the run in flight has settled, run again if needed() (the snapshot's answer, or
 * none) unless the reader cancelled it or the engine refused it (a refusal is deterministic: the
 * same values are refused again, after as long a run)}.
 */
export function createMainRun({ source, root, request, onResult, onNone, onKeep, onError, behind = () => false, onCancel = () => {} }) {
  const runs = latest();
  let inflight = null;
  let running = false;               // the latest run's call has not settled
  let cancelled = false;             // the reader stopped the latest run
  let kept = false;                  // an answer is kept in the page (a refused run draws it again)
  let refused = false;               // the latest run was refused (ScenarioError: the values)
  // the engine's last answer, {key, cmp} or {key, err} (a refusal): the same request again (a
  // change only other figures depend on, e.g. a fleet's router) gets it without a run
  let answered = null;

  async function compute() {
    const token = runs.start();
    cancelled = false;
    refused = false;
    const req = request();
    if (!req) { onNone(); return; }
    const key = canonical(req);
    const lanes = req.params?.schedulers?.length || 1;
    const fromSnapshot = !source.live && source.hasSnapshot(req.method, req.params);
    if (!source.live && !fromSnapshot) markStale(source.failed ? STALE.failed : STALE.waiting);
    // "simulating…" once the engine has had it a moment: from now, or (cold) from when it is live
    let busy = null, busyShown = false, last = null;
    const armBusy = () => {
      if (token.stale || !running) return;
      busy = setTimeout(() => {
        if (token.stale) return;
        markStale(behind() ? STALE.behind : STALE.busy);
        busyShown = true;
        if (last) showProgress(last, lanes);
      }, STALE.busyAfterMs);
    };
    const estimate = createEstimate({ parts: lanes });
    const onProgress = (p) => {   // the engine's own count; drawn once the busy state shows
      if (token.stale) return;
      last = estimate.add(p, performance.now());
      if (busyShown) showProgress(last, lanes);
    };
    running = true;
    if (source.live) armBusy(); else if (!fromSnapshot) source.readyPromise.then(armBusy, () => {});
    inflight = (async () => {
      let note = null;
      try {
        const tCall = performance.now();
        const again = source.live && answered?.key === key ? answered : null;
        if (again?.err) throw again.err;
        const cmp = again ? again.cmp : await source.call(req.method, req.params, { signal: token.signal, onProgress });
        performance.measure('cbx:engine', { start: tCall, end: performance.now() });
        if (!fromSnapshot) answered = { key, cmp };
        if (token.stale) return;
        kept = true;
        onResult({ cmp, req, fromSnapshot });
      } catch (err) {
        if (token.stale) return;
        const d = err.detail || { message: err.message };
        refused = d.type === 'ScenarioError';
        if (!fromSnapshot) answered = refused ? { key, err } : null;
        // a refusal is an answer: never "computing…" or "simulating…" (with a Cancel that does
        // nothing) after it; the last good result is drawn again, or the figures say why not
        if (source.failed) markStale(STALE.failed);
        else if (kept) onKeep();
        else markStale(STALE.refused);
        onError(d);
        note = `Not simulated: ${d.message}${kept && !source.failed ? ' — still showing the last good result.' : ''}`;
      } finally {
        if (!token.stale) running = false;
        clearTimeout(busy);
        if (!token.stale) showNote(note, true);
      }
    })();
    await inflight;
  }

  /** The reader stops the run in flight: the engine drops it between two slices of work (or it
   *  is never sent, when the engine is still loading). */
  function cancel() {
    if (!running || !cancellable()) return false;   // only what the Cancel button offers
    running = false;
    cancelled = true;
    runs.cancel();
    onCancel();
    markStale(STALE.cancelled);
    showNote('Cancelled: that run was stopped and the engine is free; change a value to simulate again.');
    return true;
  }
  for (const id of CANCELS) $(id).addEventListener('click', cancel);

  const run = coalesce(compute, {
    onBusy: () => { root.dataset.busy = '1'; },
    onIdle: () => { delete root.dataset.busy; },
  });

  async function whenLive(needed) {
    await inflight;     // a run that was waiting for the engine is already engine-made
    if (needed() && !cancelled && !refused && request()) await run();   // (none: nothing to ask)
  }
  /** The reader stopped the latest run (Cancel, Escape): nothing else starts until a change. */
  const stopped = () => cancelled;
  return { run, cancel, settled: () => inflight, whenLive, stopped };
}
