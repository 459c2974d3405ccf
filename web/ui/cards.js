// Metric cards: one card per idea, a row per scheduler, each number carrying the test hook
// data-metric="<scheduler>.<path>" and data-value=String(exact number).

import { el } from './dom.js';
import { fmt, fmtPct, fmtPctColumn, fmtTime } from '../draw/format.js';
import { getPath } from '../state/schema.js';
import { schedulerLabel } from '../state/context.js';

function card(title, what, ...body) {
  return el('article', { class: 'card' }, el('h4', { text: title }), el('p', { class: 'what', text: what }), ...body);
}

function metricCell(sched, path, value, text, cls) {
  return el('td', { 'data-metric': `${sched}.${path}`, 'data-value': value == null ? '' : String(value), class: cls, text });
}

function schedCell(s) {
  return el('td', { class: 'sched' }, el('i', { class: `sched-dot sched-${s}`, 'aria-hidden': 'true' }), document.createTextNode(s));
}

/** A table: columns = metric paths, rows = schedulers; `corner` heads the schedulers' column (a
 *  time table's unit). */
function table(cmp, scheds, cols, format, corner = '') {
  const head = el('tr', {}, el('th', { class: 'unit', text: corner }), ...cols.map((c) => el('th', { text: c.label })));
  // a column of shares (pct) with one number of decimals
  const formats = cols.map((c) => (c.pct ? fmtPctColumn(scheds.map((s) => getPath(cmp[s].metrics, c.path))) : c.format || format));
  const rows = scheds.map((s) => el('tr', {}, schedCell(s),
    ...cols.map((c, i) => { const v = getPath(cmp[s].metrics, c.path); return metricCell(s, c.path, v, formats[i](v), c.cls); })));
  return el('table', {}, el('thead', {}, head), el('tbody', {}, ...rows));
}

const LIMIT_WORDS = { ttft_ms: 'TTFT', tpot_ms: 'TPOT', e2el_ms: 'E2E latency' };

/** A table of times in one unit, named once in its corner ("ms", or "s" when any is a second or
 *  more; the cost unit otherwise): the cells stay numbers, so four columns fit a third of 820 px. */
function timeTable(cmp, scheds, cols, unit) {
  const values = scheds.flatMap((s) => cols.map((c) => getPath(cmp[s].metrics, c.path))).filter((v) => v != null);
  const secs = unit === 'ms' && values.some((v) => Math.abs(v) >= 1000);
  return table(cmp, scheds, cols, (v) => (v == null ? '–' : fmt(secs ? v / 1000 : v)), secs ? 's' : unit);
}

/** One scheduler's SLO verdict in words: "meets" or "fails: TTFT (62% within)". */
export function sloVerdict(m) {
  const v = m.slo;
  if (!v) return '';
  if (v.meets) return 'meets';
  const why = v.failing.map((k) => (k === 'together' ? 'the limits together' : `${LIMIT_WORDS[k] || k} (${fmtPct(v.limits[k])} within)`));
  return `fails: ${why.join(', ')}`;
}

/** The lanes the numbers compare, by their labels: "A vs B", or "A, B and C". */
export function lanesInWords(shown, schedulers) {
  const label = (s) => schedulerLabel(schedulers, s);
  return shown.length > 2 ? `${shown.slice(0, -1).map(label).join(', ')} and ${label(shown.at(-1))}` : shown.map(label).join(' vs ');
}

/** The headline's speedup, in the passes card (the metrics figure embedded alone shows no
 *  headline): static's time and passes over continuous's, with the headline's hooks. */
function speedupLine(sp) {
  const x = (path, v) => el('b', { 'data-metric': `speedup.${path}`, 'data-value': v == null ? '' : String(v), text: v == null ? '–' : `×${v.toFixed(2)}` });
  return el('p', { class: 'speedup-line' }, document.createTextNode('Continuous batching is '), x('time', sp.time),
    document.createTextNode(' as fast as static in time, '), x('passes', sp.passes), document.createTextNode(' in passes.'));
}

