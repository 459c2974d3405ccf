// The page's URL codec against the engine's field table: every field round-trips, bad text gets
// the engine's own message, view parameters are parsed once.
import test from 'node:test';
import assert from 'node:assert/strict';
import { engine } from './engine.mjs';
import { makeContext } from '../../web/state/context.js';
import { parseURL, toQuery, parseView } from '../../web/state/url.js';
import { defaults, exists, scenarioFrom, valuesFromScenario, parseField, hintOf } from '../../web/state/schema.js';

const { schema, presets } = engine();
const ctx = makeContext(schema, presets);

/** A valid value that is not the default (like tests/engine/test_schema.py sample()). */
function sample(f) {
  if (f.type === 'choice') return f.choices.find((c) => c !== f.default);
  if (f.type === 'cost') return f.choices.find((c) => c !== f.default && !f.object_choices.includes(c));
  if (f.type === 'bool') return !f.default;
  if (f.type === 'text') return 'class Mine(Policy):  # « é ✓ » & = ?\n    pass\n';   // base64url of UTF-8 for code
  if (f.type === 'overrides') return { slots: 4, cost: { tp: 2 } };
  if (f.type === 'int') { const v = f.default == null ? 1000 : f.default + 1; return v <= f.max ? v : f.default - 1; }
  const v = Math.round(((f.default || 0) * 0.5 + (f.max - f.min) * 1e-4 + f.min) * 1e6) / 1e6;
  return v !== f.default ? v : v * 0.5;
}

test('every field round-trips through the URL', () => {
  for (const f of ctx.fields) {
    const values = defaults(ctx.fields);
    for (const [p, allowed] of Object.entries(f.when || {})) values[p] = allowed[0];
    if (f.form) values[f.path.slice(0, f.path.lastIndexOf('.'))] = f.form;
    values[f.path] = sample(f);
    assert.ok(exists(f, values, ctx.fields), f.path);
    const view = { lanes: [], lecture: false, theme: null, embed: null, pass: null };
    const q = toQuery(ctx, values, view);
    const back = parseURL(q, ctx);
    assert.deepEqual(back.errors, {}, `${f.path}: ${q}`);
    assert.deepEqual(back.values[f.path], values[f.path], `${f.path}: ${q}`);
    // and through the nested scenario the engine takes
    assert.deepEqual(valuesFromScenario(ctx.fields, scenarioFrom(ctx.fields, values))[f.path], values[f.path], f.path);
  }
});

test('a hint follows the values it depends on: the pool\'s server example works with the cost model', () => {
  const f = ctx.fields.find((x) => x.path === 'cluster.prefill.server');
  const values = defaults(ctx.fields);
  assert.ok(hintOf(f, values).includes('{"slots": 16}') && !hintOf(f, values).includes('"tp"'));
  assert.ok(hintOf(f, { ...values, 'server.cost': 'roofline' }).includes('{"cost": {"tp": 2}}'));
  const kv = ctx.fields.find((x) => x.path === 'server.kv_tokens');
  assert.equal(hintOf(kv, values), kv.hint);
  assert.match(hintOf(kv, { ...values, 'server.cost': 'roofline' }), /auto: the KV the GPU leaves/);
  // the not-JSON message's example is one every cost model takes
  assert.match(parseField(f, '{"cost": {"tp": 2}').error, /e\.g\. \{"slots": 16\}$/);
});

test('a pool\'s server overrides: JSON objects only, empty = none, anything else a message', () => {
  const f = ctx.fields.find((x) => x.type === 'overrides');
  assert.deepEqual(parseField(f, ' {"cost": {"tp": 2}} '), { value: { cost: { tp: 2 } } });
  assert.deepEqual(parseField(f, ''), { value: null });
  for (const text of ['[1]', '3', '"x"', '{cost:', 'null}', `{"a": "${'x'.repeat(3000)}"}`]) {
    const r = parseField(f, text);
    assert.ok('error' in r, text);
    assert.ok(r.error.startsWith(`${f.path}`), r.error);
  }
});

test('a policy\'s code travels as base64url while short, and a bad one is a message', () => {
  const code = ctx.fields.find((f) => f.url_codec === 'base64url');
  const values = { ...defaults(ctx.fields), scheduler: 'custom', [code.path]: 'x = "✓"\n' };
  const q = new URLSearchParams(toQuery(ctx, values, { lanes: [] }));
  assert.equal(q.get(code.url), 'eCA9ICLinJMiCg');     // base64url of the UTF-8 bytes, unpadded
  values[code.path] = 'x'.repeat(4000);                 // too long for a link: left out
  assert.equal(new URLSearchParams(toQuery(ctx, values, { lanes: [] })).get(code.url), null);
  const bad = parseURL(`?scheduler=custom&${code.url}=%%%`, ctx);
  assert.match(bad.errors[code.url], /not base64url/);
});

test('URL names are unique and none is a view parameter', () => {
  const urls = ctx.fields.map((f) => f.url);
  assert.equal(new Set(urls).size, urls.length);
  for (const v of ['embed', 'lecture', 'theme', 'pass', 'preset', 'challenge', ...ctx.optional]) assert.ok(!urls.includes(v), v);
});

