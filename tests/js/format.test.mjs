import test from 'node:test';
import assert from 'node:assert/strict';
import { fmt, fmtPct, fmtPctColumn, fmtTime, fmtTimeColumn } from '../../web/draw/format.js';

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

test('a column whose small values would read as 0.0xxx s stays in ms', () => {
  // a P/D fleet's replicas: a prefill replica's 2.14 s over decode replicas' 70.5 ms wrote "0.0705 s"
  const pd = fmtTimeColumn([2140.3, 70.5, 71.42]);
  assert.deepEqual([2140.3, 70.5, 71.42].map(pd), ['2,140 ms', '70.5 ms', '71.4 ms']);
  // the TTFT parts' p95s: one unit, ms (not "2.10 s" among "24.9 ms")
  const parts = fmtTimeColumn([338.3, 2100.2, 186.3, 46, 24.9]);
  assert.deepEqual([2100.2, 24.9].map(parts), ['2,100 ms', '24.9 ms']);
  // from 10 s up a column reads in seconds whatever its smallest (153,800 ms reads worse)
  const long = fmtTimeColumn([153800, 689.2, 22]);
  assert.deepEqual([153800, 689.2].map(long), ['153.8 s', '0.689 s']);
});

test('a column of equal seconds stays in seconds', () => {
  const tie = fmtTimeColumn([2346.2, 2381.4, 2346.2]);   // every router of a P/D fleet about alike
  assert.deepEqual([2346.2, 2381.4].map(tie), ['2.35 s', '2.38 s']);
});

test('a column of shares has one number of decimals, the most any of them needs', () => {
  const within = fmtPctColumn([1, 0.98, 0.5678, null]);
  assert.deepEqual([1, 0.98, 0.5678, null].map(within), ['100.0%', '98.0%', '56.8%', '–']);
  const plain = fmtPctColumn([0.98, 0.5678]);
  assert.deepEqual([0.98, 0.5678].map(plain), ['98%', '57%']);
  assert.equal(fmtPctColumn([0.004, 0.5])(0.5), '50.0%');    // a small share needs its decimal
});
