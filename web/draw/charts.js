// Sweep charts drawn with the timeline's canvas helpers: one small line-chart function,
// columnar points in, canvas out. Points not computed yet are shown as faint ticks, so a
// sweep that is still running (or was cancelled) reads honestly.

import { setupCanvas, theme, niceTicks, tickLabels, font } from './canvas-kit.js';
import { fmt, maxOf, minOf } from './format.js';

const LINE = 14;   // px (x the chart scale) between legend lines

/** Where each legend entry goes: after the y title on the first line, up to the y2 title, and on
 *  further lines (from the plot's left edge) when a line is full; `extra`: the height the lines
 *  beyond the first take. */
function layoutLegend(ctx, spec, w, k) {
  ctx.font = font(11, 600);
  const first = Math.max(52 * k + 8, 4 + ctx.measureText(spec.y.label).width + 14);
  const right = spec.y2 ? w - 4 - ctx.measureText(spec.y2.label).width - 16 : w - 4;
  ctx.font = font(11);
  const entries = [
    ...spec.series.filter((s) => s.name).map((s) => ({ series: s, width: 16 * k + ctx.measureText(s.name).width, gap: 12 * k })),
    ...(spec.keys || []).map((key) => { const text = `${key.symbol} ${key.text}`; return { key, text, width: ctx.measureText(text).width, gap: 14 * k }; }),
  ];
  let x = first, y = 3, lines = 1;
  const items = [];
  for (const e of entries) {
    if (x > first && x + e.width > right) { x = 52 * k + 8; y += LINE * k; lines += 1; }
    items.push({ ...e, x, y });
    x += e.width + e.gap;
  }
  return { items, right, extra: (lines - 1) * LINE * k };
}

/**
 * spec: { height, x: {label, min, max, log2?, fmt?}, y: {label, min?, max?, fmt?, color?},
 *         y2?: {...}, series: [{name, color, axis: 'y'|'y2', points: [[x, y|null], ...], dash?}],
 *         (a point [x, y, label, cross]: cross draws it as ✗)
 *         hlines?: [{y, axis, label, color}], marks?: [{x, label, color}], pending?: [x, ...],
 *         keys?: [{symbol, text, color?}] (legend entries for the marks: ▲ beyond the axis, …) }
 */
