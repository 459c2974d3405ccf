// The fleet figure's pure parts: its requests (one server for every other figure, the fleet and
// one run per router for it, at start-up only where the page opens on a fleet), and what it reads
// of a fleet's result (where a request went, the favoured replica, a replica's state at a time,
// the lanes' pixel columns).
import test from 'node:test';
import assert from 'node:assert/strict';
import { engine } from './engine.mjs';
import { makeContext } from '../../web/state/context.js';
import { parseURL } from '../../web/state/url.js';
import { pageRequests, startupRequests, oneServer, canonical } from '../../web/engine/requests.js';
import { fleetView, nearestRequest, favoured, stateAt, runEnd, routingHint, routerKnobs, routerWords, bestRows } from '../../web/state/fleet.js';
import { fmt } from '../../web/draw/format.js';
import { columns, tickAlpha } from '../../web/draw/fleet.js';

const { schema, presets, story } = engine();
const ctx = makeContext(schema, presets, Object.keys(schema.figures), story);
const kinds = ctx.fields.find((f) => f.path === 'cluster.router.kind').choices;

test('one replica: no fleet runs; above one: the fleet, then every router, on the last lane', () => {
  assert.equal(pageRequests(ctx, parseURL('', ctx)).fleet, null);
  const reqs = pageRequests(ctx, parseURL('?replicas=3&router=llm_d&w_kv=0.5&vllm=1', ctx));
  assert.equal(reqs.main.method, 'compare');
  assert.equal(reqs.main.params.scenario.cluster, undefined);          // the main figures: one server
  const { run, routers, scheduler } = reqs.fleet;
  assert.equal(scheduler, 'vllm');
  assert.deepEqual(run, { method: 'simulate', params: { scenario: { scheduler: 'vllm',
    cluster: { replicas: 3, router: { kind: 'llm_d', weights: { kv: 0.5 } } } } } });
  assert.deepEqual(routers.map((r) => r.kind), kinds);
  // each router keeps the knobs it has: llm_d's weight, nobody else's
  const byKind = Object.fromEntries(routers.map((r) => [r.kind, r.req.params.scenario.cluster]));
  assert.deepEqual(byKind.llm_d, run.params.scenario.cluster);
  assert.deepEqual(byKind.round_robin, { replicas: 3 });
  assert.deepEqual(byKind.cache_aware, { replicas: 3, router: { kind: 'cache_aware' } });
  const noLane = pageRequests(ctx, parseURL('?replicas=2', ctx)).fleet;
  assert.equal(noLane.scheduler, 'continuous');
});

test('an embed of another figure asks nothing of the fleet; a page opened on a fleet has its runs answered at build time', () => {
  assert.equal(pageRequests(ctx, parseURL('?replicas=4&embed=skew', ctx)).fleet, null);
  const simulated = (searches) => startupRequests(ctx, searches).filter((r) => r.method === 'simulate');
  assert.deepEqual(simulated(['', '?embed=skew&replicas=4', '?story=1']), []);
  // the fleet's run and every router's, once each (the page and its embed ask the same)
  const fleet = pageRequests(ctx, parseURL('?replicas=4', ctx)).fleet;
  const runs = [fleet.run, ...fleet.routers.map((r) => r.req)];
  const once = [...new Map(runs.map((r) => [canonical(r), r])).values()];   // (round robin's is the run)
  assert.equal(once.length, runs.length - 1);
  assert.deepEqual(simulated(['?replicas=4', '?embed=fleet&replicas=4']), once);
  const steps = story.flatMap((s, i) => (s.highlight === 'fleet' ? [`?story=${i + 1}`] : []));
  assert.ok(steps.length && simulated(steps).length >= steps.length);
  assert.deepEqual(oneServer(schema, { cluster: { replicas: 2 }, server: { slots: 4 } }), { server: { slots: 4 } });
});

test('an embedded fleet figure with no fleet set shows the fleet its button opens', () => {
  const fig = schema.figures.fleet;
  assert.equal(parseURL('?embed=fleet', ctx).values[fig.replicas], fig.open_replicas);
  assert.ok(pageRequests(ctx, parseURL('?embed=fleet', ctx)).fleet.run);
  assert.equal(parseURL('?embed=fleet&replicas=2', ctx).values[fig.replicas], 2);       // as set
  assert.equal(parseURL('?embed=fleet&prefill_replicas=1&decode_replicas=1', ctx).values[fig.replicas], 1);   // pools
  assert.equal(parseURL('', ctx).values[fig.replicas], 1);                              // the page: as set
});

// A fleet result as the worker delivers it: tables of typed columns.
const table = (cols) => ({ $table: Object.values(cols)[0].length, columns: Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, Float64Array.from(v)])) });
const log = table({ count: [2, 1], start: [0, 50], rows: [3, 1], prefill_tokens: [0, 0], cost: [10, 5], useful: [3, 1], kv_tokens: [300, 120], cost_last: [14, 5] });
const res = {
  metrics: { makespan: 100 },
  requests: table({ arrive: [0, 5, 20, 30], replica: [0, 1, 0, 1], prompt: [10, 10, 10, 10], cached_tokens: [0, 0, 8, 8] }),
  replicas: [{ replica: 0, requests: 2, metrics: {}, passes_log: log }, { replica: 1, requests: 2, metrics: {}, passes_log: log }],
  router: { kind: 'least_outstanding', scores: [[0, [0, 0]], [1, [1, 0]]], reasons: ['least_load', 'least_load'] },
};

