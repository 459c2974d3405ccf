// The two sweeps: which engine call makes each point, what a point's answer means, and how the
// chart draws it. The page runs them point by point (one call per value) so they can be cancelled
// and the UI never waits on a whole sweep.

import { lineChart } from './charts.js';
import { theme, fmtTime } from './canvas-kit.js';
import { sweepRequest } from './state.js';

export const SKEWS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
export const SLOTS = [1, 2, 4, 8, 16, 32, 64, 128];
const TTFT_COLOR = '#D55E00';

export function skewRequest(base, skew) { return sweepRequest(base, 'skew', skew); }
/** [speedup in time, speedup in passes] of one skew point. */
export function skewPoint(res) {
  const p = res?.points?.[0];
  return [p?.speedup?.time ?? null, p?.speedup?.passes ?? null];
}

export function slotsRequest(base, slots, sched) { return sweepRequest(base, 'slots', slots, [sched]); }
/** [throughput tok/s, p95 TTFT, meets the SLO] of one slots point for the chosen scheduler.
 *  meets_slo is the engine's verdict (p95 TTFT and p95 TBT within the SLO, compared in ticks). */
export function slotsPoint(res, sched) {
  const m = res?.points?.[0]?.[sched];
  return [m?.throughput_tok_s ?? null, m?.ttft?.p95 ?? null, m?.meets_slo ?? null];
}

/** pts: [[skew, speedupTime, speedupPasses], ...] */
export function drawSkew(canvas, pts, current) {
  const t = theme();
  const near = pts.reduce((b, p) => (b == null || Math.abs(p[0] - current) < Math.abs(b[0] - current) ? p : b), null);
  lineChart(canvas, {
    height: 240,
    x: { label: 'length skew (0 = identical lengths)', min: 0, max: 0.9, fmt: (v) => v.toFixed(1) },
    y: { label: 'speedup ×', min: 0, fmt: (v) => `×${v.toFixed(v < 10 ? 1 : 0)}` },
    series: [
      { name: 'in time', color: t.accent, points: pts.map((p) => [p[0], p[1], near && p[0] === near[0] && p[1] != null ? `×${p[1].toFixed(2)}` : '']) },
      { name: 'in passes', color: '#E69F00', dash: [4, 3], points: pts.map((p) => [p[0], p[2]]) },
    ],
    hlines: [{ y: 1, label: '×1: no gain', color: t.muted }],
    marks: current != null ? [{ x: Math.min(0.9, current), label: `this scenario: skew ${current}`, color: t.ink, row: 1 }] : [],
    pending: SKEWS.filter((x) => !pts.some((p) => p[0] === x)),
  });
}

/** Keep the SLO line readable: a queue-bound TTFT at 1 slot can be 100× the SLO. */
export function ttftAxisMax(values, slo) {
  const v = values.filter((x) => x != null);
  if (!v.length) return undefined;
  const top = Math.max(...v);
  const cap = Math.max(4 * slo, 1.2 * Math.min(...v));
  return top > cap ? cap : undefined;
}

/** The largest slots value that meets the SLO, p95 TTFT and p95 TBT both (the engine's meets_slo). */
export function largestMeetingSLO(pts, slo) {
  const ok = pts.filter((p) => (p[3] != null ? p[3] : p[2] != null && p[2] <= slo));
  return ok.length ? Math.max(...ok.map((p) => p[0])) : null;
}

/** pts: [[slots, throughput, p95 TTFT, meets SLO], ...]; marks the current setting and the largest that meets the SLO. */
export function drawSlots(canvas, pts, { slo, slots, unit }) {
  const t = theme();
  const best = largestMeetingSLO(pts, slo);
  lineChart(canvas, {
    height: 240,
    x: { label: 'slots (max_num_seqs)', min: 1, max: SLOTS[SLOTS.length - 1], log2: true, ticks: SLOTS, fmt: String },
    y: { label: 'throughput (tok/s)', min: 0, color: t.accent },
    y2: { label: `p95 TTFT (${unit})`, min: 0, color: TTFT_COLOR, max: ttftAxisMax(pts.map((p) => p[2]), slo) },
    series: [
      { name: 'throughput', color: t.accent, points: pts.map((p) => [p[0], p[1]]), highlight: slots },
      { name: 'p95 TTFT', color: TTFT_COLOR, axis: 'y2', points: pts.map((p) => [p[0], p[2]]), highlight: slots },
    ],
    hlines: [{ y: slo, axis: 'y2', label: `TTFT SLO ${fmtTime(slo, unit)}`, color: t.bad, align: 'left' }],
    marks: best != null ? [{ x: best, label: `largest that meets the SLO: ${best}`, color: t.good }] : [],
    pending: SLOTS.filter((x) => !pts.some((p) => p[0] === x)),
  });
  canvas.setAttribute('aria-label', best != null
    ? `Throughput and p95 TTFT versus slots; ${best} slots is the largest setting that meets the TTFT SLO`
    : 'Throughput and p95 TTFT versus slots; no setting meets the TTFT SLO');
  canvas.dataset.best = best == null ? '' : String(best);
  return best;
}
