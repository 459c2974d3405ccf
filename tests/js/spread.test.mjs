// No data-sized array is spread into a call: Math.max(...xs) with ~125,000 values throws
// "Maximum call stack size exceeded" in Chromium (a valid vLLM run once showed no metric cards so).
// Spreading into Math.max/min, push, fromCharCode or apply is refused everywhere in web/, unless
// the line says why the array is small ("// bounded: ...").
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { maxOf, minOf } from '../../web/draw/format.js';

const WEB = new URL('../../web/', import.meta.url).pathname;
const RISKY = /(Math\.(max|min)|\.push|\.unshift|fromCharCode|\.apply)\(([^()\[\]]*,\s*)?\.\.\./;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.js') ? [p] : [];
  });
}

test('no spread of an array into a call that takes one argument per element', () => {
  const found = [];
  for (const file of sources(WEB)) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (RISKY.test(line) && !line.includes('// bounded:')) found.push(`${file.slice(WEB.length)}:${i + 1}`);
    });
  }
  assert.deepEqual(found, []);
  assert.ok(RISKY.test('Math.max(...xs)') && RISKY.test('a.push(...b)') && RISKY.test('Math.max(2, ...xs)'));  // it can fail
  assert.ok(!RISKY.test('a.push([x, ...b])'));
});

test('maxOf / minOf take arrays far beyond the call-stack limit', () => {
  const xs = Float64Array.from({ length: 1_000_000 }, (_, i) => (i * 7919) % 1_000_003);
  assert.throws(() => Math.max(...xs), RangeError);
  assert.equal(maxOf(xs), xs.reduce((a, b) => (b > a ? b : a)));
  assert.equal(minOf(xs), 0);
  assert.equal(maxOf([], 600), 600);
  assert.equal(minOf([3, 2], 5), 2);
});
