// The start-up requests the build answers are exactly what the page asks for its states.
import test from 'node:test';
import assert from 'node:assert/strict';
import { engine } from './engine.mjs';
import { makeContext } from '../../web/state/context.js';
import { parseURL } from '../../web/state/url.js';
import { canonical, pageRequests, startupRequests } from '../../web/engine/requests.js';

const { schema, presets } = engine();
const ctx = makeContext(schema, presets);

test('every preset and every embed is covered', () => {
  const searches = ['', ...Object.keys(presets).map((p) => `?preset=${p}`), ...ctx.figures.map((f) => `?embed=${f}`)];
  const keys = new Set(startupRequests(ctx, searches).map(canonical));
  for (const search of searches) {
    const reqs = pageRequests(ctx, parseURL(search, ctx));
    const all = [reqs.main, reqs.stall, ...reqs.kv, ...Object.values(reqs.sweeps).flat().map((p) => p.req)].filter(Boolean);
    for (const r of all) assert.ok(keys.has(canonical(r)), `${search}: ${canonical(r).slice(0, 80)}`);
  }
});

test('an embed asks only for its own figure', () => {
  const reqs = pageRequests(ctx, parseURL('?embed=skew', ctx));
  assert.deepEqual(Object.keys(reqs.sweeps), ['skew']);
  assert.equal(reqs.stall, null);
  assert.deepEqual(reqs.kv, []);
});

test('the skew sweep is not run on a production trace (skew shapes generated requests only)', () => {
  assert.ok(pageRequests(ctx, parseURL('', ctx)).sweeps.skew.length > 1);
  assert.deepEqual(pageRequests(ctx, parseURL('', ctx)).off, {});
  const reqs = pageRequests(ctx, parseURL('?trace=mooncake-conv-2025&count=200', ctx));
  assert.equal(reqs.sweeps.skew, undefined);
  assert.equal(reqs.off.skew.path, 'workload.skew');
  assert.ok(reqs.sweeps.slots.length > 1);                    // the sizing sweep still runs
  // nor on the reader's own trace file
  const items = [{ arrive: 0, prompt: 10, out: 5 }];
  assert.equal(pageRequests(ctx, { ...parseURL('', ctx), items }).off.skew.path, 'workload.skew');
});

test('canonical JSON sorts keys at every depth', () => {
  assert.equal(canonical({ b: 1, a: { d: [2, { z: 1, y: 0 }], c: null } }), '{"a":{"c":null,"d":[2,{"y":0,"z":1}]},"b":1}');
});