export function lineChart(canvas, spec) {
  const t = theme();
  const { ctx, w, h } = setupCanvas(canvas, (spec.height ?? 240) * t.scale * t.heightScale);
  const k = t.scale;
  const legend = layoutLegend(ctx, spec, w, k);
  const m = { l: 52 * k, r: spec.y2 ? 56 * k : 16, t: 22 * k + legend.extra, b: 38 * k };
  const pw = Math.max(10, w - m.l - m.r), ph = Math.max(10, h - m.t - m.b);

  const xs = spec.x;
  const tx = xs.log2 ? (v) => Math.log2(v) : (v) => v;
  const x0 = tx(xs.min), x1 = tx(xs.max);
  const X = (v) => m.l + ((tx(v) - x0) / (x1 - x0 || 1)) * pw;

  const scaleFor = (axis) => {
    const pts = spec.series.filter((s) => (s.axis || 'y') === axis).flatMap((s) => s.points.map((p) => p[1])).filter((v) => v != null);
    const hl = (spec.hlines || []).filter((l) => (l.axis || 'y') === axis).map((l) => l.y);
    const ax = spec[axis];
    let lo = ax.min ?? minOf(hl, minOf(pts, 0));
    let hi = ax.max ?? maxOf(hl, maxOf(pts, lo + 1e-9));
    if (!(hi > lo)) hi = lo + 1;
    const ticks = niceTicks(lo, hi * (ax.max != null ? 1 : 1.05), 4);
    hi = Math.max(hi, ticks[ticks.length - 1]);
    return { lo, hi, ticks, Y: (v) => m.t + ph - ((v - lo) / (hi - lo)) * ph };
  };
  const sy = scaleFor('y');
  const sy2 = spec.y2 ? scaleFor('y2') : null;

  // Grid + axes.
  ctx.font = font(10.5); ctx.lineWidth = 1;
  ctx.strokeStyle = t.grid; ctx.fillStyle = t.muted;
  ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
  // every tick label's box [left, top, right, bottom] (canvas.dataset.ticks: the test hook that
  // none overprints another; in lecture type the last x label ran into the y2 axis' "0%": "10240%")
  const boxes = [];
  const th = 10.5 * k;
  const label = (text, x, y, align, base) => {
    const wd = ctx.measureText(text).width;
    const left = align === 'right' ? x - wd : align === 'center' ? x - wd / 2 : x;
    const top = base === 'middle' ? y - th / 2 : y;
    boxes.push([Math.round(left), Math.round(top), Math.round(left + wd), Math.round(top + th)]);
    ctx.fillText(text, x, y);
  };
  const ylabels = tickLabels(sy.ticks, spec.y.fmt || fmt);
  sy.ticks.forEach((v, i) => {
    const y = Math.round(sy.Y(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(m.l, y); ctx.lineTo(m.l + pw, y); ctx.stroke();
    ctx.fillStyle = spec.y.color || t.muted;
    label(ylabels[i], m.l - 6, y, 'right', 'middle');
  });
  if (sy2) {
    ctx.textAlign = 'left';
    ctx.fillStyle = spec.y2.color || t.muted;
    const labels = tickLabels(sy2.ticks, spec.y2.fmt || fmt);
    sy2.ticks.forEach((v, i) => label(labels[i], m.l + pw + 6, sy2.Y(v), 'left', 'middle'));
  }
  const xticks = xs.ticks || niceTicks(xs.min, xs.max, Math.max(2, Math.floor(pw / 70)));
  const xlabels = tickLabels(xticks, xs.fmt || (xs.ticks ? fmt : null));   // generated ticks: their own decimals
  ctx.textAlign = 'center'; ctx.textBaseline = 'top'; ctx.fillStyle = t.muted; ctx.strokeStyle = t.faint;
  // too many labels for the width (1 … 1,024 on a phone): every step-th one, the last always
  const widest = maxOf(xlabels.map((l) => ctx.measureText(l).width), 0);
  const step = Math.max(1, Math.ceil((widest + 6) / (pw / Math.max(1, xticks.length - 1))));
  // a label is centred under its tick but kept over the plot's width: the first and last ones
  // do not reach under the y axes' labels (an end label shifted onto its neighbour drops that one)
  const shown = [];
  xticks.forEach((v, i) => {
    const x = Math.round(X(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(x, m.t + ph); ctx.lineTo(x, m.t + ph + 4); ctx.stroke();
    if ((xticks.length - 1 - i) % step) return;
    const half = ctx.measureText(xlabels[i]).width / 2;
    const cx = Math.min(Math.max(x, m.l + half), m.l + pw - half);
    const prev = shown[shown.length - 1];
    if (prev && prev.cx + prev.half + 4 > cx - half) {
      if (i !== xticks.length - 1) return;     // no room: the last label stays, its neighbour goes
      shown.pop();
    }
    shown.push({ text: xlabels[i], cx, half });
  });
  for (const { text, cx } of shown) label(text, cx, m.t + ph + 6, 'center', 'top');
  canvas.dataset.ticks = JSON.stringify(boxes);
  ctx.strokeStyle = t.muted;
  ctx.beginPath(); ctx.moveTo(m.l + 0.5, m.t); ctx.lineTo(m.l + 0.5, m.t + ph + 0.5); ctx.lineTo(m.l + pw, m.t + ph + 0.5); ctx.stroke();

  // Axis titles.
  ctx.font = font(11, 600); ctx.fillStyle = t.muted; ctx.textAlign = 'center'; ctx.textBaseline = 'bottom';
  ctx.fillText(xs.label, m.l + pw / 2, h - 2);
  ctx.textAlign = 'left'; ctx.textBaseline = 'top';
  ctx.fillStyle = spec.y.color || t.muted;
  ctx.fillText(spec.y.label, 4, 3);
  if (sy2) { ctx.textAlign = 'right'; ctx.fillStyle = spec.y2.color || t.muted; ctx.fillText(spec.y2.label, w - 4, 3); }

  // Pending x positions (not computed yet).
  ctx.fillStyle = t.faint;
  for (const v of spec.pending || []) ctx.fillRect(X(v) - 1, m.t + ph - 8, 2, 8);

  // Reference lines (e.g. the SLO).
  for (const l of spec.hlines || []) {
    const S = (l.axis || 'y') === 'y2' ? sy2 : sy;
    const y = Math.round(S.Y(l.y)) + 0.5;
    ctx.strokeStyle = l.color || t.bad; ctx.setLineDash([5, 4]); ctx.lineWidth = 1.2;
    ctx.beginPath(); ctx.moveTo(m.l, y); ctx.lineTo(m.l + pw, y); ctx.stroke(); ctx.setLineDash([]);
    ctx.font = font(10.5, 600); ctx.fillStyle = l.color || t.bad; ctx.textAlign = l.align === 'left' ? 'left' : 'right'; ctx.textBaseline = 'bottom';
    ctx.fillText(l.label, l.align === 'left' ? m.l + 4 : m.l + pw - 2, y - 2);
  }

  // Marks (e.g. the chosen setting).
  for (const mk of spec.marks || []) {
    const x = Math.round(X(mk.x)) + 0.5;
    ctx.strokeStyle = mk.color || t.ink; ctx.lineWidth = 1; ctx.setLineDash([2, 3]);
    ctx.beginPath(); ctx.moveTo(x, m.t); ctx.lineTo(x, m.t + ph); ctx.stroke(); ctx.setLineDash([]);
    ctx.font = font(10.5, 600); ctx.fillStyle = mk.color || t.ink; ctx.textBaseline = 'bottom';
    ctx.textAlign = x > m.l + pw * 0.6 ? 'right' : 'left';
    ctx.fillText(mk.label, x + (ctx.textAlign === 'left' ? 4 : -4), m.t + ph - (mk.row || 0) * 14 - 3);
  }

  // Series.
  for (const s of spec.series) {
    const S = (s.axis || 'y') === 'y2' ? sy2 : sy;
    const pts = s.points.filter((p) => p[1] != null).sort((a, b) => a[0] - b[0]);
    ctx.strokeStyle = s.color; ctx.fillStyle = s.color; ctx.lineWidth = 2.2; ctx.setLineDash(s.dash || []);
    // Values above an explicit axis max are drawn on the top edge as ▲ (off the scale).
    const Yc = (y) => S.Y(Math.min(y, S.hi));
    ctx.save();
    ctx.beginPath(); ctx.rect(m.l, m.t - 6, pw, ph + 6); ctx.clip();
    ctx.beginPath();
    pts.forEach(([x, y], i) => (i ? ctx.lineTo(X(x), Yc(y)) : ctx.moveTo(X(x), Yc(y))));
    ctx.stroke(); ctx.setLineDash([]);
    ctx.restore();
    for (const [x, y, , cross] of pts) {
      ctx.beginPath();
      if (cross) {   // a point that fails (the key says what): ✗
        const px = X(x), py = Yc(y), r = s.highlight === x ? 5 : 4;
        ctx.moveTo(px - r, py - r); ctx.lineTo(px + r, py + r); ctx.moveTo(px + r, py - r); ctx.lineTo(px - r, py + r);
        ctx.lineWidth = 2.2; ctx.stroke(); continue;
      }
      if (y > S.hi) { const px = X(x), py = S.Y(S.hi); ctx.moveTo(px, py - 6); ctx.lineTo(px - 5, py + 3); ctx.lineTo(px + 5, py + 3); ctx.closePath(); }
      else ctx.arc(X(x), S.Y(y), s.highlight === x ? 5 : 3, 0, 2 * Math.PI);
      ctx.fill();
    }
    for (const [x, y, label] of pts) {
      if (!label) continue;
      ctx.font = font(10.5, 600); ctx.textAlign = 'center'; ctx.textBaseline = 'bottom';
      // centred above its point, but inside the plot (at an end it ran into the axis's labels)
      const half = ctx.measureText(label).width / 2;
      ctx.fillText(label, Math.min(Math.max(X(x), m.l + half + 2), m.l + pw - half - 2), Yc(y) - 7);
    }
  }

  // Legend: the series, then the keys for the marks, in as many lines as the width needs (laid out
  // before the plot, whose top margin makes room for them). data-legend: each entry's box and the
  // plot's top, [[x, y, width], ...] then [top, right] (the test hook that nothing overprints).
  canvas.dataset.legend = JSON.stringify([legend.items.map((it) => [Math.round(it.x), it.y, Math.round(it.width)]), [Math.round(m.t), Math.round(legend.right)]]);
  for (const it of legend.items) {
    if (it.series) {
      ctx.fillStyle = it.series.color; ctx.fillRect(it.x, it.y + 4 * k, 12 * k, 3 * k);
      ctx.font = font(11); ctx.fillStyle = t.ink; ctx.textBaseline = 'top'; ctx.textAlign = 'left';
      ctx.fillText(it.series.name, it.x + 16 * k, it.y);
    } else {
      ctx.font = font(11); ctx.fillStyle = it.key.color || t.ink; ctx.textBaseline = 'top'; ctx.textAlign = 'left';
      ctx.fillText(it.text, it.x, it.y);
    }
  }
  return { X, Y: sy.Y, Y2: sy2?.Y };
}
