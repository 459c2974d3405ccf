// KV-in-use strip under the vLLM-style timeline: KV tokens resident per pass (from the run-length
// passes_log) against the budget, on the timelines' shared pass axis, with preemptions marked.

import { setupCanvas, theme, font, fmt } from './canvas-kit.js';
import { GUTTER } from './timeline.js';

export function drawKV(canvas, result, view) {
  const H = view.lecture ? 70 : 48;
  const { ctx, w } = setupCanvas(canvas, H);
  const t = theme();
  const log = result.passes_log || {};
  const count = log.count || [], kv = log.kv_tokens || [];
  const budget = result.scenario?.server?.kv_tokens ?? null;
  const plotW = Math.max(10, w - GUTTER - 4);
  const passMax = Math.max(1, view.passMax || result.metrics?.passes || 1);
  const X = (p) => GUTTER + (p / passMax) * plotW;
  const top = 4, ph = H - 12;
  const peak = Math.max(1, budget ?? 0, ...kv);
  const Y = (v) => top + ph - (v / peak) * ph;

  ctx.fillStyle = t.idle; ctx.fillRect(GUTTER, top, plotW, ph);
  ctx.fillStyle = t.accent; ctx.globalAlpha = 0.35;
  ctx.beginPath(); ctx.moveTo(X(0), Y(0));
  let p = 0, lastX = -1;
  for (let i = 0; i < count.length; i++) {
    const x0 = X(p); p += count[i];
    const x1 = X(p);
    if (x1 - lastX < 0.5 && i < count.length - 1) continue;   // pixel-bounded: merge sub-pixel runs
    ctx.lineTo(x0, Y(kv[i])); ctx.lineTo(x1, Y(kv[i]));
    lastX = x1;
  }
  ctx.lineTo(X(p), Y(0)); ctx.closePath(); ctx.fill(); ctx.globalAlpha = 1;

  if (budget != null) {
    ctx.strokeStyle = t.bad; ctx.setLineDash([4, 3]); ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(GUTTER, Math.round(Y(budget)) + 0.5); ctx.lineTo(GUTTER + plotW, Math.round(Y(budget)) + 0.5); ctx.stroke();
    ctx.setLineDash([]);
  }
  // Preemption marks, when the log carries a per-run count.
  const pre = log.preemptions;
  if (pre) {
    ctx.fillStyle = t.bad;
    let q = 0;
    for (let i = 0; i < count.length; i++) {
      q += count[i];
      if (pre[i] > 0) { const x = X(q); ctx.beginPath(); ctx.moveTo(x, top + ph); ctx.lineTo(x - 3, top + ph + 6); ctx.lineTo(x + 3, top + ph + 6); ctx.fill(); }
    }
  }
  const ph2 = Math.min(passMax, view.playhead ?? passMax);
  if (ph2 < passMax) {
    ctx.strokeStyle = t.playhead; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(X(ph2), top); ctx.lineTo(X(ph2), top + ph); ctx.stroke();
  }
  ctx.font = font(10); ctx.fillStyle = t.muted; ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
  ctx.fillText('KV', GUTTER - 6, top + ph / 2);
  ctx.textAlign = 'left'; ctx.textBaseline = 'top';
  const label = `KV in use (peak ${fmt(result.metrics?.kv_peak_tokens)} tokens${budget != null ? ` of ${fmt(budget)}` : ', no budget set'}) · preemptions ${fmt(result.metrics?.preemptions)}`;
  ctx.fillStyle = t.ink;
  ctx.fillText(label, GUTTER + 4, top + 1);
}
