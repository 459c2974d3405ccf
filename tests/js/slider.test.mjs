import test from 'node:test';
import assert from 'node:assert/strict';
import { logStops, sliderScale } from '../../web/state/slider.js';

test('a log slider walks nice values, four a doubling, from end to end', () => {
  const stops = logStops(1, 4096);
  assert.deepEqual(stops.slice(0, 14), [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24]);
  assert.equal(stops.at(-1), 4096);
  for (const v of [32, 40, 64, 256, 1024, 2048]) assert.ok(stops.includes(v), `${v} is a stop`);
  for (let i = 1; i < stops.length; i++) {
    assert.ok(stops[i] > stops[i - 1]);
    const [a, b] = [stops[i - 1], stops[i]];
    assert.ok(b === a + 1 || b / a <= 1.25, `${a} -> ${b}: the next integer, or at most x1.25`);
  }
});

test('value -> position -> value is the identity on the stops; other values go to the nearest', () => {
  const s = sliderScale([1, 4096, 'log']);
  assert.equal(s.min, 0);
  assert.equal(s.max, logStops(1, 4096).length - 1);
  for (const v of logStops(1, 4096)) assert.equal(s.toValue(s.toPos(v)), v);
  assert.equal(s.toValue(s.toPos(33)), 32);
  assert.equal(s.toValue(s.toPos(1000)), 1024);
  assert.equal(s.toValue(s.toPos(0)), 1);       // below the range: its first stop
  assert.equal(s.toValue(s.toPos(9999)), 4096); // above: its last
  assert.equal(s.toValue(String(s.toPos(256))), 256);   // a range input's value is a string
});

test('a linear slider is its own positions', () => {
  const s = sliderScale([0, 4096, 16]);
  assert.deepEqual([s.min, s.max, s.step, s.log], [0, 4096, 16, false]);
  assert.equal(s.toValue('512'), 512);
  assert.equal(s.toPos(512), 512);
});
