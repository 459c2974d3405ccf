// Timeline hit-testing: the segment under a (slot, pass), read from the result's tables.
import test from 'node:test';
import assert from 'node:assert/strict';
import { engine } from './engine.mjs';
import { setRecords, asTables } from '../../web/state/records.js';
import { indexSegments, segmentAt, hitTest, doneBy, timeAt, laneGeometry, laneHeight, passAxis, axisHeight } from '../../web/draw/timeline.js';

const { schema } = engine();
setRecords(schema.records);

function result() {
  // two slots: request 0 prefills passes 1-2 then emits 3-5 in slot 0; request 1 emits 1-4 in slot 1
  const req = (id, done) => Object.fromEntries(schema.records.request.map((f) => [f.name, f.name === 'id' ? id : f.name === 'done_pass' ? done : 0]));
  return asTables({
    segments: [[0, 0, 'prefill', 1, 2], [0, 0, 'useful', 3, 5], [1, 1, 'useful', 1, 4]],
    requests: [req(0, 5), req(1, 4)],
    metrics: { passes: 5 },
    passes_log: Object.fromEntries(schema.records.passes_log.map((f) => [f.name, { count: [2, 2, 1], cost: [10, 3, 2], start: [0, 20, 30] }[f.name] || [0, 0, 0]])),
  });
}

test('segmentAt finds the segment by binary search, idle between and after', () => {
  const idx = indexSegments(result(), 2);
  assert.equal(segmentAt(idx, 0, 1).phase, 'prefill');
  assert.equal(segmentAt(idx, 0, 3).phase, 'useful');
  assert.equal(segmentAt(idx, 0, 3).request.id, 0);
  assert.equal(segmentAt(idx, 1, 2).request.id, 1);
  assert.equal(segmentAt(idx, 1, 5).phase, 'idle');
  assert.equal(segmentAt(idx, 1, 6).phase, 'after');
});

test('doneBy and timeAt read the requests and the run-length passes log', () => {
  const r = result();
  assert.equal(doneBy(r, 4), 1);
  assert.equal(doneBy(r, 5), 2);
  assert.equal(timeAt(r, 1), 10);
  assert.equal(timeAt(r, 3), 23);
  assert.equal(timeAt(r, 5), 32);
});

test('one lane geometry: drawing, hit tests and the block view read the same axis and rows', () => {
  // theme() reads the stylesheet's variables; Node has none, so the default chart scale applies
  globalThis.document ??= { documentElement: {} };
  globalThis.getComputedStyle ??= () => ({ getPropertyValue: () => '' });
  const views = [{ slots: 8, passMax: 37 }, { slots: 4096, passMax: 5, lecture: true },
    { slots: 1, passMax: 0, compact: true, rowsPx: 50 }];
  for (const view of views) {
    const g = laneGeometry(600, view, 12);
    assert.equal(g.height, laneHeight(view));
    assert.equal(g.height, Math.ceil(g.rowsH) + axisHeight());
    assert.equal(g.passMax, Math.max(1, view.passMax || 12));
    assert.equal(g.x(0), g.gutter);
    assert.ok(Math.abs(g.x(g.passMax) - (g.gutter + g.plotW)) < 1e-9);
    // the middle of pass p's column is pass p, in the timeline and in the block view under it
    const blocks = passAxis(600, view, 12);
    for (let p = 1; p <= g.passMax; p++) {
      const mid = (g.x(p - 1) + g.x(p)) / 2;
      assert.equal(g.passAt(mid), p);
      assert.equal(blocks.passAt(mid), p);
      assert.equal(blocks.x(p), g.x(p));
    }
  }
});

test("a lane's rows stay within twice their usual height however many slots it has", () => {
  globalThis.document ??= { documentElement: {} };
  globalThis.getComputedStyle ??= () => ({ getPropertyValue: () => '' });
  const rows = (view) => laneGeometry(600, view, 12).rowsH;
  for (const [mode, usual] of [[{}, 210], [{ compact: true }, 128], [{ lecture: true }, 240]]) {
    assert.equal(rows({ slots: 8, ...mode }), Math.min(usual, 8 * (mode.compact ? 16 : mode.lecture ? 72 : 40)));
    assert.equal(rows({ slots: 256, ...mode }), Math.max(usual, 256 * 0.75));   // slots stay apart
    for (const slots of [1024, 4096, 65536]) assert.ok(rows({ slots, ...mode }) <= 2 * usual + 1e-9, `${slots} slots`);
  }
});

test('a hover over rows thinner than a pixel finds the busy slot the pixel shows', () => {
  globalThis.document ??= { documentElement: {} };
  globalThis.getComputedStyle ??= () => ({ getPropertyValue: () => '' });
  // 4,096 slots, request 0 in slot 3 only: a pixel row holds ~10 slots, the first of them idle
  const req = Object.fromEntries(schema.records.request.map((f) => [f.name, f.name === 'done_pass' ? 5 : 0]));
  const r = asTables({ segments: [[3, 0, 'useful', 1, 5]], requests: [req], metrics: { passes: 5 },
    passes_log: Object.fromEntries(schema.records.passes_log.map((f) => [f.name, [0]])) });
  const view = { slots: 4096, passMax: 5 };
  const g = laneGeometry(600, view, 5);
  assert.ok(g.rowH < 0.5);
  const hit = hitTest({ clientWidth: 600 }, r, view, (g.x(1) + g.x(2)) / 2, 0.2);
  assert.equal(hit.slot, 3);
  assert.equal(hit.request.id, 0);
  assert.equal(hitTest({ clientWidth: 600 }, r, view, (g.x(1) + g.x(2)) / 2, 3).phase, 'idle');   // a pixel of idle slots
});
