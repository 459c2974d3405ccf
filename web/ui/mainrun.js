// The main comparison's engine run: one at a time, and changes that arrive meanwhile collapse into
// one more run (latest wins); while it waits the figures say "computing…" (no engine yet) or, after
// a moment, "simulating…" with a Cancel button (Escape too). The page says what to run and what
// to do with the answer; this module says when, and what the figures show meanwhile.

import { coalesce, latest } from '../engine/latest.js';
import { showNote, markStale, STALE } from './headline.js';
import { $ } from './dom.js';

/**
 * source: the engine (engine/source.js); root: <html> (data-busy, a test / bench hook, is set until
 * the latest values are drawn); request(): the main request for the page's state now;
 * onResult({cmp, req, fromSnapshot}): the answer for the latest values; onKeep(): draw again the
 * last answer kept (after a refusal; not an answer: no test hook moves);
 * onError(detail): the engine refused the values or failed (the page says where and why).
 * Returns {run(): a promise settled once the latest values are answered, settled(): the run in
 * flight, cancel(): stop a long run (false when none)}.
 */
export function createMainRun({ source, root, request, onResult, onKeep, onError }) {
  const runs = latest();
  let inflight = null;
  let kept = false;                  // an answer is kept in the page (a refused run draws it again)

  async function compute() {
    const token = runs.start();
    const req = request();
    const fromSnapshot = !source.live && source.hasSnapshot(req.method, req.params);
    if (!source.live && !fromSnapshot) markStale(source.failed ? STALE.failed : STALE.waiting);
    const busy = source.live ? setTimeout(() => { if (!token.stale) markStale(STALE.busy); }, STALE.busyAfterMs) : null;
    inflight = (async () => {
      let note = null;
      try {
        const tCall = performance.now();
        const cmp = await source.call(req.method, req.params, { signal: token.signal });
        performance.measure('cbx:engine', { start: tCall, end: performance.now() });
        if (token.stale) return;
        kept = true;
        onResult({ cmp, req, fromSnapshot });
      } catch (err) {
        if (token.stale) return;
        const d = err.detail || { message: err.message };
        // a refusal is an answer: never "computing…" or "simulating…" (with a Cancel that does
        // nothing) after it; the last good result is drawn again, or the figures say why not
        if (source.failed) markStale(STALE.failed);
        else if (kept) onKeep();
        else markStale(STALE.refused);
        onError(d);
        note = `Not simulated: ${d.message}${kept && !source.failed ? ' — still showing the last good result.' : ''}`;
      } finally {
        clearTimeout(busy);
        if (!token.stale) showNote(note, true);
      }
    })();
    await inflight;
  }

  /** The reader stops a long run: the engine drops it between two slices of work. */
  function cancel() {
    if (root.dataset.stale !== STALE.busy) return false;
    runs.cancel();
    markStale(STALE.cancelled);
    showNote('Cancelled: the engine stopped that run; change a value to simulate again.');
    return true;
  }
  $('btn-cancel-run').addEventListener('click', cancel);

  const run = coalesce(compute, {
    onBusy: () => { root.dataset.busy = '1'; },
    onIdle: () => { delete root.dataset.busy; },
  });
  return { run, cancel, settled: () => inflight };
}
