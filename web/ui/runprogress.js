// A long run's progress in words: how many requests the engine has finished of how many (its own
// count, read from the simulator: py_engine/sim/progress.py, sent while it works by
// engine/host.js) and about how long is left at the rate measured over the last seconds. Not a
// timer: nothing moves unless the engine said so. createEstimate and progressText are pure (the
// JS tests run them); showProgress writes the status line and the figures' busy labels.

import { fmt } from '../draw/format.js';
import { STALE } from './headline.js';
import { $ } from './dom.js';

const WINDOW_MS = 8000;    // the rate of the last seconds: a compare's lanes run at different speeds
const MIN_SPAN_MS = 1000;  // no estimate before the rate has been measured for this long

/**
 * One run's progress: add({done, total, unit}, nowMs) -> the same with fraction and leftMs (the
 * time left at the measured rate; null until it has been measured). parts: a compare's lanes,
 * which run one after the other, each over total / parts requests, at speeds of their own (the
 * static lane is often much faster than vllm's): the current lane's rest goes at its own rate
 * (measured over the last windowMs), every lane still to come at the slowest lane's seen so far.
 * Between two lanes the engine builds the finished lane's result, counted in no request: the
 * pause that took (beyond its requests) is measured too, and one is added per lane still to end.
 */
export function createEstimate({ windowMs = WINDOW_MS, minSpanMs = MIN_SPAN_MS, parts = 1 } = {}) {
  let samples, part, slowest, lastRate, pauses;   // rates in requests per ms
  const reset = () => { samples = []; part = 0; slowest = Infinity; lastRate = null; pauses = []; };
  reset();
  return {
    reset,
    add(p, now) {
      const k = parts > 1 && p.total % parts === 0 ? parts : 1;
      const n = p.total / k;
      // a smaller count or another total is another run (a call sent again): measure afresh
      const seen = samples[samples.length - 1];
      if (seen && (p.total !== seen.total || p.done < seen.done)) reset();
      const at = Math.min(k - 1, Math.floor(p.done / n));
      const prev = samples[samples.length - 1];
      if (at > part && prev) {                          // a lane ended: keep its rate and pause
        const first = samples[0];
        const rate = prev.t > first.t && prev.done > first.done ? (prev.done - first.done) / (prev.t - first.t) : lastRate;
        if (rate) {
          slowest = Math.min(slowest, rate);
          lastRate = rate;
          pauses.push(Math.max(0, now - prev.t - (p.done - prev.done) / rate));
        }
        samples = [];
      }
      part = at;
      samples.push({ t: now, done: p.done, total: p.total });
      // keep the last sample at or before the window's start, and every one after it
      while (samples.length > 2 && now - samples[1].t >= windowMs) samples.shift();
      const first = samples[0];
      const span = now - first.t, gained = p.done - first.done;
      const rate = span >= minSpanMs && gained > 0 ? gained / span : lastRate;
      let leftMs = null;
      if (rate) {
        const later = (k - 1 - part) * n;              // requests of the lanes still to come
        const pause = pauses.length ? pauses.reduce((a, b) => a + b, 0) / pauses.length : 0;
        leftMs = (Math.min(p.total, (part + 1) * n) - p.done) / rate + later / Math.min(rate, slowest)
          + pause * (k - part);                         // each lane still to end builds its result
      }
      return { ...p, fraction: p.total > 0 ? Math.min(1, p.done / p.total) : 0, leftMs };
    },
  };
}

/** The time left in words: "about 12 s left", "about 1 min 20 s left". */
export function leftText(ms) {
  if (ms == null) return 'estimating the time left';
  const s = ms / 1000;
  if (s < 5) return 'a few seconds left';
  if (s < 60) return `about ${Math.round(s)} s left`;
  let m = Math.floor(s / 60), r = Math.round((s - 60 * m) / 10) * 10;
  if (r === 60) { m += 1; r = 0; }
  return `about ${m} min${r ? ` ${r} s` : ''} left`;
}

/** "7,300 of 10,000 requests (2 lanes × 5,000) · about 12 s left"; lanes: the schedulers the run
 *  compares (a compare's lanes run one after the other, so its total is lanes × requests). */
export function progressText(p, lanes = 1) {
  let text = `${fmt(p.done)} of ${fmt(p.total)} ${p.unit}`;
  if (p.unit === 'requests' && lanes > 1 && p.total % lanes === 0) text += ` (${lanes} lanes × ${fmt(p.total / lanes)})`;
  // the last request is done: the engine builds and sends the result (no count for that)
  return `${text} · ${p.done >= p.total ? 'building the result' : leftText(p.leftMs)}`;
}

/** While the busy state is shown: the progress beside "simulating…" in the status line, a bar
 *  under it, the percentage on the figures. p: createEstimate's answer. */
export function showProgress(p, lanes) {
  const text = progressText(p, lanes);
  const busy = $('engine-busy');
  if (busy) busy.textContent = ` · ${STALE.busy} ${text}`;
  for (const e of document.querySelectorAll('.busy-label')) e.textContent = `${STALE.busy} ${Math.floor(100 * p.fraction)}%`;
  const quiet = $('embed-busy');      // an embed's bar, beside "live engine"
  if (quiet) quiet.textContent = ` · ${STALE.busy} ${text}`;
  const bar = $('run-progress');
  if (bar) { bar.hidden = false; bar.value = p.fraction; }
  document.documentElement.dataset.runProgress = `${p.done}/${p.total}`;   // test hook
}
