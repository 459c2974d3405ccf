// The fleet figure (figures.fleet in py_engine/app/figures.py): replicas behind a router. Its runs
// (engine/requests.js fleetRequests: the fleet as set, then every router on the same trace) take
// their turn in the side work (ui/sidework.js: one engine call at a time, latest wins,
// cancellable), answered by the build-time snapshot while the engine loads where the page opened
// on a fleet (an embed, a story step), else by the live engine. This module owns the figure's DOM: the
// fleet's numbers (data-metric "fleet.<metric>", "router.<counter>"), a lane per replica with its
// own ("replica<k>.<metric>"), the hover (where a request went and why: the router's scores and
// reason), and the router comparison ("routers.<kind>.<metric>").

import { el, $ } from './dom.js';
import { fmt, fmtPct, fmtPctColumn, fmtTime, fmtTimeColumn, maxOf } from '../draw/format.js';
import { drawLane, drawTimeAxis, timeAxis } from '../draw/fleet.js';
import { fleetView, nearestRequest, slotsOf, routingHint, routerKnobs, routerWords, bestRows } from '../state/fleet.js';
import { requestTip, stateTip } from './fleettips.js';
import { createParts } from './ttftparts.js';
import { getPath } from '../state/schema.js';
import { schedulerLabel } from '../state/context.js';
import { canonical } from '../engine/requests.js';
import { createEstimate, progressText } from './runprogress.js';

// The fleet's numbers: hook name, label, path in the result, format.
const NUMBERS = [
  ['fleet.throughput_tok_s', 'output tok/s', 'metrics.throughput_tok_s', 'num'],
  ['fleet.ttft.p95', 'TTFT p95', 'metrics.ttft.p95', 'time'],
  ['fleet.tpot.p95', 'TPOT p95', 'metrics.tpot.p95', 'time'],
  ['fleet.prefix_hit_rate', 'prefix hits', 'metrics.prefix_hit_rate', 'pct'],
  ['fleet.slo_attainment', 'within the SLO', 'metrics.slo_attainment', 'pct'],
  ['fleet.goodput_per_gpu', 'goodput / GPU (req/s)', 'metrics.goodput_per_gpu', 'num'],
  ['router.load_imbalance', 'load: max / mean', 'router.load_imbalance', 'ratio'],
];
// A replica's numbers: path in its entry, label, format; `opt` ones give way on a narrow screen;
// `pools`: what a pool's replicas show instead (a prefill replica emits no output tokens: its
// work is the prompts, vLLM's "prompt throughput").
const REPLICA = [
  { path: 'requests', label: 'requests', kind: 'num', bar: true },
  { path: 'metrics.throughput_tok_s', label: 'tok/s', kind: 'num', opt: true,
    pools: { prefill: { path: 'metrics.prompt_throughput_tok_s', title: 'prompt tokens per second (a prefill replica emits no output tokens)' } } },
  // in a P/D fleet a replica's own TTFT is its part of the user's: each pool's note says which
  { path: 'metrics.ttft.p95', label: 'TTFT p95', kind: 'time', opt: true, pooledLabel: 'TTFT part p95',
    pools: { prefill: { path: 'metrics.ttft.p95', parts: ['prefill_queue', 'prefill'], from: 'the arrival to its prompt computed' },
      decode: { path: 'metrics.ttft.p95', parts: ['decode_queue', 'first_decode'], from: 'the KV\'s arrival to the first token' } } },
  { path: 'metrics.prefix_hit_rate', label: 'hits', kind: 'pct' },
];
// The router comparison: path in a result, its hook's key, label, which way is better.
const COMPARE = [
  { path: 'metrics.throughput_tok_s', key: 'throughput_tok_s', label: 'tok/s', kind: 'num', better: 'highest' },
  { path: 'metrics.ttft.p95', key: 'ttft.p95', label: 'TTFT p95', kind: 'time', better: 'lowest' },
  { path: 'metrics.slo_attainment', key: 'slo_attainment', label: 'in SLO', kind: 'pct', better: 'highest' },
  { path: 'metrics.prefix_hit_rate', key: 'prefix_hit_rate', label: 'hits', kind: 'pct', better: 'highest' },
  { path: 'router.load_imbalance', key: 'load_imbalance', label: 'max/mean', kind: 'ratio', better: 'lowest' },
];
const WAITING = 'computing… (the engine answers as soon as it has loaded)';

