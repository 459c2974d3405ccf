// The slot × pass occupancy timeline: pure draw(canvas, result, view) plus hit testing.
// Rows are slots, columns are forward passes on a scale shared by every lane, so the lanes'
// lengths compare directly. Draw calls are bounded by pixels: a segment that lands in a pixel
// column already painted is skipped, so a huge run issues about as many fills as a small one
// (the loop over segments stays linear; the engine caps them at 250,000 per result).

import { colorFor, setupCanvas, theme, hatch, niceTicks, font } from './canvas-kit.js';
import { fmt } from './format.js';
import { LAYOUTS, PHASE, count, rowOf } from '../state/records.js';

const GUTTER = 34;             // px for slot labels (x the chart scale)
const AXIS_H = 18;             // px for the pass axis under the rows (x the chart scale)
export const NORMAL_ROWS = 210; // px a lane's rows take together on a page (not lecture, not an embed)
/** The slot-label gutter and the pass axis at the current chart scale (lecture mode enlarges
 *  canvas text, so both grow with it). */
export function gutter() { return Math.round(GUTTER * theme().scale); }
export function axisHeight() { return Math.ceil(AXIS_H * theme().scale); }

const indexCache = new WeakMap();

/** Per-slot arrays of [first, last, request, phase code] sorted by first pass (drawing and
 *  binary-search hit tests), from the result's segments table (state/records.js). */
export function indexSegments(result, slots) {
  let idx = indexCache.get(result);
  if (idx) return idx;
  const rows = Array.from({ length: slots }, () => []);
  const { slot, request, phase, first_pass: first, last_pass: last } = result.segments.columns;
  for (let i = 0, n = count(result.segments); i < n; i++) {
    const s = slot[i];
    if (s >= 0 && s < slots) rows[s].push([first[i], last[i], request[i], phase[i]]);
  }
  for (const r of rows) r.sort((a, b) => a[0] - b[0]);
  idx = { rows, requests: result.requests, slots, passes: result.metrics?.passes ?? 0 };
  indexCache.set(result, idx);
  return idx;
}

/** Row height that keeps a lane readable for 1 slot and bounded for 4,096; `rowsPx` (lecture mode:
 *  what the viewport leaves each lane) replaces the usual total. */
function rowHeight({ slots, lecture, compact, rowsPx = null }) {
  // compact: an embedded figure has to fit an iframe without scrolling.
  const maxH = compact ? 16 : lecture ? 72 : 40;
  const total = rowsPx ?? (compact ? 128 : lecture ? 240 : NORMAL_ROWS);
  // 0.75 px keeps a few hundred slots apart; past twice the usual height (1,024 slots and more:
  // vLLM's defaults are 256 and 1,024) slots share pixel rows, which then show occupancy
  return Math.max(Math.min(maxH, total / slots), Math.min(0.75, (2 * total) / slots));
}

/** The space under a lane's rows: the pass axis, or (view.axis false: lecture mode draws the shared
 *  axis under the last lane only) a thin gap. */
export const axisSpace = (view) => (view.axis === false ? 4 : axisHeight());

/** A lane canvas's CSS height for view {slots, lecture, compact, rowsPx, axis}: its rows and the
 *  pass axis. */
export function laneHeight(view) {
  return Math.ceil(rowHeight(view) * view.slots) + axisSpace(view);
}

/**
 * The pass axis a lane's canvases share (the timeline and the block view under it), so every lane
 * and its block view line up: width = the canvas's CSS width, view.passMax = the longest lane on
 * screen (or this run's `passes`). x(pass) is the right edge of pass `pass`; passAt(x) the pass
 * under CSS x.
 */
export function passAxis(width, view, passes) {
  const left = gutter();
  const plotW = Math.max(10, width - left - 4);
  const passMax = Math.max(1, view.passMax || passes || 1);
  return { gutter: left, plotW, passMax,
    x: (pass) => left + (pass / passMax) * plotW,
    passAt: (x) => Math.floor(((x - left) / plotW) * passMax) + 1 };
}

/** The one lane geometry (drawing, hit tests and the keyboard tooltip read it): the pass axis and
 *  the slot rows {rowH, rowsH (the rows' height), height (the canvas's)}. view: {slots, passMax,
 *  lecture, compact, rowsPx}. */
export function laneGeometry(width, view, passes) {
  const rowH = rowHeight(view);
  return { ...passAxis(width, view, passes), rowH, rowsH: rowH * view.slots, height: laneHeight(view) };
}

/**
 * view: { slots, passMax, playhead (pass, 0..passMax), hoverId, focus: {slot} | null, lecture,
 *         compact }
 */