test('bad text gets the field, the value and the allowed range', () => {
  const slots = ctx.fields.find((f) => f.path === 'server.slots');
  for (const text of ['0', 'abc', '2.5', '', '1e9', '1,5', '2_000', '2,0000']) {
    const r = parseField(slots, text);
    assert.ok('error' in r, text);
    assert.match(r.error, /^server\.slots = .*: must be an integer from 1 to 4096$/);
  }
  assert.deepEqual(parseField(slots, ' 16 '), { value: 16 });
  const { errors, values } = parseURL('?slots=0&theme=%3Cscript%3E&seed=5', ctx);
  assert.match(errors.slots, /server\.slots = 0/);
  assert.match(errors.theme, /theme = <script>: must be one of dark, light/);
  assert.equal(values['workload.seed'], 5);
});

test('view parameters: one parser, the same answer early and late', () => {
  const early = parseView('?lecture=yes&embed=timeline&theme=dark', { figures: ctx.figures });
  const late = parseURL('?lecture=yes&embed=timeline&theme=dark', ctx);
  for (const k of ['lecture', 'embed', 'theme']) assert.equal(early.view[k], late.view[k], k);
  assert.equal(late.view.lecture, true);
});

test("a figure's former name still opens it (embed=cost is the stall); the URL names it anew", () => {
  assert.ok(ctx.figures.includes('stall') && !ctx.figures.includes('cost'));
  const { view, errors } = parseURL('?embed=cost', ctx);
  assert.equal(view.embed, 'stall');
  assert.deepEqual(errors, {});
  assert.equal(parseView('?embed=cost', { figures: ctx.figures }).view.embed, 'stall');
  assert.match(toQuery(ctx, parseURL('', ctx).values, view), /embed=stall/);
  assert.match(parseURL('?embed=constructor', ctx).errors.embed, /must be one of/);
});

test('a preset in the link sets its values and lanes; the URL names it back', () => {
  const name = Object.keys(presets).find((k) => presets[k].schedulers.some((s) => ctx.optional.includes(s)));
  const state = parseURL(`?preset=${name}`, ctx);
  assert.deepEqual(state.view.lanes, presets[name].schedulers.filter((s) => ctx.optional.includes(s)));
  assert.match(toQuery(ctx, state.values, state.view), new RegExp(`preset=${name}`));
});

test("a field's former URL name still works; the current name wins", () => {
  const tpot = ctx.fields.find((f) => f.path === 'slo.tpot_ms');
  assert.deepEqual(tpot.aliases, ['tbt_ms']);
  assert.equal(parseURL('?tbt_ms=54', ctx).values['slo.tpot_ms'], 54);
  assert.equal(parseURL('?tbt_ms=54&tpot_ms=60', ctx).values['slo.tpot_ms'], 60);
  assert.match(toQuery(ctx, parseURL('?tbt_ms=54', ctx).values, {}), /tpot_ms=54/);
});

test('a parameter that is no setting gets a message naming it (and the nearest name); a tracker none', () => {
  const r = parseURL('?replica=4&requests=100&utm_source=news&fbclid=x&zzzzzzzz=1', ctx);
  assert.equal(r.values['workload.requests'], 100);                 // the rest of the link applies
  assert.match(r.errors.replica, /^replica: not a setting of this page \(ignored; did you mean replicas\?\)$/);
  assert.match(r.errors.zzzzzzzz, /^zzzzzzzz: not a setting of this page \(ignored\)$/);
  assert.deepEqual(Object.keys(r.errors).sort(), ['replica', 'zzzzzzzz']);
  // every name the page writes is one it reads: lanes, view parameters, a field's former name
  const lane = ctx.optional[0];
  const alias = ctx.fields.find((f) => f.aliases?.length);
  const q = `?${lane}=1&lecture=1&theme=dark&pass=3&speed=${parseView('', ctx).view.speed}&preset=${Object.keys(presets)[0]}`
    + (alias ? `&${alias.aliases[0]}=${encodeURIComponent(String(sample(alias)))}` : '');
  assert.deepEqual(parseURL(q, ctx).errors, {}, q);
});

test('a field refused in the page names the page limit and an empty box, not null', async () => {
  const { pageAllowed } = await import('../../web/state/schema.js');
  const requests = ctx.schema.fields.find((f) => f.path === 'workload.requests');
  assert.match(parseField(requests, 'abc').error, /^workload\.requests = abc: must be an integer from 1 to 20,000 in the page \(the engine takes up to 1,000,000 natively/);
  const kv = ctx.schema.fields.find((f) => f.path === 'server.kv_tokens');
  assert.match(pageAllowed(kv), /\(or empty: unlimited, or auto\)$/);
  const count = ctx.schema.fields.find((f) => f.path === 'workload.trace.count');
  assert.equal(pageAllowed(count), count.allowed);      // its page limit is above the engine's
});
