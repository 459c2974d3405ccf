// The two sweep figures, drawn from what the engine answers for each point: the speedup sweep
// (continuous over static as one field varies) and the sizing sweep (throughput and a latency
// metric against its SLO, with the engine's verdict per point). What is swept, at which points and
// against which limit comes from the figure's declaration in the schema (py_engine/figures.py).

import { lineChart } from '../draw/charts.js';
import { theme } from '../draw/canvas-kit.js';
import { fmtTime } from '../draw/format.js';

const getPath = (obj, path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);

/** [speedup in time, speedup in passes] of one point's answer. */
export function speedupPoint(res) {
  const p = res?.points?.[0];
  return [p?.speedup?.time ?? null, p?.speedup?.passes ?? null];
}

/** [throughput tok/s, the judged metric, meets the SLO, the failing limits] of one point. */
export function sizingPoint(res, sched, def) {
  const m = res?.points?.[0]?.[sched];
  return [m?.throughput_tok_s ?? null, m ? getPath(m, def.metric) ?? null : null, m?.meets_slo ?? null,
    m?.slo?.failing ?? []];
}

const LIMIT_WORDS = { ttft_ms: 'TTFT', tpot_ms: 'TPOT', e2el_ms: 'E2E', together: 'together' };

/** pts: [[x, speedupTime, speedupPasses], ...]; `field` is the swept field (its label). */
export function drawSpeedup(canvas, def, field, pts, current) {
  const t = theme();
  const lo = def.values[0], hi = def.values[def.values.length - 1];
  const near = pts.reduce((b, p) => (b == null || Math.abs(p[0] - current) < Math.abs(b[0] - current) ? p : b), null);
  lineChart(canvas, {
    height: 240,
    x: { label: field.label.toLowerCase(), min: lo, max: hi, fmt: (v) => v.toFixed(1) },
    y: { label: 'speedup ×', min: 0, fmt: (v) => `×${v.toFixed(v < 10 ? 1 : 0)}` },
    series: [
      { name: 'in time', color: t.accent, points: pts.map((p) => [p[0], p[1], near && p[0] === near[0] && p[1] != null ? `×${p[1].toFixed(2)}` : '']) },
      { name: 'in passes', color: t.alt, dash: [4, 3], points: pts.map((p) => [p[0], p[2]]) },
    ],
    hlines: [{ y: 1, label: '×1: no gain', color: t.muted }],
    marks: current != null ? [{ x: Math.min(hi, current), label: `this scenario: ${field.url} ${current}`, color: t.ink, row: 1 }] : [],
    pending: def.values.filter((x) => !pts.some((p) => p[0] === x)),
  });
}

/** Keep the SLO line readable: a queue-bound TTFT at 1 slot can be 100× the SLO. */
function axisMax(values, limit) {
  const v = values.filter((x) => x != null);
  if (!v.length) return undefined;
  let top = -Infinity, low = Infinity;
  for (const x of v) { if (x > top) top = x; if (x < low) low = x; }
  const cap = Math.max(4 * limit, 1.2 * low);
  return top > cap ? cap : undefined;
}

/** The SLO in words, from the slo fields and their values: "≥ 90% of requests within TTFT ≤ 2,000 ms
 *  and TPOT ≤ 100 ms". */
export function sloRule(fields, values, unit) {
  const slo = fields.filter((f) => f.group === 'slo');
  const limits = slo.filter((f) => f.unit === 'ms' && values[f.path] != null)
    .map((f) => `${f.label.replace(/ limit$/, '')} ≤ ${fmtTime(values[f.path], unit)}`);
  const target = slo.find((f) => f.unit !== 'ms');
  const share = target ? `≥ ${Math.round(values[target.path] * 100)}% of requests` : 'requests';
  return `${share} within ${limits.length ? limits.join(' and ') : 'no limit'}`;
}

/** The largest swept value the engine says meets the SLO. */
function largestMeeting(pts) {
  let best = null;
  for (const p of pts) if (p[3] && (best == null || p[0] > best)) best = p[0];
  return best;
}

/** pts: [[x, throughput, metric, meets, failing], ...]; marks the current setting and the largest
 *  meeting the SLO; a point that fails is labelled with the limits that fail it. */
export function drawSizing(canvas, def, { field, limitField, limit, current, unit, metricLabel }, pts) {
  const t = theme();
  const best = largestMeeting(pts);
  const hi = def.values[def.values.length - 1];
  const share = !!def.share;
  const why = (p) => (p[3] === false && p[4]?.length ? `✗ ${p[4].map((k) => LIMIT_WORDS[k] || k).join('+')}` : '');
  lineChart(canvas, {
    height: 240,
    x: { label: field.label, min: def.values[0], max: hi, log2: true, ticks: def.values, fmt: String },
    y: { label: 'throughput (tok/s)', min: 0, color: t.accent },
    y2: share ? { label: metricLabel, min: 0, max: 1, color: t.alt, fmt: (v) => `${Math.round(v * 100)}%` }
      : { label: `${metricLabel} (${unit})`, min: 0, color: t.alt, max: axisMax(pts.map((p) => p[2]), limit) },
    series: [
      { name: 'throughput', color: t.accent, points: pts.map((p) => [p[0], p[1]]), highlight: current },
      { name: metricLabel, color: t.alt, axis: 'y2', points: pts.map((p) => [p[0], p[2], why(p)]), highlight: current },
    ],
    hlines: [{ y: limit, axis: 'y2', label: share ? `target ${Math.round(limit * 100)}%` : `${limitField.label} ${fmtTime(limit, unit)}`, color: t.bad, align: 'left' }],
    marks: best != null ? [{ x: best, label: `largest that meets the SLO: ${best}`, color: t.good }] : [],
    pending: def.values.filter((x) => !pts.some((p) => p[0] === x)),
  });
  canvas.setAttribute('aria-label', best != null
    ? `Throughput and ${metricLabel} versus ${field.label}; ${best} is the largest setting that meets the SLO`
    : `Throughput and ${metricLabel} versus ${field.label}; no setting meets the SLO`);
  canvas.dataset.best = best == null ? '' : String(best);
  return best;
}
