import test from 'node:test';
import assert from 'node:assert/strict';
import { createEstimate, leftText, progressText } from '../../web/ui/runprogress.js';

test('the time left is the remaining requests at the rate measured', () => {
  const est = createEstimate({ windowMs: 8000, minSpanMs: 1000 });
  const p = (done, t) => est.add({ done, total: 10000, unit: 'requests' }, t);
  assert.equal(p(0, 0).leftMs, null);              // nothing measured yet
  assert.equal(p(100, 500).leftMs, null);          // under a second of measurement
  const a = p(1000, 2000);                         // 1,000 in 2 s: 500 a second
  assert.equal(a.fraction, 0.1);
  assert.equal(a.leftMs, 18000);                   // 9,000 left at 500/s
  // the rate of the last seconds: slower now (the second lane), so more time left
  for (let t = 3000, d = 1000; t <= 20000; t += 1000) { d += 100; p(d, t); }
  const b = p(2900, 21000);                        // 100 a second for the last 8 s
  assert.ok(Math.abs(b.leftMs - 71000) < 1, b.leftMs);
});

test('a smaller count is another run: measured afresh', () => {
  const est = createEstimate({ minSpanMs: 1000 });
  est.add({ done: 0, total: 100, unit: 'requests' }, 0);
  est.add({ done: 50, total: 100, unit: 'requests' }, 1000);
  assert.equal(est.add({ done: 10, total: 100, unit: 'requests' }, 1500).leftMs, null);
});

test('progress and the time left in words', () => {
  assert.equal(leftText(null), 'estimating the time left');
  assert.equal(leftText(3000), 'a few seconds left');
  assert.equal(leftText(12400), 'about 12 s left');
  assert.equal(leftText(80000), 'about 1 min 20 s left');
  assert.equal(leftText(119000), 'about 2 min left');
  assert.equal(progressText({ done: 7300, total: 10000, unit: 'requests', leftMs: 12000 }, 2),
    '7,300 of 10,000 requests (2 lanes × 5,000) · about 12 s left');
  assert.equal(progressText({ done: 300, total: 300, unit: 'requests', leftMs: 0 }, 1), '300 of 300 requests · building the result');
  assert.equal(progressText({ done: 2, total: 8, unit: 'points', leftMs: null }, 2), '2 of 8 points · estimating the time left');
});

test('a compare: the lane running at its own rate, the lanes to come at the slowest seen', () => {
  const est = createEstimate({ windowMs: 8000, minSpanMs: 1000, parts: 3 });
  const p = (done, t) => est.add({ done, total: 3000, unit: 'requests' }, t);
  p(0, 0);
  p(500, 1000);                                    // lane 1: 0.5 a ms
  assert.equal(p(900, 1800).leftMs, 100 / 0.5 + 2000 / 0.5);
  // lane 2 began after a pause (lane 1's result built): 1,000 ms beyond its 200 requests' 400
  const b = p(1100, 3200);
  const pause = 3200 - 1800 - 200 / 0.5;
  assert.equal(pause, 1000);
  assert.equal(b.leftMs, 900 / 0.5 + 1000 / 0.5 + 2 * pause);   // lane 1's rate for now
  p(1200, 4200);
  const c = p(1350, 5700);                         // lane 2: 0.1 a ms over 2.5 s, the slowest
  assert.ok(Math.abs(c.leftMs - (650 / 0.1 + 1000 / 0.1 + 2 * pause)) < 1e-6, c.leftMs);
});
