// The two sweep figures, drawn from what the engine answers for each point: the speedup sweep
// (continuous over static as one field varies) and the sizing sweep (throughput and a latency
// metric against its SLO, with the engine's verdict per point). What is swept, at which points and
// against which limit comes from the figure's declaration in the schema (py_engine/app/figures.py).

import { lineChart } from '../draw/charts.js';
import { theme } from '../draw/canvas-kit.js';
import { fmtTime, fmtTimeColumn, maxOf } from '../draw/format.js';
import { el } from './dom.js';
import { getPath } from '../state/schema.js';

/** [speedup in time, speedup in passes] of one point's answer. */
export function speedupPoint(res) {
  const p = res?.points?.[0];
  return [p?.speedup?.time ?? null, p?.speedup?.passes ?? null];
}

/** [throughput tok/s, the judged metric, meets the SLO, the failing limits, the point's metrics]. */
export function sizingPoint(res, sched, def) {
  const m = res?.points?.[0]?.[sched];
  return [m?.throughput_tok_s ?? null, m ? getPath(m, def.metric) ?? null : null, m?.meets_slo ?? null,
    m?.slo?.failing ?? [], m ?? null];
}

/** A swept field's name in a sentence, as the engine words it (py_engine/api.py _words). */
export function fieldWords(field) {
  const l = field.label;
  return l.includes('(') ? l.slice(l.indexOf('(') + 1, l.lastIndexOf(')')) : field.path.split('.').pop();
}

const LATENCY = [['ttft', 'slo.ttft_ms', 'p95 TTFT'], ['tpot', 'slo.tpot_ms', 'p95 TPOT'], ['itl', 'slo.tpot_ms', 'p95 ITL']];

/** Each p95 latency as a share of its limit (ITL against the TPOT limit), with the 100% line. */
export function drawLatency(canvas, def, { field, current, values }, pts) {
  const t = theme();
  const hi = def.values[def.values.length - 1];
  const colors = [t.alt, t.accent, t.muted];
  const series = LATENCY.filter(([, lim]) => values[lim] != null && values[lim] > 0).map(([key, lim, name], i) => ({
    name: key === 'itl' ? `${name} (vs TPOT limit)` : name, color: colors[i], dash: key === 'itl' ? [4, 3] : null,
    points: pts.filter((p) => p[5]).map((p) => [p[0], p[5][key].p95 == null ? null : p[5][key].p95 / values[lim]]),
    highlight: current,
  }));
  const top = maxOf(series.flatMap((s) => s.points.map((p) => p[1] ?? 0)), 2);
  const cap = Math.min(top, OFF_SCALE);
  const keys = [];
  if (top > OFF_SCALE) keys.push({ symbol: '▲', text: `beyond ${OFF_SCALE * 100}% (off the scale)` });
  if (current != null && def.values.includes(current)) keys.push({ symbol: '⬤', text: `current: ${current}` });
  lineChart(canvas, {
    height: 200,
    x: { label: field.label, min: def.values[0], max: hi, log2: true, ticks: def.grid ?? def.values, fmt: String },
    y: { label: 'p95 latency, % of its limit', min: 0, max: cap, fmt: (v) => `${Math.round(v * 100)}%` },
    series,
    hlines: [{ y: 1, label: 'at the limit (100%)', color: t.bad, align: 'left' }],
    keys,
    pending: def.values.filter((x) => !pts.some((p) => p[0] === x)),
  });
}
const OFF_SCALE = 4;      // the latency chart's axis stops at 400% of a limit; beyond it: ▲

const LIMIT_WORDS = { ttft_ms: 'TTFT', tpot_ms: 'TPOT', e2el_ms: 'E2E', together: 'together' };

