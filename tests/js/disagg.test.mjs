// Prefill/decode pools in the page's pure parts: the fleet figure opens for pools, a pooled
// fleet's lanes (each replica the requests its pool sent it), the TTFT bars folded into pixels,
// and the planner's requests (the scenario without what each candidate sets itself).
import test from 'node:test';
import assert from 'node:assert/strict';
import { engine } from './engine.mjs';
import { makeContext } from '../../web/state/context.js';
import { parseURL } from '../../web/state/url.js';
import { pageRequests, planRequests, startupRequests } from '../../web/engine/requests.js';
import { fleetView, hookName, slotsOf } from '../../web/state/fleet.js';
import { foldBars, barAt, partColumns } from '../../web/state/ttftparts.js';

const { schema, presets, story } = engine();
const ctx = makeContext(schema, presets, Object.keys(schema.figures), story);

test('pools open the fleet figure; its runs keep them; an embed of them asks only the fleet', () => {
  const q = '?prefill_replicas=1&decode_replicas=2&link_gb_s=25&decode_server=%7B%22slots%22%3A4%7D';
  const reqs = pageRequests(ctx, parseURL(q, ctx));
  assert.equal(reqs.main.params.scenario.cluster, undefined);
  assert.ok(reqs.fleet.pooled);
  assert.deepEqual(reqs.fleet.run.params.scenario.cluster, { prefill: { replicas: 1 },
    decode: { replicas: 2, server: { slots: 4 } }, transfer: { gb_s: 25 } });
  // an embedded P/D fleet is about its pools: its run alone, answered at build time
  assert.deepEqual(startupRequests(ctx, [`${q}&embed=fleet`]).filter((r) => r.method === 'simulate'), [reqs.fleet.run]);
});

const table = (cols) => ({ $table: Object.values(cols)[0].length, columns: Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, Float64Array.from(v)])) });
const log = table({ count: [1], start: [0], rows: [1], prefill_tokens: [0], cost: [10], useful: [1], kv_tokens: [10], cost_last: [10] });
const pooled = {
  metrics: { makespan: 50 },
  scenario: { server: { slots: 8 }, cluster: { prefill: { server: {} }, decode: { server: { slots: 2 } } } },
  requests: table({ arrive: [0, 1, 2, 3], replica: [1, 0, 1, 1], prefill_replica: [0, 0, 0, 0], ttft: [5, 9, 1, 7],
    'ttft_parts.a': [1, 2, 0, 3], 'ttft_parts.b': [4, 7, 1, 4] }),
  replicas: [{ replica: 0, pool: 'prefill', requests: 4, passes_log: log },
    { replica: 0, pool: 'decode', requests: 1, passes_log: log }, { replica: 1, pool: 'decode', requests: 3, passes_log: log }],
  router: { scores: [], reasons: [] },
};

test('a pooled fleet: a lane per replica of each pool, with the requests that pool sent it', () => {
  const v = fleetView(pooled);
  assert.ok(v.pooled);
  assert.deepEqual(v.replicas.map((r) => [...r.ids]), [[0, 1, 2, 3], [1], [0, 2, 3]]);
  assert.deepEqual(v.replicas.map((r) => r.name), ['prefill0', 'decode0', 'decode1']);
  assert.equal(hookName({ replica: 3 }), 'replica3');
  assert.equal(slotsOf(pooled.scenario, 'decode'), 2);
  assert.equal(slotsOf(pooled.scenario, 'prefill'), 8);
  assert.deepEqual(partColumns(pooled, [['a'], ['b']]).map((c) => [...c]), [[1, 2, 0, 3], [4, 7, 1, 4]]);
  assert.equal(partColumns(pooled, [['a'], ['missing']]), null);
});

test('TTFT bars: one per request, or the slowest of each pixel column', () => {
  const few = foldBars(Float64Array.from([5, 9, 1, 7]), 100);
  assert.deepEqual([...few.ids], [0, 1, 2, 3]);
  assert.equal(few.bar, 25);
  assert.equal(barAt(few, 30), 1);
  assert.equal(barAt(few, 100), -1);
  const many = foldBars(Float64Array.from([5, 9, 1, 7, 2, 2]), 2);
  assert.deepEqual([...many.ids], [1, 3]);       // the slowest of requests 0-2, then of 3-5
  assert.equal(barAt(many, 1.5), 3);
});

test('the planner asks for the scenario without the cluster shape each candidate sets', () => {
  const { values } = parseURL('?cost=roofline&replicas=3&link_gb_s=10&router=least_outstanding&vllm=1', ctx);
  const r = planRequests(ctx, values, ['static', 'continuous', 'vllm'], null, 8);
  assert.equal(r.candidates.method, 'plan_candidates');
  assert.equal(r.candidates.params.gpus, 8);
  const sc = r.candidates.params.scenario;
  assert.equal(sc.scheduler, 'vllm');
  assert.deepEqual(sc.cluster, { router: { kind: 'least_outstanding' }, transfer: { gb_s: 10 } });
  assert.deepEqual(r.point({ kind: 'colocated', replicas: 8, tp: 1 }).params.candidate, { kind: 'colocated', replicas: 8, tp: 1 });
  assert.deepEqual(r.verdict([1]).params.rows, [1]);
  assert.equal('capacity' in r.candidates.params, false);   // the build-time key stays as it was
  const atCapacity = planRequests(ctx, values, ['static', 'continuous', 'vllm'], null, 8, true);
  assert.equal(atCapacity.candidates.params.capacity, true);  // refused at once without a load to search
});

test('an embedded P/D fleet runs no router comparison; the page does', () => {
  const q = '?prefill_replicas=1&decode_replicas=2';
  assert.equal(pageRequests(ctx, parseURL(`${q}&embed=fleet`, ctx)).fleet.routers.length, 0);
  assert.ok(pageRequests(ctx, parseURL(q, ctx)).fleet.routers.length > 1);
});

test('an embedded planner with no cost model in its link opens on a roofline deployment', () => {
  const plan = schema.figures.plan;
  assert.equal(parseURL('?embed=plan', ctx).values[plan.cost], plan.open_cost);
  assert.equal(parseURL('?embed=plan&cost=article', ctx).values[plan.cost], 'article');   // as set
  assert.notEqual(parseURL('', ctx).values[plan.cost], plan.open_cost);                   // the page: as set
});
