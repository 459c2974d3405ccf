// A fleet's result as the fleet figure reads it (py_engine/fleet/result.py: `replicas`, `router`,
// every request's `replica`): per replica its metrics, passes log and the requests it was sent,
// and per request the router's scores and reason. Pure functions of the result, derived once.

import { count } from './records.js';
import { getPath } from './schema.js';

const views = new WeakMap();

/**
 * res: a fleet's simulate result (tables) -> {replicas: [{replica, requests, metrics, log, ids}],
 * makespan, scores: Map(request id -> [score per replica]), reasons: [reason per request id]}.
 * `ids` are the requests the replica was sent, in arrival order (the requests table's order).
 */
export function fleetView(res) {
  let v = views.get(res);
  if (v) return v;
  const reps = res.replicas || [];
  const ids = reps.map(() => []);
  const t = res.requests;
  // a disaggregated fleet (fleet/result.py): each replica names its pool; a request's prefill
  // replica is its own column, `replica` is its decode replica
  const laneOf = new Map(reps.map((r, k) => [`${r.pool || ''}${r.replica}`, k]));
  const pools = [...new Set(reps.map((r) => r.pool || ''))];
  for (const pool of pools) {
    const col = t.columns[pool === 'prefill' ? 'prefill_replica' : 'replica'];
    for (let i = 0, n = count(t); i < n; i++) ids[laneOf.get(`${pool}${col[i]}`)]?.push(i);
  }
  v = {
    replicas: reps.map((r, k) => ({ replica: r.replica, pool: r.pool || null, name: hookName(r), requests: r.requests,
      metrics: r.metrics, log: r.passes_log, ids: Int32Array.from(ids[k]) })),
    pooled: pools.includes('prefill'),
    makespan: res.metrics.makespan,
    scores: new Map((res.router?.scores || []).map(([g, s]) => [g, s])),
    reasons: res.router?.reasons || [],
  };
  views.set(res, v);
  return v;
}

/** A replica's hook prefix: replica<k>, or in a disaggregated fleet prefill<k> / decode<k>. */
export function hookName(r) { return `${r.pool || 'replica'}${r.replica}`; }

/** The slots of a replica's server: its pool's override, else the fleet's server's. */
export function slotsOf(scenario, pool) {
  return (pool && scenario.cluster?.[pool]?.server?.slots) || scenario.server.slots;
}

/** The request sent to replica k whose arrival is nearest to time t, if within tol; else -1.
 *  Binary search over the replica's requests (arrival order). */
export function nearestRequest(res, k, t, tol) {
  const ids = fleetView(res).replicas[k]?.ids;
  if (!ids?.length) return -1;
  const arrive = res.requests.columns.arrive;
  let lo = 0, hi = ids.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (arrive[ids[mid]] < t) lo = mid + 1; else hi = mid; }
  let best = -1, gap = tol;
  for (const j of [lo - 1, lo]) {
    if (j < 0 || j >= ids.length) continue;
    const d = Math.abs(arrive[ids[j]] - t);
    if (d <= gap) { best = ids[j]; gap = d; }
  }
  return best;
}

/** The replicas the router's scores favour: the indices of the best non-null score, several on
 *  a tie (which the router's own rule breaks: schema routers[].tie), or none. */
export function favoured(scores, best) {
  let top = null;
  for (const s of scores) if (s != null && (top == null || (best === 'highest' ? s > top : s < top))) top = s;
  return top == null ? [] : scores.flatMap((s, i) => (s === top ? [i] : []));
}

/** The rows a column of the router comparison bolds (values: one per row, null for none yet;
 *  show: the column's formatter): every row whose value, as shown, ties with the best one
 *  (better: 'highest' or 'lowest'), so equal-looking cells are never told apart by digits the
 *  page does not show; none when every value shows the same, or fewer than two are in. */
export function bestRows(values, show, better) {
  const xs = values.filter((x) => x != null);
  if (xs.length < 2) return new Set();
  const top = show(xs.reduce((a, b) => ((better === 'highest' ? b > a : b < a) ? b : a)));
  const shown = values.map((x) => (x == null ? null : show(x)));
  if (shown.every((t) => t == null || t === top)) return new Set();
  return new Set(shown.flatMap((t, i) => (t === top ? [i] : [])));
}

/** A replica's state at time t from its passes log: {rows, kv} of the run under t (or null when
 *  the replica is idle then). Binary search over the runs' starts. */
export function stateAt(log, t) {
  const { start, count: passes, cost, cost_last: last, rows, kv_tokens: kv } = log.columns;
  let lo = 0, hi = log.$table;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (start[mid] <= t) lo = mid + 1; else hi = mid; }
  const i = lo - 1;
  if (i < 0 || t > runEnd(start[i], passes[i], cost[i], last[i])) return null;
  return { rows: rows[i], kv: kv[i] };
}

/** When a run of `passes` passes starting at `start` ends: its first pass costs `cost`, its last
 *  `last` (the roofline cost grows pass by pass; otherwise last = cost), linearly between. */
export function runEnd(start, passes, cost, last) {
  return start + (passes > 1 ? (passes * (cost + last)) / 2 : cost);
}

/** Why the routers may tie on this trace (the router comparison's note), or null: no prefix
 *  cache (hit rate null), no shared prefix (0), or pools too big to ever evict (pool null). */
export function routingHint(hitRate, pool, sched) {
  if (hitRate == null) return `These replicas run ${sched}, which keeps no prefix cache: the prefix-aware routers have nothing to match and route on load. Add the vLLM lane to run them on vLLM.`;
  if (hitRate === 0) return 'No two requests here share a prefix: the prefix-aware routers have nothing to follow and route on load. Give the workload shared prefixes to see what they buy.';
  if (pool == null) return 'The KV pools are unlimited: no replica ever evicts, so each keeps every prefix it is sent once, and routing by prefix buys little. Set a KV budget (KV cache tokens, or a GPU under the roofline cost) to see the trade-off.';
  return null;
}

/** The knobs a run's router ran with that differ from their defaults, in words, or '' (fields:
 *  the schema's; a knob's field is shown `when` its kind is this router's), so two runs of one
 *  router with other weights do not read the same: "(weight: queue 0, weight: KV 0)".
 *  `scenario`: the run's. */
export function routerKnobs(scenario, fields) {
  const kind = scenario.cluster.router.kind;
  const knobs = [];
  for (const f of fields) {
    if (!(f.when?.['cluster.router.kind'] || []).includes(kind)) continue;
    const v = getPath(scenario, f.path);
    if (v == null || v === f.default) continue;
    knobs.push(`${f.label.charAt(0).toLowerCase()}${f.label.slice(1)} ${v}`);
  }
  return knobs.length ? `(${knobs.join(', ')})` : '';
}

/** A router in words: its label and its routerKnobs: "llm-d scorers (weight: queue 0, weight:
 *  KV 0)". */
export function routerWords(label, scenario, fields) {
  const knobs = routerKnobs(scenario, fields);
  return knobs ? `${label} ${knobs}` : label;
}