/** sloFields: the scenario's SLO fields (their labels; values read from the result's scenario). */
export function renderCards(container, cmp, scheds, sloFields) {
  const first = cmp[scheds[0]];
  const unit = first.unit;
  const time = (v) => fmtTime(v, unit);
  const limits = sloFields.filter((f) => f.unit === 'ms' && getPath(first.scenario, f.path) != null)
    .map((f) => `${f.label.replace(/ limit$/, '')} ≤ ${time(getPath(first.scenario, f.path))}`);
  const target = first.scenario.slo?.attainment;
  const cards = [];

  const passes = card('Forward passes', 'Passes the GPU ran to serve every request; fewer passes, same work.',
    table(cmp, scheds, [{ label: 'passes', path: 'passes', cls: 'big' }, { label: 'output tokens', path: 'output_tokens' }], fmt));
  if (cmp.speedup) passes.append(speedupLine(cmp.speedup));
  cards.push(passes);

  // Utilization with the four slot-step shares.
  const share = el('div', {});
  for (const s of scheds) {
    const m = cmp[s].metrics;
    const bar = el('div', { class: 'sharebar', role: 'img', 'aria-label': `${s}: useful ${fmtPct(m.shares.useful)}, prefill ${fmtPct(m.shares.prefill)}, padding ${fmtPct(m.shares.padding)}, idle ${fmtPct(m.shares.idle)}` });
    for (const k of ['useful', 'prefill', 'padding', 'idle']) {
      const i = el('i', { class: `s-${k}` });
      i.style.width = `${100 * (m.shares[k] || 0)}%`;
      bar.append(i);
    }
    share.append(el('table', {}, el('tbody', {},
      el('tr', {}, schedCell(s), metricCell(s, 'utilization', m.utilization, fmtPct(m.utilization), 'big')))), bar);
  }
  const shareKinds = ['useful', 'prefill', 'padding', 'idle'];
  const shareShow = Object.fromEntries(shareKinds.map((k) => [k, fmtPctColumn(scheds.map((s) => cmp[s].metrics.shares[k]))]));
  const shareTable = el('table', {}, el('thead', {}, el('tr', {}, el('th', {}), ...shareKinds.map((k) => el('th', { text: k })))),
    el('tbody', {}, ...scheds.map((s) => el('tr', {}, schedCell(s),
      ...shareKinds.map((k) => metricCell(s, `shares.${k}`, cmp[s].metrics.shares[k], shareShow[k](cmp[s].metrics.shares[k])))))));
  const util = card('Utilization', 'Share of slot-steps (one slot during one pass) that emit a token. The rest is prefill, padding (slot held, no token) or idle (slot empty).',
    el('div', { class: 'util-grid' }, share, shareTable));
  util.classList.add('wide');
  cards.push(util);

  // With what `vllm bench serve` prints (request and total token throughput, peak concurrency),
  // so a run can be held against a real benchmark's numbers.
  cards.push(card('Throughput (vllm bench serve)', 'Output tokens, all tokens (prompt + output) and requests per second of simulated time; the time until the last request is done; most requests in flight at once (arrived, not done) and most in a slot.',
    table(cmp, scheds, [{ label: 'output tok/s', path: 'throughput_tok_s', cls: 'big', format: fmt }, { label: 'total tok/s', path: 'total_token_throughput_tok_s' },
      { label: 'req/s', path: 'served_rps' }], fmt),
    table(cmp, scheds, [{ label: 'makespan', path: 'makespan', format: time }, { label: 'peak conc.', path: 'peak_concurrency' },
      { label: 'peak run.', path: 'peak_running' }], fmt)));

  const pct = (key) => [{ label: 'p50', path: `${key}.p50` }, { label: 'p95', path: `${key}.p95` }, { label: 'p99', path: `${key}.p99` }, { label: 'mean', path: `${key}.mean` }];
  cards.push(card('Time to first token (TTFT)', 'Arrival to first token: waiting for a slot plus prefill.', timeTable(cmp, scheds, pct('ttft'), unit)));
  cards.push(card('Time per output token (TPOT)', 'Per request: (last token − first token) / (out − 1), the pace of a stream once it started.', timeTable(cmp, scheds, pct('tpot'), unit)));
  cards.push(card('Inter-token latency (ITL)', 'Every gap between two tokens of a request, pooled: the stutters a reader sees.', timeTable(cmp, scheds, pct('itl'), unit)));
  cards.push(card('End-to-end latency', 'Arrival to last token, per request.', timeTable(cmp, scheds, pct('e2e'), unit)));
  const good = card('Goodput and the SLO', `A request is within the SLO when it meets every limit (${limits.join(', ') || 'none set'}); the setting meets the SLO when at least ${fmtPct(target)} of requests are.`,
    table(cmp, scheds, [{ label: 'req/s', path: 'goodput_rps', cls: 'big' }, { label: 'within SLO', path: 'slo_attainment', pct: true }], fmt));
  for (const s of scheds) {
    const m = cmp[s].metrics;
    good.append(el('p', { class: `verdict ${m.meets_slo ? 'good' : 'bad'}` }, document.createTextNode(`${s}: `),
      el('span', { 'data-metric': `${s}.meets_slo`, 'data-value': String(m.meets_slo), text: sloVerdict(m) })));
  }
  cards.push(good);
  const kvCols = [{ label: 'KV peak (tokens)', path: 'kv_peak_tokens' }, { label: 'preemptions', path: 'preemptions' }];
  if (scheds.some((s) => cmp[s].metrics.prefix_hit_rate != null)) kvCols.push({ label: 'prefix hits', path: 'prefix_hit_rate', pct: true });
  const kvCard = card('KV cache', 'Most KV in use at once (vllm: tokens in allocated blocks), requests preempted because the pool ran out, and (vllm) the share of prompt tokens the prefix cache served.',
    table(cmp, scheds, kvCols, fmt));
  for (const s of scheds) {     // a policy's own counters (vllm: recompute and swap)
    const m = cmp[s].metrics;
    if (m.recomputed_tokens == null) continue;
    kvCard.append(el('p', { class: 'what' }, document.createTextNode(`${s}: `),
      el('span', { 'data-metric': `${s}.recomputed_tokens`, 'data-value': String(m.recomputed_tokens), text: fmt(m.recomputed_tokens) }),
      document.createTextNode(' tokens computed again after preemption (the prefix cache keeps some); swap transfers '),
      el('span', { 'data-metric': `${s}.swap_ms`, 'data-value': String(m.swap_ms), text: fmtTime(m.swap_ms, unit) }),
      document.createTextNode('.')));
  }
  cards.push(kvCard);
  container.replaceChildren(...cards);
}
