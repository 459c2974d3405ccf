// KV-in-use strip under the vllm timeline: KV tokens resident per pass (from the run-length
// passes_log) against the budget, on the timelines' shared pass axis, with preemptions marked.

import { setupCanvas, theme, font } from './canvas-kit.js';
import { fmt } from './format.js';
import { GUTTER } from './timeline.js';
import { count } from '../state/records.js';

const preCache = new WeakMap();
/**
 * Passes at which a request was preempted, read from the segments: a preempted request's
 * residence breaks off and later restarts, so every gap between two of its segments ends a stay.
 */
function preemptionPasses(result) {
  let out = preCache.get(result);
  if (out) return out;
  const pre = result.requests.columns.preemptions;
  const { slot, request, first_pass: first, last_pass: last } = result.segments.columns;
  const byReq = new Map();
  for (let i = 0, n = count(result.segments); i < n; i++) {
    const rid = request[i];
    if (!(rid >= 0 && pre[rid] > 0)) continue;   // a request's id is its row
    if (!byReq.has(rid)) byReq.set(rid, []);
    byReq.get(rid).push([first[i], last[i], slot[i]]);
  }
  out = [];
  for (const segs of byReq.values()) {
    segs.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < segs.length; i++) if (segs[i][0] > segs[i - 1][1] + 1 || segs[i][2] !== segs[i - 1][2]) out.push(segs[i - 1][1]);
  }
  out.sort((a, b) => a - b);
  preCache.set(result, out);
  return out;
}

export function drawKV(canvas, result, view) {
  const H = view.lecture ? 80 : 56;
  const { ctx, w } = setupCanvas(canvas, H);
  const t = theme();
  const { count: runs, kv_tokens: kv } = result.passes_log.columns;
  const budget = view.kvBudget ?? null;
  const plotW = Math.max(10, w - GUTTER - 4);
  const passMax = Math.max(1, view.passMax || result.metrics?.passes || 1);
  const X = (p) => GUTTER + (p / passMax) * plotW;
  const top = 4, ph = H - 12;
  let peak = Math.max(1, budget ?? 0);
  for (const v of kv) if (v > peak) peak = v;     // a loop: a spread of a long column overflows the stack
  const Y = (v) => top + ph - (v / peak) * ph;

  ctx.fillStyle = t.idle; ctx.fillRect(GUTTER, top, plotW, ph);
  ctx.fillStyle = t.accent; ctx.globalAlpha = 0.35;
  ctx.beginPath(); ctx.moveTo(X(0), Y(0));
  let p = 0, lastX = -1;
  for (let i = 0; i < runs.length; i++) {
    const x0 = X(p); p += runs[i];
    const x1 = X(p);
    if (x1 - lastX < 0.5 && i < runs.length - 1) continue;   // pixel-bounded: merge sub-pixel runs
    ctx.lineTo(x0, Y(kv[i])); ctx.lineTo(x1, Y(kv[i]));
    lastX = x1;
  }
  ctx.lineTo(X(p), Y(0)); ctx.closePath(); ctx.fill(); ctx.globalAlpha = 1;

  if (budget != null) {
    ctx.strokeStyle = t.bad; ctx.setLineDash([4, 3]); ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(GUTTER, Math.round(Y(budget)) + 0.5); ctx.lineTo(GUTTER + plotW, Math.round(Y(budget)) + 0.5); ctx.stroke();
    ctx.setLineDash([]);
  }
  // Preemption marks: ▲ under the pass after which a request lost its slot.
  ctx.fillStyle = t.bad;
  let lastPx = -Infinity;
  for (const q of preemptionPasses(result)) {
    const x = X(q);
    if (x - lastPx < 2) continue;       // pixel-bounded
    lastPx = x;
    ctx.beginPath(); ctx.moveTo(x, top + ph - 4); ctx.lineTo(x - 4, top + ph + 5); ctx.lineTo(x + 4, top + ph + 5); ctx.fill();
  }
  const ph2 = Math.min(passMax, view.playhead ?? passMax);
  if (ph2 < passMax) {
    ctx.strokeStyle = t.playhead; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(X(ph2), top); ctx.lineTo(X(ph2), top + ph); ctx.stroke();
  }
  ctx.font = font(10); ctx.fillStyle = t.muted; ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
  ctx.fillText('KV', GUTTER - 6, top + ph / 2);
  // Label in the empty space right of the run when there is room, else over a backing box.
  const label = `KV in use: peak ${fmt(result.metrics?.kv_peak_tokens)}${budget != null ? ` of ${fmt(budget)}` : ' (no budget set)'} tokens · ▲ ${fmt(result.metrics?.preemptions)} preemptions`;
  ctx.font = font(11); ctx.textBaseline = 'middle';
  const tw = ctx.measureText(label).width, runEnd = X(p);
  let lx = runEnd + 8;
  if (lx + tw > w - 4) {
    lx = GUTTER + 4;
    ctx.fillStyle = t.panel; ctx.globalAlpha = 0.85; ctx.fillRect(lx - 2, top + 1, tw + 4, 14); ctx.globalAlpha = 1;
  }
  ctx.textAlign = 'left'; ctx.fillStyle = t.ink;
  ctx.fillText(label, lx, lx > runEnd ? top + ph / 2 : top + 8);
}