test('where each request went, and the replica its scores favour', () => {
  const v = fleetView(res);
  assert.deepEqual([...v.replicas[0].ids], [0, 2]);
  assert.deepEqual([...v.replicas[1].ids], [1, 3]);
  assert.deepEqual(v.scores.get(1), [1, 0]);
  assert.equal(nearestRequest(res, 0, 18, 3), 2);
  assert.equal(nearestRequest(res, 0, 10, 3), -1);               // nothing within the tolerance
  assert.equal(nearestRequest(res, 1, 100, 1000), 3);
  assert.deepEqual(favoured([3, 1, 2], 'lowest'), [1]);
  assert.deepEqual(favoured([0.2, 1.5, 1.5], 'highest'), [1, 2]);   // a tie: the router's rule chose
  assert.deepEqual(favoured([null, 4, null, 2], 'lowest'), [3]);    // power of two: two drawn
  assert.deepEqual(favoured([null, 4, null, 4], 'lowest'), [1, 3]);
  assert.deepEqual(favoured([null, null], 'lowest'), []);
});

test('the router comparison bolds every value that ties for the best as shown, none when all look alike', () => {
  const rows = (values, better) => [...bestRows(values, fmt, better)].sort();
  // 192.33, 192.33 and 192.345 all read "192.3": the exact maximum alone was bolded
  assert.deepEqual(rows([192.33, 192.07, 192.332, null, 192.345, 192.23], 'highest'), [0, 2, 4]);
  assert.deepEqual(rows([1.5, 1, 1.24, 1], 'lowest'), [1, 3]);
  assert.deepEqual(rows([1242.2, 1241.9, 1242.4], 'highest'), []);     // every one "1,242": no best
  assert.deepEqual(rows([null, 3, null], 'lowest'), []);                 // one in so far
  assert.deepEqual(rows([null, null], 'lowest'), []);
});

test('a replica at a time, and its lane folded into pixel columns', () => {
  assert.equal(runEnd(0, 2, 10, 14), 24);
  assert.deepEqual(stateAt(log, 12), { rows: 3, kv: 300 });
  assert.equal(stateAt(log, 30), null);                             // idle between the runs
  assert.deepEqual(stateAt(log, 52), { rows: 1, kv: 120 });
  const { rows, kv } = columns(log, 106, 100);                      // 1 px per time unit (3 px pad)
  assert.equal(rows[10], 3);
  assert.equal(rows[40], 0);
  assert.equal(rows[54], 1);
  assert.equal(kv[54], 120);
});

test('a lane\'s request ticks fade where they pile up (a whole trace), and only there', () => {
  assert.equal(tickAlpha(120, 1000), 1);             // a tick every 8 px: as drawn
  assert.equal(tickAlpha(500, 1000), 1);
  assert.equal(tickAlpha(1000, 500), 0.25);          // two a column: a quarter
  assert.equal(tickAlpha(1504, 340), 0.2);           // 8 replicas x 12,031 Mooncake requests
  assert.equal(tickAlpha(5, 0), 0.2);                // no width yet: no division by zero
});

test('the router comparison says why routers tie: no prefix cache, no shared prefix, no eviction', () => {
  assert.match(routingHint(null, 6000, 'continuous batching'), /run continuous batching, which keeps no prefix cache/);
  assert.match(routingHint(0, 6000, 'vLLM'), /No two requests here share a prefix/);
  assert.match(routingHint(0.4, null, 'vLLM'), /KV pools are unlimited: no replica ever evicts/);
  assert.equal(routingHint(0.4, 6000, 'vLLM'), null);       // a budget and shared prefixes: no note
});

test('a router in words names the knobs it ran with that are not the defaults', () => {
  const fields = schema.fields;
  const run = (router) => ({ cluster: { router } });
  assert.equal(routerWords('llm-d scorers', run({ kind: 'llm_d', weights: { prefix: 2, queue: 1, kv: 1 }, seed: 0 }), fields), 'llm-d scorers');
  assert.equal(routerWords('llm-d scorers', run({ kind: 'llm_d', weights: { prefix: 2, queue: 0, kv: 0 }, seed: 0 }), fields),
    'llm-d scorers (weight: queue 0, weight: KV 0)');
  // another router's knob is not this one's
  assert.equal(routerWords('round robin', run({ kind: 'round_robin', weights: { queue: 0 } }), fields), 'round robin');
  // the comparison's row names the knobs alone
  assert.equal(routerKnobs(run({ kind: 'llm_d', weights: { prefix: 2, queue: 1, kv: 0.5 }, seed: 0 }), fields), '(weight: KV 0.5)');
  assert.equal(routerKnobs(run({ kind: 'cache_aware' }), fields), '');
});