/** A hook: data-metric = name, data-value = the exact number ('' when there is none). */
function metric(tag, name, value, text, attrs = {}) {
  return el(tag, { ...attrs, 'data-metric': name, 'data-value': value == null ? '' : String(value), text });
}

/** A number with a bar of `share` (0..1) before it: a row of a small bar chart. */
function barred(hook, share) {
  const bar = el('i', { class: 'fleet-bar' });
  bar.style.width = `${Math.max(0, Math.min(1, share || 0)) * 100}%`;
  return el('div', { class: 'barred' }, el('span', { class: 'track', 'aria-hidden': 'true' }, bar), hook);
}

/** A lane's height in CSS px for n replicas; `compact`: an embed's share of it (the story's
 *  embed also holds its card). */
function laneHeight(n, compact) {
  const h = n <= 4 ? 30 : n <= 8 ? 24 : n <= 16 ? 18 : 14;
  return compact ? Math.max(12, Math.round(h * compact)) : h;
}

/**
 * ctx: {source, schema, onApply(path, value) (a router's button, the opener), cancel() (the side
 * work's), compact() (an embed: the share of a lane's usual height it gets, else 0),
 * onAnswer(detail) (the fleet's own run answered: detail null, or refused: the engine's error;
 * the cluster's fields are run by this figure alone, so their messages come from here)}.
 * Returns {show(reqs), run(token, reqs), cancelled(), redraw(), exported()}.
 */
