import test from 'node:test';
import assert from 'node:assert/strict';
import { fmt, fmtPct, fmtTime, fmtTimeColumn } from '../../web/draw/format.js';

test('numbers for people', () => {
  assert.equal(fmt(3597), '3,597');
  assert.equal(fmt(22.35), '22.4');
  assert.equal(fmt(3.40302), '3.40');
  assert.equal(fmt(0.0107), '0.0107');
  assert.equal(fmt(0.05), '0.05');          // no trailing zeros below 1 (they read as measured)
  assert.equal(fmt(0.012345), '0.0123');
  assert.equal(fmt(0), '0');
  assert.equal(fmt(null), '–');
  assert.equal(fmt(NaN), '–');
  assert.equal(fmt(123456.7), '123,457');
});

test('percentages and times', () => {
  assert.equal(fmtPct(0.7189), '72%');
  assert.equal(fmtPct(0.004), '0.4%');
  assert.equal(fmtPct(1), '100.0%');
  assert.equal(fmtTime(93713.28), '93.7 s');
  assert.equal(fmtTime(27.6), '27.6 ms');
  assert.equal(fmtTime(12, 'pass'), '12 pass');
  assert.equal(fmtTime(null), '–');
});

test('a column of times has one unit, from its largest value', () => {
  const secs = fmtTimeColumn([8050, 177.502, null, 11700]);
  assert.deepEqual([8050, 177.502, 11700].map(secs), ['8.05 s', '0.178 s', '11.7 s']);
  assert.equal(secs(null), '–');
  const ms = fmtTimeColumn([177.5, 4.2, 999.4]);
  assert.deepEqual([177.5, 4.2, 999.4].map(ms), ['177.5 ms', '4.20 ms', '999.4 ms']);   // under a second: ms
  assert.equal(fmtTimeColumn([])(12), '12 ms');                     // no values: ms
  assert.equal(fmtTimeColumn([1200, 30], 'pass')(1200), '1,200 pass');   // the unit cost model: its unit
});