export function draw(canvas, result, view) {
  const idx = indexSegments(result, view.slots);
  const slots = idx.slots;
  const { ctx, dpr, w } = setupCanvas(canvas, laneHeight(view));
  const t = theme();
  const { gutter: GUTTER, plotW, passMax, rowH, rowsH, x: X } = laneGeometry(w, view, idx.passes);
  const gap = rowH >= 6 ? 1 : 0;

  // Idle background for this run's span; beyond its last pass the lane is simply over.
  ctx.fillStyle = t.idle;
  ctx.fillRect(GUTTER, 0, X(idx.passes) - GUTTER, rowsH);
  ctx.strokeStyle = t.faint; ctx.lineWidth = 1;
  ctx.strokeRect(GUTTER + 0.5, 0.5, X(idx.passes) - GUTTER - 1, rowsH - 1);

  const pad = hatch(ctx, dpr, t.paddingInk, t.paddingBg);
  const devPx = 1 / dpr;
  for (let s = 0; s < slots; s++) {
    const y = s * rowH, hh = Math.max(devPx, rowH - gap);
    let lastEnd = -Infinity;           // right edge (CSS px) already painted in this row
    for (const [first, last, rid, phase] of idx.rows[s]) {
      let x0 = X(first - 1), x1 = X(last);
      if (x1 <= lastEnd) continue;      // fully inside painted pixels: aggregated away
      if (x0 < lastEnd) x0 = lastEnd;
      if (x1 - x0 < devPx) x1 = x0 + devPx;
      if (phase === PHASE.padding) {
        ctx.fillStyle = pad;
      } else {
        ctx.fillStyle = rid == null || rid < 0 ? t.muted : colorFor(rid);
        ctx.globalAlpha = phase === PHASE.prefill ? 0.42 : 1;
      }
      ctx.fillRect(x0, y, x1 - x0, hh);
      ctx.globalAlpha = 1;
      lastEnd = x1;
    }
  }

  // Highlight the hovered / focused request wherever it sits.
  // Its stays in one row closer than 3 px merge into one outline: a request preempted hundreds of
  // times is outlined where it was, not painted over as a solid block.
  if (view.hoverId != null) {
    ctx.strokeStyle = t.ink; ctx.lineWidth = 1.5;
    const outline = (s, x0, x1) => ctx.strokeRect(x0 + 0.75, s * rowH + 0.75, Math.max(1, x1 - x0 - 1.5), Math.max(1, rowH - gap - 1.5));
    for (let s = 0; s < slots; s++) {
      let open = null;
      for (const [first, last, rid] of idx.rows[s]) {
        if (rid !== view.hoverId) continue;
        const x0 = X(first - 1), x1 = X(last);
        if (open && x0 - open[1] < 3) { open[1] = x1; continue; }
        if (open) outline(s, ...open);
        open = [x0, x1];
      }
      if (open) outline(s, ...open);
    }
  }

  // Future (right of the playhead) fades back; the past is what the schedulers have done so far.
  const ph = Math.min(passMax, Math.max(0, view.playhead ?? passMax));
  if (ph < idx.passes) {
    ctx.globalAlpha = 0.78;
    ctx.fillStyle = t.panel;
    ctx.fillRect(X(ph), 0, X(idx.passes) - X(ph) + 1, rowsH);
    ctx.globalAlpha = 1;
  }
  if (ph < passMax) {
    ctx.strokeStyle = t.playhead; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(X(ph), 0); ctx.lineTo(X(ph), rowsH + 4); ctx.stroke();
  }

  // Focus ring on a slot row (keyboard inspection).
  if (view.focus && view.focus.slot != null) {
    ctx.strokeStyle = t.accent; ctx.lineWidth = 1;
    ctx.setLineDash([3, 2]);
    ctx.strokeRect(GUTTER - 2.5, view.focus.slot * rowH + 0.5, plotW + 3, Math.max(2, rowH - 1));
    ctx.setLineDash([]);
  }

  // Slot labels.
  ctx.fillStyle = t.muted; ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
  if (rowH >= 11 * t.scale) {
    ctx.font = font(Math.min(12, (rowH - 2) / t.scale));
    for (let s = 0; s < slots; s++) ctx.fillText(String(s + 1), GUTTER - 6, s * rowH + rowH / 2);
  } else {
    const half = 6 * t.scale;
    ctx.font = font(10);
    ctx.fillText('1', GUTTER - 6, Math.min(half, rowsH / 2));
    if (slots > 1 && rowsH >= 4 * half) ctx.fillText(String(slots), GUTTER - 6, Math.max(rowsH - half, rowsH / 2));
  }

  if (view.axis !== false) {
    passTicks(ctx, t, { X, passMax, plotW, w, y: rowsH });   // it leaves the text right-aligned
    ctx.fillText('slot', GUTTER - 6, rowsH + 4);   // the rows' name, under their numbers
  }
  // End-of-run marker: where this scheduler finished.
  if (idx.passes < passMax) {
    const x = X(idx.passes);
    ctx.strokeStyle = t.ink; ctx.lineWidth = 1; ctx.setLineDash([2, 3]);
    ctx.beginPath(); ctx.moveTo(x + 0.5, 0); ctx.lineTo(x + 0.5, rowsH); ctx.stroke(); ctx.setLineDash([]);
    ctx.fillStyle = t.ink; ctx.textAlign = 'left'; ctx.textBaseline = 'middle'; ctx.font = font(11, 600);
    const label = `done in ${fmt(idx.passes)} passes`;
    if (x + 8 + ctx.measureText(label).width < w) ctx.fillText(label, x + 6, Math.min(rowsH / 2, 10 * t.scale));
  }
  return { rowH, plotW, passMax };
}