export function createFleet(ctx) {
  const { source, schema } = ctx;
  const fig = schema.figures.fleet;
  const routers = new Map((schema.routers || []).map((r) => [r.name, r]));
  const results = new Map();          // canonical request -> result, for the current requests only
  const built = new Set();            // ... of those, the build-time snapshot's answers
  let shown = null;                   // {reqs, res}: what the figure draws
  let key = null;                     // the current requests' key
  let inFlight = null;                // the token whose fleet run (not the routers') is asked
  let lanes = [];                     // [{canvas, k}] of the drawn result
  let axisCanvas = null;              // the time axis under them
  let hoverId = null;
  const box = $('fig-fleet');
  const tip = $('fleet-tip');
  const unit = () => shown?.res?.unit || 'ms';
  const show = (v, kind) => (v == null ? '–' : kind === 'pct' ? fmtPct(v) : kind === 'time' ? fmtTime(v, unit())
    : kind === 'ratio' ? `×${v.toFixed(2)}` : fmt(v));
  // a table's column of values xs: times in one unit (from its largest), so they compare at a glance
  // (shares with one number of decimals)
  const columnShow = (kind, xs) => (kind === 'time' ? fmtTimeColumn(xs, unit()) : kind === 'pct' ? fmtPctColumn(xs)
    : (v) => show(v, kind));

  $('fleet-open').textContent = `Run ${fig.open_replicas} replicas behind a router`;
  $('fleet-open').addEventListener('click', () => ctx.onApply(fig.replicas, fig.open_replicas));
  const [openP, openD] = fig.open_pools;
  $('fleet-open-pd').textContent = `Split prefill from decode (${openP} : ${openD} replicas)`;
  $('fleet-open-pd').addEventListener('click', () => ctx.onApply({ [fig.replicas]: 1, [fig.pools.prefill]: openP, [fig.pools.decode]: openD }));
  const parts = createParts({ box: $('fleet-parts'), parts: fig.parts, metric, compact: ctx.compact,
    tooltip: (kids, canvas, x, y) => tooltip(kids, canvas, x, y), hide: () => { tip.hidden = true; } });
  $('fleet-cancel').addEventListener('click', () => ctx.cancel());

  function status(text, bad = false) {
    const s = $('fleet-status');
    s.textContent = text || '';
    s.hidden = !text;
    s.classList.toggle('bad', bad);
  }

  /** At once on a change: open or close the figure; numbers of other values never stay. */
  function showReqs(reqs) {
    box.classList.toggle('fleet-on', !!reqs);
    $('fleet-jump').hidden = !reqs;
    if (reqs) {
      $('fleet-jump-what').textContent = reqs.pooled ? 'The fleet: prefill and decode pools'
        : `The fleet: ${fmt(reqs.replicas)} replicas behind ${routers.get(reqs.router)?.label || reqs.router}`;
    }
    $('fleet-closed').hidden = !!reqs;
    $('fleet-body').hidden = !reqs;
    const k = reqs ? canonical(reqs.run) : null;
    if (k === key) return;
    key = k;
    if (!reqs) {                      // one server again: nothing of the fleet stays in the page
      ctx.onAnswer?.(null);           // (nor its refusal's message)
      shown = null;
      for (const id of ['fleet-numbers', 'fleet-lanes', 'fleet-decisions', 'fleet-routers']) $(id).replaceChildren();
      lanes = []; axisCanvas = null;
      parts.render(null);
      return;
    }
    for (const e of box.querySelectorAll('[data-metric]')) { e.dataset.value = ''; e.textContent = '…'; }
    box.classList.add('stale');
    box.classList.toggle('no-routers', !reqs.routers.length);
    status(source.live ? 'simulating the fleet…' : WAITING);
    progress(0, reqs.routers.length);
    // its runs in hand (a router picked from the comparison: the same trace, every router run):
    // drawn at once, no "…" while the side work comes round to it
    const res = results.get(key);
    if (res) showAnswer(reqs, res);
  }

  /** The fleet's answer drawn, with every router's run in hand -> those rows (by kind). */
  function showAnswer(reqs, res) {
    shown = { reqs, res };
    status('');
    render();
    box.classList.remove('stale');
    const rows = new Map();
    for (const { kind, req } of reqs.routers) {
      const r = results.get(canonical(req));
      if (r) rows.set(kind, r);
    }
    renderRouters(rows);
    progress(rows.size, reqs.routers.length);
    return rows;
  }

  function progress(done, total) {
    $('fleet-progress').value = total ? done / total : 1;
    $('fleet-run-status').textContent = done < total ? `${done} of ${total} routers` : '';
    $('fleet-cancel').hidden = done >= total;
    $('fleet-bar').hidden = done >= total;            // no empty bar once every router is in
  }

  /** req's answer: the build-time snapshot's while the engine loads (a page opened on a fleet:
   *  an embed, a story step), asked again of the live engine, whose own numbers the page shows. */
  async function ask(token, req, onProgress) {
    const k = canonical(req);
    if (!results.has(k) || (source.live && built.has(k))) {
      const snapshot = !source.live && source.hasSnapshot(req.method, req.params);
      const res = await source.call(req.method, req.params, { signal: token.signal, engine: !snapshot, onProgress });
      results.set(k, res);
      if (snapshot) built.add(k); else built.delete(k);
    }
    return results.get(k);
  }

  /** The fleet's run, then every router's (the side work awaits it; token: its latest()).
   *  wait: asked of the engine while it loads (a fleet's page asks it first), else not before it
   *  is live (no start-up request: side.live() asks again). */
  async function run(token, reqs, wait = false) {
    showReqs(reqs);
    if (!reqs || token.stale) return;
    // superseded: a newer side work (token) or a change the figure shows already (its key: a
    // change blanks the figure at once, before the side work restarts after the main run)
    const runKey = key;
    const gone = () => token.stale || key !== runKey;
    if (!source.live && !wait && !source.hasSnapshot(reqs.run.method, reqs.run.params)) { status(WAITING); return; }
    if (!source.live) {     // asked while the engine loads: once it is live, say it is on the fleet
      source.readyPromise.then(() => { if (!gone() && box.classList.contains('stale')) status('simulating the fleet…'); }, () => {});
    }
    const keep = new Set([reqs.run, ...reqs.routers.map((r) => r.req)].map(canonical));
    for (const k of results.keys()) if (!keep.has(k)) { results.delete(k); built.delete(k); }
    let res;
    // the engine's own count of the fleet's requests done, beside "simulating the fleet…"
    const estimate = createEstimate();
    const onProgress = (p) => {
      if (!gone() && box.classList.contains('stale')) status(`simulating the fleet… ${progressText(estimate.add(p, performance.now()))}`);
    };
    try {
      const t0 = performance.now();
      inFlight = token;
      res = await ask(token, reqs.run, onProgress);
      performance.measure('cbx:fleet', { start: t0, end: performance.now() });   // bench/page.py reads it
    } catch (err) {
      if (gone()) return;
      status(`Not simulated: ${err.detail?.message || err.message}`, true);
      progress(0, 0);
      ctx.onAnswer?.(err.detail || { message: err.message });
      return;
    } finally {
      if (inFlight === token) inFlight = null;    // (a restart's run may be asked by now)
    }
    if (gone()) return;
    ctx.onAnswer?.(null);
    const rows = showAnswer(reqs, res);
    let done = 0;
    for (const { kind, req } of reqs.routers) {
      if (gone()) return;
      progress(done, reqs.routers.length);
      try {
        rows.set(kind, await ask(token, req));
      } catch (err) {
        if (gone()) return;
        rows.set(kind, { error: err.detail?.message || err.message });    // the row says why
      }
      if (gone()) return;
      done++;
      renderRouters(rows);
      await new Promise((r) => setTimeout(r, 0));   // the page stays responsive between runs
    }
    progress(done, reqs.routers.length);
  }

  // ---------------------------------------------------------------- drawing
  function render() {
    const { reqs, res } = shown;
    const v = fleetView(res);
    const router = routers.get(res.router.kind);
    const slots = res.scenario.server.slots;
    const pool = v.replicas.map((r) => r.metrics?.kv_pool_tokens).find((p) => p != null);
    const sched = schedulerLabel(schema.schedulers, reqs.scheduler);
    const by = routerWords(router?.label || res.router.kind, res.scenario, schema.fields);
    if (v.pooled) {
      const n = (p) => v.replicas.filter((r) => r.pool === p).length;
      const link = res.scenario.cluster.transfer;
      $('fleet-what').textContent = `${fmt(n('prefill'))} prefill + ${fmt(n('decode'))} decode replicas behind ${by}`;
      $('fleet-compare-hint').hidden = true;
      $('fleet-caption').textContent = `Prefill replicas (${sched}) compute each prompt; its KV crosses the link `
        + `(${fmt(link.gb_s)} GB/s, ${fmtTime(link.latency_ms, 'ms')} latency, transfers queue); a decode replica admits it `
        + 'when its blocks fit and sends the first token the user sees (as vLLM\'s and llm-d\'s P/D do)';
    } else {
      $('fleet-what').textContent = `${fmt(v.replicas.length)} replicas behind ${by}`;
      const hint = routingHint(res.metrics.prefix_hit_rate, pool, sched);
      $('fleet-compare-hint').textContent = hint || '';
      $('fleet-compare-hint').hidden = !hint;
      $('fleet-caption').textContent = `Each replica is a whole server (${sched}: `
        + `${fmt(slots)} slots, KV pool ${pool == null ? 'unlimited' : `${fmt(pool)} tokens`}) on one clock`;
    }
    $('fleet-caption').append(el('span', { class: 'more', text: '; the other figures show one server taking all of this traffic' }), '.');
    $('fleet-numbers').replaceChildren(...NUMBERS.map(([name, label, path, kind]) => {
      const x = getPath(res, path);
      return el('div', { class: 'fleet-number' }, metric('b', name, x, show(x, kind)), el('span', { text: label }));
    }));
    const why = Object.entries(res.router.decisions).map(([reason, n]) => el('span', {},
      metric('b', `router.decisions.${reason}`, n, fmt(n)), document.createTextNode(` ${router?.why?.[reason] || reason}`)));
    const words = el('p', { class: 'fleet-decisions' }, document.createTextNode('Decisions: '));
    why.forEach((w, i) => { if (i) words.append(document.createTextNode(' · ')); words.append(w); });
    if (res.router.prefix_tokens_held != null) {
      // counted as each request is routed: the prefix hits above come later, once it is computed
      words.append(document.createTextNode('. At routing, prompt tokens the chosen replica already had cached: '),
        metric('b', 'router.prefix_tokens_held', res.router.prefix_tokens_held, fmt(res.router.prefix_tokens_held)),
        document.createTextNode('; forgone (another replica had more): '),
        metric('b', 'router.prefix_tokens_forgone', res.router.prefix_tokens_forgone, fmt(res.router.prefix_tokens_forgone)),
        document.createTextNode(res.router.prefix_tokens_held === 0 && res.router.prefix_tokens_forgone === 0
          ? ' (nothing of their prompts was cached yet when they were routed)' : '.'));
    }
    $('fleet-decisions').replaceChildren(words);
    renderLanes(v, res);
    parts.render(res);
  }

  function renderLanes(v, res) {
    const most = maxOf(v.replicas.map((r) => r.requests), 1);
    const cell = (c, r) => c.pools?.[r.pool] ?? c;      // a column's path (and title) for this replica
    const shows = REPLICA.map((c) => columnShow(c.kind, v.replicas.map((r) => getPath(r, cell(c, r).path))));
    const head = el('tr', {}, el('th', { text: 'replica' }),
      ...REPLICA.map((c) => el('th', { class: c.opt ? 'opt' : null, text: (v.pooled && c.pooledLabel) || c.label,
        title: v.pooled && c.pooledLabel ? `each pool's own part of the TTFT (see its heading): ${partsWords('prefill')} on a prefill replica, ${partsWords('decode')} on a decode one` : null })),
      el('th', { class: 'lane-col', text: 'over time' }));
    lanes = [];
    const rows = [];
    v.replicas.forEach((r, k) => {
      const who = r.pool ? `${r.pool} replica ${r.replica}` : `Replica ${r.replica}`;
      if (r.pool && (k === 0 || v.replicas[k - 1].pool !== r.pool)) rows.push(poolHead(v, r.pool, res));
      const canvas = el('canvas', { class: 'fleet-lane', role: 'img', 'data-replica': String(r.replica),
        ...(r.pool ? { 'data-pool': r.pool } : {}),
        'aria-label': `${who}: ${fmt(r.requests)} requests; its batch and KV cache over time, a tick per request it was sent` });
      lanes.push({ canvas, k });
      wire(canvas, k);
      rows.push(el('tr', { class: r.pool ? `pool-${r.pool}` : null }, el('th', { title: who, text: r.pool ? `${r.pool[0].toUpperCase()}${r.replica}` : String(r.replica) }), ...REPLICA.map((c, i) => {
        const { path, title, parts: ps, from } = cell(c, r);
        const x = getPath(r, path);
        const name = `${r.name}.${path.replace(/^metrics\./, '')}`;
        if (c.bar) return el('td', { class: 'with-bar' }, barred(metric('span', name, x, shows[i](x)), r.requests / most));
        const note = ps ? `p95 of ${partsWords(r.pool)} on this replica (${from})` : title;
        return metric('td', name, x, shows[i](x), { class: c.opt ? 'opt' : null, title: note || null });
      }), el('td', { class: 'lane-cell' }, canvas)));
    });
    axisCanvas = el('canvas', { class: 'fleet-axis', 'aria-hidden': 'true' });
    // a cell per column (not one spanning them): a narrow screen hides the optional ones, and a
    // span of the hidden too put the axis beside the lanes instead of under them
    const foot = el('tr', {}, el('td'), ...REPLICA.map((c) => el('td', { class: c.opt ? 'opt' : null })),
      el('td', { class: 'lane-cell' }, axisCanvas));
    const table = el('table', { class: 'fleet-replicas' }, el('thead', {}, head), el('tbody', {}, ...rows), el('tfoot', {}, foot));
    $('fleet-lanes').replaceChildren(table);
    frame();
  }

  /** "prefill queue + prefill": the TTFT parts (the parts figure's words) a pool's replicas time. */
  function partsWords(pool) {
    const labels = Object.fromEntries(fig.parts);
    return REPLICA.find((c) => c.pooledLabel).pools[pool].parts.map((p) => labels[p] || p).join(' + ');
  }

  /** A pool's heading row in the lanes: what its replicas do, their server where it differs, and
   *  what its optional columns hold (gone with them on a narrow screen). */
  function poolHead(v, pool, res) {
    const n = v.replicas.filter((r) => r.pool === pool).length;
    const over = res.scenario.cluster[pool].server;
    const tp = over?.cost?.tp ?? res.scenario.server.cost?.tp;
    const words = pool === 'prefill' ? 'compute the prompts' : 'receive the KV, then decode';
    const cols = `${pool === 'prefill' ? ' (tok/s: prompt tokens)' : ''}; TTFT part: ${partsWords(pool)}`;
    return el('tr', { class: 'pool-head' }, el('th', { colspan: String(2 + REPLICA.length) },
      document.createTextNode(`${pool === 'prefill' ? 'Prefill' : 'Decode'} pool: ${fmt(n)} replica${n === 1 ? '' : 's'}${tp ? ` × TP ${tp}` : ''}, ${fmt(slotsOf(res.scenario, pool))} slots; they ${words}`),
      el('span', { class: 'opt pool-cols', text: cols })));
  }

  /** Every lane again (a hover, a theme or size change). */
  function frame() {
    if (!shown) return;
    const { res } = shown;
    const v = fleetView(res);
    const h = laneHeight(v.replicas.length, ctx.compact());
    const pools = v.replicas.map((r) => r.metrics?.kv_pool_tokens);
    const kvAll = maxOf(v.replicas.map((r) => maxOf(r.log.columns.kv_tokens, 0)), 0);
    for (const { canvas, k } of lanes) {
      const r = v.replicas[k];
      drawLane(canvas, { log: r.log, ids: r.ids, requests: res.requests },
        { t1: v.makespan, slots: slotsOf(res.scenario, r.pool), kvMax: pools[k] ?? kvAll, height: h, hoverId });
    }
    if (axisCanvas) drawTimeAxis(axisCanvas, v.makespan, res.unit);
    parts.frame();
  }

  function renderRouters(rows) {
    const { reqs } = shown;
    const valueOf = (kind, c) => { const r = rows.get(kind); return r && !r.error ? getPath(r, c.path) ?? null : null; };
    const range = COMPARE.map((c) => {
      const col = reqs.routers.map(({ kind }) => valueOf(kind, c));
      const show = columnShow(c.kind, col.filter((x) => x != null));
      return { max: maxOf(col, 0), show, best: bestRows(col, show, c.better) };
    });
    const head = el('tr', {}, el('th', { text: 'router' }), ...COMPARE.map((c) => el('th', { text: c.label })));
    const body = reqs.routers.map(({ kind }, row) => {
      const r = rows.get(kind);
      const label = routers.get(kind)?.label || kind;
      const name = el('button', { type: 'button', class: 'router-pick', 'data-router': kind,
        title: kind === reqs.router ? 'the router set above' : `use ${label}`, text: label });
      name.addEventListener('click', () => ctx.onApply(fig.router, kind));
      name.disabled = !!ctx.compact();   // embedded: the names, read-only (an embed does not change its scenario)
      // its row ran with its own knobs as set (llm-d's weights, ...): named when not the defaults
      const knobs = r?.scenario ? routerKnobs(r.scenario, schema.fields) : '';
      const tr = el('tr', { class: kind === reqs.router ? 'current' : null },
        el('th', {}, name, ...(knobs ? [el('small', { class: 'router-knobs', text: knobs })] : [])));
      if (r?.error) { tr.append(el('td', { colspan: String(COMPARE.length), class: 'bad', text: r.error })); return tr; }
      COMPARE.forEach((c, i) => {
        const x = r ? getPath(r, c.path) : null;
        const hook = metric('span', `routers.${kind}.${c.key}`, x, r ? range[i].show(x) : '…');
        tr.append(el('td', { class: `with-bar${range[i].best.has(row) ? ' best' : ''}` },
          barred(hook, x == null || !range[i].max ? 0 : x / range[i].max)));
      });
      return tr;
    });
    $('fleet-routers').replaceChildren(el('table', { class: 'fleet-compare' }, el('thead', {}, head), el('tbody', {}, ...body)));
  }

  // ---------------------------------------------------------------- hover: where it went and why
  function wire(canvas, k) {
    canvas.addEventListener('mousemove', (e) => {
      if (!shown) return;
      const b = canvas.getBoundingClientRect();
      const x = e.clientX - b.left, y = e.clientY - b.top;
      const { res } = shown;
      const ax = timeAxis(b.width, fleetView(res).makespan);
      const t = ax.t(x), tol = ax.t(x + 4) - t;
      const id = nearestRequest(res, k, t, tol);
      if (id !== hoverId) { hoverId = id < 0 ? null : id; frame(); }
      tooltip(id >= 0 ? requestTip(res, id, routers.get(res.router.kind), fig.parts) : stateTip(res, k, t), canvas, x, y);
    });
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; if (hoverId != null) { hoverId = null; frame(); } });
  }

  function tooltip(kids, canvas, x, y) {
    tip.replaceChildren(...kids);
    tip.hidden = false;
    const f = box.getBoundingClientRect(), c = canvas.getBoundingClientRect();
    let left = c.left - f.left + x + 14;
    if (left + tip.offsetWidth > f.width - 8) left = c.left - f.left + x - tip.offsetWidth - 14;
    let top = c.top - f.top + y + 14;
    if (top + tip.offsetHeight > f.height - 4) top = Math.max(4, c.top - f.top + y - tip.offsetHeight - 10);
    tip.style.left = `${Math.max(4, left)}px`;
    tip.style.top = `${top}px`;
  }

  return {
    show: showReqs,
    run,
    /** What the figure shows, for Download JSON: the fleet's request and result, and each router
     *  run in hand ({kind: {request, result}}), or null while it shows none. */
    exported() {
      if (!shown) return null;
      const routerRuns = {};
      for (const { kind, req } of shown.reqs.routers) {
        const r = results.get(canonical(req));
        if (r) routerRuns[kind] = { request: req, result: r };
      }
      return { request: shown.reqs.run, result: shown.res, routers: routerRuns };
    },
    /** Is the fleet's own run asked and not answered yet? */
    running: () => inFlight != null,
    /** The side work was cancelled: the routers not run yet stay empty. */
    cancelled() {
      if ($('fleet-cancel').hidden) return;
      $('fleet-run-status').textContent = 'cancelled';
      $('fleet-cancel').hidden = true;
      $('fleet-bar').hidden = false;
      if (box.classList.contains('stale')) status('Cancelled: change a value to simulate the fleet again.');
    },
    redraw: frame,
  };
}
