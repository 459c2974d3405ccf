// The headline over the timelines: how much faster continuous batching is, in time and in passes.

import { fmt } from '../draw/format.js';
import { $ } from './dom.js';

/** base: the compared pair [baseline, improved] (the schema's base schedulers, in order). */
export function renderHeadline(cmp, [baseline, improved]) {
  const sp = cmp.speedup || {};
  const set = (id, v) => { const e = $(id); e.dataset.value = v == null ? '' : String(v); e.textContent = v == null ? '–' : v.toFixed(2); };
  set('hl-speedup', sp.time);
  // "×1.00 faster" reads oddly: equal lengths or one slot make continuous batching no faster.
  const shown = sp.time == null ? null : sp.time.toFixed(2);
  $('hl-verdict-pre').textContent = shown === '1.00' ? 'no faster (' : '';
  $('hl-verdict').textContent = shown === '1.00' ? ')' : shown != null && sp.time < 1 ? ' as fast (slower)' : ' faster';
  set('hl-speedup-passes', sp.passes);
  $('hl-passes-improved').textContent = fmt(cmp[improved].metrics.passes);
  $('hl-passes-baseline').textContent = fmt(cmp[baseline].metrics.passes);
}

/** A production trace's attribution, wherever its numbers are shown (its license asks: CC BY 4.0, Apache-2.0). */
export function showCredit(cmp) {
  const credit = Object.values(cmp).find((r) => r && r.credit)?.credit || '';
  for (const p of document.querySelectorAll('[data-credit]')) { p.textContent = credit ? `Trace: ${credit}.` : ''; p.hidden = !credit; }
}

/** The note under the headline: why a run failed (bad = true), or null to hide it. */
export function showNote(text, bad = false) {
  const wait = $('timeline-wait');
  wait.textContent = text || '';
  wait.classList.toggle('bad', !!text && bad);
  wait.hidden = !text;
}

export const STALE = {
  waiting: 'computing… (the engine answers as soon as it has loaded)',
  failed: 'not simulated: the engine could not load',
  busy: 'simulating…',
  behind: 'simulating… after the fleet’s run',   // a fleet's page: the engine runs the fleet first
  cancelled: 'cancelled',
  refused: 'not simulated: the engine refused these values (its message says why)',
  busyAfterMs: 300,     // a live run that takes longer than this shows the busy state
};

// The main run's numbers; not those of a figure that blanks its own when its runs change
// (data-own-numbers: the fleet, ui/fleet.js showReqs, whose page draws it before the main answer)
const STALE_METRICS = '[data-metric]:not([data-own-numbers] [data-metric])';

/**
 * The shown numbers no longer belong to the controls (a change the engine has not answered yet):
 * every metric (and every [data-shown] number) is blanked (never the old number under a new
 * control), the figures dim and say `text` ("computing…"). <html data-stale> is the hook. clearStale() when the answer is drawn.
 */
export function markStale(text) {
  const root = document.documentElement;
  if (root.dataset.stale === text) return;
  root.dataset.stale = text;
  // no answer is coming: the label is a line in the figure, not a pill over the note saying why,
  // and the numbers are dashes, not "…" as if one were on its way
  const final = text === STALE.refused || text === STALE.failed;
  if (final) root.dataset.staleFinal = '';
  else delete root.dataset.staleFinal;
  const blank = final ? '–' : '…';
  for (const e of document.querySelectorAll(STALE_METRICS)) { e.dataset.value = ''; e.textContent = blank; }
  for (const e of document.querySelectorAll('[data-shown]')) e.textContent = blank;   // numbers without a metric hook
  for (const e of document.querySelectorAll('.busy-label')) e.textContent = text;
  const status = $('engine-busy');
  if (status) status.textContent = ` · ${text}`;
  // a run in flight can be stopped: in the engine, or before it is sent (the engine loading)
  for (const id of CANCELS) { const b = $(id); if (b) b.hidden = !cancellable(); }
  hideProgress();
}

// the page's Cancel, and an embed's (whose status line is hidden): both stop the main run
export const CANCELS = ['btn-cancel-run', 'btn-cancel-embed'];
/** Is a run in flight whose Cancel is offered (waiting for the engine, or in it)? */
export function cancellable() {
  const s = document.documentElement.dataset.stale;
  return s === STALE.busy || s === STALE.behind || s === STALE.waiting;
}

/** No run's progress on show (ui/runprogress.js shows it). */
function hideProgress() {
  const bar = $('run-progress');
  if (bar) bar.hidden = true;
  const quiet = $('embed-busy');
  if (quiet) quiet.textContent = '';
  delete document.documentElement.dataset.runProgress;
}

export function clearStale() {
  delete document.documentElement.dataset.stale;
  delete document.documentElement.dataset.staleFinal;
  const status = $('engine-busy');
  if (status) status.textContent = '';
  for (const id of CANCELS) { const b = $(id); if (b) b.hidden = true; }
  hideProgress();
}