/** The pass axis at y: ticks and their labels, "pass →" at the right. */
export function passTicks(ctx, t, { X, passMax, plotW, w, y }) {
  ctx.font = font(10); ctx.textBaseline = 'top'; ctx.fillStyle = t.muted; ctx.strokeStyle = t.faint; ctx.lineWidth = 1;
  const ticks = niceTicks(0, passMax, Math.max(2, Math.floor(plotW / (90 * t.scale))));
  for (const tk of ticks) {
    const x = X(tk);
    ctx.beginPath(); ctx.moveTo(x + 0.5, y); ctx.lineTo(x + 0.5, y + 3); ctx.stroke();
    ctx.textAlign = tk === 0 ? 'left' : 'center';
    if (x < w - 60 * t.scale) ctx.fillText(fmt(tk), x, y + 4);
  }
  ctx.textAlign = 'right';
  ctx.fillText('pass →', w - 2, y + 4);
}

/** Which slot / pass / request sits under CSS pixel (x, y)? */
export function hitTest(canvas, result, view, x, y) {
  const idx = indexSegments(result, view.slots);
  const g = laneGeometry(canvas.clientWidth, view, idx.passes);
  if (x < g.gutter || y < 0 || y >= g.rowsH) return null;
  const pass = g.passAt(x);
  let slot = Math.min(idx.slots - 1, Math.floor(y / g.rowH));
  // rows thinner than a pixel: the pixel shows whichever of its slots is busy, so hover finds it
  if (g.rowH < 1) {
    for (let s = slot, end = Math.min(idx.slots, Math.floor((y + 1) / g.rowH)); s < end; s++) {
      if (segmentAt(idx, s, pass).phase !== 'idle') { slot = s; break; }
    }
  }
  return { slot, pass, ...segmentAt(idx, slot, pass) };
}

/** The segment occupying (slot, pass), by binary search. */
export function segmentAt(idx, slot, pass) {
  const row = idx.rows[slot] || [];
  let lo = 0, hi = row.length - 1, found = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (row[mid][0] <= pass) { found = row[mid]; lo = mid + 1; } else hi = mid - 1;
  }
  if (!found || found[1] < pass || pass > idx.passes) return { phase: pass > idx.passes ? 'after' : 'idle', request: null };
  const [, , rid, phase] = found;
  const request = rid >= 0 && rid < count(idx.requests) ? rowOf(idx.requests, rid) : null;   // id = row
  return { phase: LAYOUTS.phases[phase], rid, request, first: found[0], last: found[1] };
}

/** How many requests have completed by pass p (for the playhead readout). */
export function doneBy(result, p) {
  const done = result.requests.columns.done_pass;
  let n = 0;
  for (let i = 0; i < done.length; i++) if (done[i] >= 0 && done[i] <= p) n++;
  return n;
}

/** Simulated time at the end of pass p, from the run-length passes_log (run starts + costs). */
export function timeAt(result, p) {
  const log = result.passes_log?.columns;
  if (!log) return null;
  const runs = log.count;
  const cost = log.cost;
  // Idle gaps between runs (waiting for arrivals) are in `start`, not in the costs.
  let done = 0;
  for (let i = 0; i < runs.length; i++) {
    if (done + runs[i] >= p) return log.start[i] + (p - done) * cost[i];
    done += runs[i];
  }
  return null;
}
