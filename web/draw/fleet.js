// A replica's lane in the fleet figure: its batch (rows running, shaded, as a share of its slots)
// and its KV cache (a line, as a share of its pool) over the fleet's time, and a tick per request
// it was sent, at its arrival (short: its prompt's prefix was cached there; tall: prefilled in
// full). Pure draw(canvas, ...) and the shared time axis; drawing is bounded by pixels (every run
// of the passes log is folded into the pixel columns it covers, and each column drawn once).

import { setupCanvas, theme, niceTicks, font } from './canvas-kit.js';
import { fmtTime } from './format.js';
import { runEnd } from '../state/fleet.js';

const PAD = 3;                 // px left and right of the time axis

/** The time axis every lane shares: x(t) in CSS px for a canvas `width` wide, t0..t1 = 0..makespan. */
export function timeAxis(width, t1) {
  const w = Math.max(10, width - 2 * PAD);
  const span = t1 > 0 ? t1 : 1;
  return { x: (t) => PAD + (t / span) * w, t: (x) => ((x - PAD) / w) * span };
}

/** The passes log folded into `width` pixel columns: the most rows and KV tokens in each. */
export function columns(log, width, t1) {
  const rows = new Float64Array(width), kv = new Float64Array(width);
  const { start, count, cost, cost_last: last, rows: r, kv_tokens: k } = log.columns;
  const ax = timeAxis(width, t1);
  for (let i = 0, n = log.$table; i < n; i++) {
    const a = Math.max(0, Math.floor(ax.x(start[i])));
    const b = Math.min(width - 1, Math.max(a, Math.ceil(ax.x(runEnd(start[i], count[i], cost[i], last[i]))) - 1));
    for (let px = a; px <= b; px++) {
      if (r[i] > rows[px]) rows[px] = r[i];
      if (k[i] > kv[px]) kv[px] = k[i];
    }
  }
  return { rows, kv };
}

/** The opacity of a lane's request ticks: n ticks over px pixel columns; fainter once they pile
 *  up (more than one in two columns), never below 0.2. */
export function tickAlpha(n, px) {
  const perPixel = n / Math.max(1, px);
  return perPixel > 0.5 ? Math.max(0.2, 0.5 / perPixel) : 1;
}

/**
 * lane: {log, ids (the requests it was sent), requests (the fleet's requests table)};
 * view: {t1 (the fleet's makespan), slots, kvMax (tokens at the lane's top), height, hoverId}.
 */
export function drawLane(canvas, lane, view) {
  const t = theme();
  const { ctx, w, h } = setupCanvas(canvas, view.height);
  const px = Math.max(1, Math.floor(w));
  const { rows, kv } = columns(lane.log, px, view.t1);
  const top = 2, base = h - 1, plotH = base - top;
  ctx.fillStyle = t.grid;
  ctx.fillRect(0, base, w, 1);
  // the requests it was sent, at their arrival: short = prefix cached here, tall = prefilled in
  // full; under the batch and the KV line, and fainter where they pile up (a whole trace: several
  // a pixel, which drew one solid band over both)
  const ax = timeAxis(w, view.t1);
  const { arrive, cached_tokens: cached, prompt } = lane.requests.columns;
  const tick = (id) => {
    const x = Math.round(ax.x(arrive[id])) + 0.5;
    const hit = cached[id] * 2 >= prompt[id];
    ctx.strokeStyle = id === view.hoverId ? t.ink : hit ? t.good : t.bad;
    ctx.beginPath(); ctx.moveTo(x, base); ctx.lineTo(x, base - (hit ? 0.22 : 0.45) * plotH); ctx.stroke();
  };
  ctx.globalAlpha = tickAlpha(lane.ids.length, px);
  ctx.lineWidth = 1;
  for (const id of lane.ids) if (id !== view.hoverId) tick(id);
  // the batch: rows running over the slots, shaded
  ctx.fillStyle = t.accent;
  ctx.globalAlpha = 0.28;
  for (let x = 0; x < px; x++) {
    if (!rows[x]) continue;
    const hh = Math.max(1, (Math.min(rows[x], view.slots) / view.slots) * plotH);
    ctx.fillRect(x, base - hh, 1, hh);
  }
  ctx.globalAlpha = 1;
  // the KV cache: a line over the pool (or the fleet's largest KV when pools are unlimited)
  if (view.kvMax > 0) {
    ctx.strokeStyle = t.alt;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let x = 0; x < px; x++) {
      const y = base - Math.min(1, kv[x] / view.kvMax) * plotH;
      if (x) ctx.lineTo(x + 0.5, y); else ctx.moveTo(0.5, y);
    }
    ctx.stroke();
  }
  if (view.hoverId != null && lane.ids.includes(view.hoverId)) {   // the hovered request: on top
    ctx.lineWidth = 3;
    tick(view.hoverId);
  }
}

/** The time axis under the lanes: ticks in the cost unit. */
export function drawTimeAxis(canvas, t1, unit) {
  const t = theme();
  const { ctx, w, h } = setupCanvas(canvas, Math.ceil(18 * t.scale));
  const ax = timeAxis(w, t1);
  ctx.font = font(10.5); ctx.fillStyle = t.muted; ctx.strokeStyle = t.faint;
  ctx.textBaseline = 'top';
  const ticks = niceTicks(0, t1, Math.max(2, Math.floor(w / 90)));
  ticks.forEach((v, i) => {
    const x = Math.round(ax.x(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, 4); ctx.stroke();
    ctx.textAlign = i === 0 ? 'left' : x > w - 30 ? 'right' : 'center';
    ctx.fillText(v === 0 ? '0' : fmtTime(v, unit), x, 5);
  });
  return h;
}
