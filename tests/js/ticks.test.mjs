import test from 'node:test';
import assert from 'node:assert/strict';
import { niceTicks, tickLabels, tickDecimals } from '../../web/draw/canvas-kit.js';
import { fmt } from '../../web/draw/format.js';

const number = (label) => Number(label.replace(/,/g, ''));

// The skew sweep's axis (0 to 0.9, generated ticks, lineChart asks for one per 70 px) at every
// chart width from a phone to a 4K screen.
test('generated axis ticks are distinct and exact at every width', () => {
  for (let pw = 60; pw <= 3800; pw += 10) {
    const ticks = niceTicks(0, 0.9, Math.max(2, Math.floor(pw / 70)));
    const labels = tickLabels(ticks);
    assert.equal(new Set(labels).size, labels.length, `${pw} px: ${labels.join(' ')}`);
    labels.forEach((l, i) => assert.ok(Math.abs(number(l) - ticks[i]) < 1e-9, `${pw} px: "${l}" for ${ticks[i]}`));
  }
  // 25 ticks over 0–0.9 are 0.05 apart: two decimals (it read "0.1 0.1 0.1 … 0.3 0.3")
  assert.deepEqual(tickLabels(niceTicks(0, 0.9, 25)).slice(0, 4), ['0.00', '0.05', '0.10', '0.15']);
  assert.deepEqual(tickLabels(niceTicks(0, 0.9, 4)), ['0.00', '0.25', '0.50', '0.75']);
  assert.deepEqual(tickLabels(niceTicks(0, 0.9, 9)), ['0.0', '0.1', '0.2', '0.3', '0.4', '0.5', '0.6', '0.7', '0.8', '0.9']);
  assert.deepEqual(tickLabels(niceTicks(0, 5000, 5)), ['0', '1,000', '2,000', '3,000', '4,000', '5,000']);
});

test("an axis's own format is kept while it tells the ticks apart", () => {
  assert.deepEqual(tickLabels([0, 1000, 2000], fmt), ['0', '1,000', '2,000']);
  assert.deepEqual(tickLabels([0, 0.25, 0.5], (v) => `${Math.round(v * 100)}%`), ['0%', '25%', '50%']);
  // a format that writes two ticks alike gives way to the numbers
  assert.deepEqual(tickLabels([0, 0.05, 0.1, 0.15], (v) => v.toFixed(1)), ['0.00', '0.05', '0.10', '0.15']);
  assert.equal(tickDecimals([0, 2.5, 5]), 1);
  assert.equal(tickDecimals([0, 1000]), 0);
  assert.equal(tickDecimals([0.1, 0.2, 0.30000000000000004]), 1);
});
