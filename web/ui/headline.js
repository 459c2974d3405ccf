// The headline over the timelines: how much faster continuous batching is, in time and in passes.

import { fmt } from '../draw/format.js';
import { $ } from './dom.js';

/** base: the compared pair [baseline, improved] (the schema's base schedulers, in order). */
export function renderHeadline(cmp, [slow, fast]) {
  const sp = cmp.speedup || {};
  const set = (id, v) => { const e = $(id); e.dataset.value = v == null ? '' : String(v); e.textContent = v == null ? '–' : v.toFixed(2); };
  set('hl-speedup', sp.time);
  set('hl-speedup-passes', sp.passes);
  $('hl-passes-cont').textContent = fmt(cmp[fast].metrics.passes);
  $('hl-passes-static').textContent = fmt(cmp[slow].metrics.passes);
}

/** The note under the headline: "simulating…" while the engine is asked, or why a run failed
 *  (bad = true); null hides it. */
export function showNote(text, bad = false) {
  const wait = $('timeline-wait');
  wait.textContent = text || '';
  wait.classList.toggle('bad', !!text && bad);
  wait.hidden = !text;
}