/** pts: [[x, speedupTime, speedupPasses], ...]; `field` is the swept field (its label). */
export function drawSpeedup(canvas, def, field, pts, current) {
  const t = theme();
  const lo = def.values[0], hi = def.values[def.values.length - 1];
  const near = pts.reduce((b, p) => (b == null || Math.abs(p[0] - current) < Math.abs(b[0] - current) ? p : b), null);
  lineChart(canvas, {
    height: 240,
    x: { label: field.label.toLowerCase(), min: lo, max: hi },   // ticks with the decimals they need
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

/** pts: [[x, throughput, metric, meets, failing], ...]; marks the current setting and, once the
 *  engine's verdict is in, the setting it recommends (`recommended`; the advice says why); a point
 *  that fails is labelled with the limits that fail it. */
export function drawSizing(canvas, def, { field, limitField, limit, current, unit, metricLabel, recommended }, pts) {
  const t = theme();
  const best = recommended ?? null;
  const hi = def.values[def.values.length - 1];
  const share = !!def.share;
  // a point that fails the SLO is drawn as ✗; the key names the limits that fail (the latency
  // chart below shows each one), rather than a label on every point over the lines
  const failing = [...new Set(pts.filter((p) => p[3] === false).flatMap((p) => p[4] || []))].map((k) => LIMIT_WORDS[k] || k);
  lineChart(canvas, {
    height: 240,
    x: { label: field.label, min: def.values[0], max: hi, log2: true, ticks: def.grid ?? def.values, fmt: String },
    y: { label: 'throughput (tok/s)', min: 0, color: t.accent },
    // the axis says what it measures; the legend names the line ("within the SLO") once
    y2: share ? { label: '% of requests', min: 0, max: 1, color: t.alt, fmt: (v) => `${Math.round(v * 100)}%` }
      : { label: `${metricLabel} (${unit})`, min: 0, color: t.alt, max: axisMax(pts.map((p) => p[2]), limit) },
    series: [
      { name: 'throughput', color: t.accent, points: pts.map((p) => [p[0], p[1]]), highlight: current },
      { name: metricLabel, color: t.alt, axis: 'y2', points: pts.map((p) => [p[0], p[2], '', p[3] === false]), highlight: current },
    ],
    hlines: [{ y: limit, axis: 'y2', label: share ? `target ${Math.round(limit * 100)}%` : `${limitField.label} ${fmtTime(limit, unit)}`, color: t.bad, align: 'left' }],
    marks: best != null ? [{ x: best, label: `recommended: ${best}`, color: t.good }] : [],
    keys: [
      ...(failing.length ? [{ symbol: '✗', text: `fails the SLO (${failing.join(', ')})`, color: t.alt }] : []),
      ...(current != null && def.values.includes(current) ? [{ symbol: '⬤', text: `current: ${current}` }] : []),
    ],
    pending: def.values.filter((x) => !pts.some((p) => p[0] === x)),
  });
  const none = pts.length === def.values.length && pts.every((p) => p[3] === false);
  canvas.setAttribute('aria-label', `Throughput and ${metricLabel} versus ${field.label}`
    + (best != null ? `; ${best} is the recommended setting` : none ? '; no setting meets the SLO' : ''));
  canvas.dataset.best = best == null ? '' : String(best);
  return best;
}

/** The engine's words (a clause: the CLI writes it after "recommended: ") as a sentence. */
const sentence = (text) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;

/**
 * The sizing advice under the charts: the recommendation in words, a button that applies it, the
 * current setting's verdict, a warning when the load exceeds what is served (with a button that
 * sweeps the field that binds instead, when the figure can: `binds` {path, label}, onSweep), and
 * the table of every point (data-sizing="<x>.<metric>" hooks). stale: the values changed and
 * the figure's new answer is not in yet: its buttons are off.
 */
export function renderAdvice(box, { rec, label, path, current, pts, unit, onApply, binds, onSweep, stale }) {
  const make = el;
  box.replaceChildren();
  if (!rec) return;
  box.append(make('p', { class: 'advice-text', 'data-advice': rec.value == null ? '' : String(rec.value), text: sentence(rec.text) }));
  const cur = pts.find((p) => p[0] === current);
  if (rec.value != null && rec.value !== current) {
    const btn = make('button', { type: 'button', id: 'slots-apply', text: `Apply: ${label} = ${rec.value}` });
    btn.disabled = !!stale;
    btn.addEventListener('click', () => onApply(path, rec.value));
    box.append(btn);
  } else if (rec.value != null) {
    box.append(make('p', { class: 'muted', text: `The current setting (${label} = ${current}) is the recommended one.` }));
  }
  if (cur?.[5] && rec.value !== current) {
    box.append(make('p', { class: cur[3] ? 'muted' : 'bad', text: `Current: ${label} = ${current}, ${cur[3] ? 'meets the SLO' : `fails it: ${cur[5].slo.why}`}.` }));
  } else if (current != null && !cur && rec.value !== current) {
    box.append(make('p', { class: 'muted', text: `Current: ${label} = ${current} (not one of the points swept).` }));
  }
  // the engine's words say what would serve more: a larger setting, the deployment, or the
  // knob that binds instead (rec.binds)
  if (rec.load) box.append(make('p', { class: 'bad', 'data-overloaded': '1', text: `Careful: ${rec.load}.` }));
  if (binds) {
    const btn = make('button', { type: 'button', class: 'sweep-binds', 'data-sweep': binds.path, text: `Sweep ${binds.label}` });
    btn.disabled = !!stale;
    btn.addEventListener('click', () => onSweep(binds.path));
    box.append(btn);
  }
  // each column of times in one unit, chosen from its largest value
  const shown = pts.filter((p) => p[5]).sort((a, b) => a[0] - b[0]);
  const time = Object.fromEntries(['ttft', 'tpot', 'itl'].map((k) => [k, fmtTimeColumn(shown.map((p) => p[5][k].p95), unit)]));
  const head = ['', 'tok/s', 'goodput/s', 'within SLO', 'p95 TTFT', 'p95 TPOT', 'p95 ITL'];
  const rows = shown.map((p) => {
    const m = p[5];
    const cell = (key, v, text) => make('td', { 'data-sizing': `${p[0]}.${key}`, 'data-value': v == null ? '' : String(v), text });
    return make('tr', { class: [p[3] ? 'ok' : 'fail', p[0] === current ? 'current' : ''].join(' ').trim() },
      make('th', p[0] === current ? { text: `${p[0]} ⬤`, title: 'the current setting' } : { text: String(p[0]) }),
      cell('throughput_tok_s', m.throughput_tok_s, Math.round(m.throughput_tok_s).toLocaleString('en-US')),
      cell('goodput_rps', m.goodput_rps, m.goodput_rps.toFixed(3)),
      cell('slo_attainment', m.slo_attainment, `${Math.round(100 * m.slo_attainment)}%`),
      cell('ttft.p95', m.ttft.p95, time.ttft(m.ttft.p95)),
      cell('tpot.p95', m.tpot.p95, time.tpot(m.tpot.p95)),
      cell('itl.p95', m.itl.p95, time.itl(m.itl.p95)));
  });
  // in its own scroller: on a phone the table is wider than the column, the page is not
  box.append(make('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'every point of the sweep' },
    make('table', { class: 'sizing-table' }, make('thead', {}, make('tr', {}, ...head.map((h) => make('th', { text: h })))),
      make('tbody', {}, ...rows))));
}
