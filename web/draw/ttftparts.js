// The TTFT breakdown of a disaggregated fleet: a stacked bar per request (state/ttftparts.js
// folds them into the pixel columns), each part its colour, the tallest bar at the top.
// Pure draw(canvas, ...); drawing is bounded by pixels.

import { setupCanvas, theme, font, seriesColor } from './canvas-kit.js';
import { fmtTime, maxOf } from './format.js';

/** The colour of part i (parts in fleet/result.py order). */
export const partColor = (i) => seriesColor([0, 5, 6, 1, 4][i % 5]);

/**
 * view: {cols (a column per part), ttft, fold ({ids, bar}), unit, height, hoverId}.
 */
export function drawParts(canvas, view) {
  const t = theme();
  const { ctx, w, h } = setupCanvas(canvas, view.height);
  const { ids, bar } = view.fold;
  const top = Math.ceil(14 * t.scale), base = h - 1, plotH = base - top;
  let most = 0;
  for (const id of ids) most = Math.max(most, view.ttft[id]);
  const scale = most > 0 ? plotH / most : 0;
  ctx.fillStyle = t.grid;
  ctx.fillRect(0, base, w, 1);
  ids.forEach((id, k) => {
    const x = k * bar, bw = Math.max(1, bar - (bar >= 4 ? 1 : 0));
    let y = base;
    view.cols.forEach((col, i) => {
      const hh = col[id] * scale;
      if (hh <= 0) return;
      ctx.fillStyle = partColor(i);
      ctx.fillRect(x, y - hh, bw, hh);
      y -= hh;
    });
    if (id === view.hoverId) { ctx.strokeStyle = t.ink; ctx.lineWidth = 1.5; ctx.strokeRect(x + 0.5, y, bw - 1, base - y); }
  });
  ctx.font = font(10.5); ctx.fillStyle = t.muted; ctx.textBaseline = 'top'; ctx.textAlign = 'left';
  ctx.fillText(`TTFT, longest ${fmtTime(maxOf(ids.length ? Array.from(ids, (i) => view.ttft[i]) : [], 0), view.unit)}`, 2, 1);
}
