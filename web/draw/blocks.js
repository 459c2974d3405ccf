// The block view under the vllm lane: PagedAttention made visible. The paged KV pool over the run,
// on the timelines' shared pass axis, from the engine's bounded samples (result.kv_blocks,
// layouts records.KV_SAMPLE / KV_HOLDER): each running request's blocks stacked by slot in its
// timeline colour, free blocks that still hold a cached prefix dotted above them, the pool's size
// as a dashed line; the height axis counts blocks; ▲ where a request was preempted (its blocks
// freed), ● where a request was admitted with a prefix-cache hit. Pixel-bounded: at most one
// column per pixel. blockLegend() says what of this a result shows (ui/lanes.js writes the legend).

import { setupCanvas, theme, font, colorFor, dots } from './canvas-kit.js';
import { fmt } from './format.js';
import { passAxis } from './timeline.js';
import { count } from '../state/records.js';

/** CSS height: an embed's is short; lecture mode's grows with its canvas text. */
export const blockViewHeight = (view) => (view.compact ? 60 : view.lecture ? Math.round(46 * theme().scale) : 96);

const preCache = new WeakMap();
/**
 * Passes after which a request was preempted, read from the segments: a preempted request's
 * residence breaks off and later restarts, so every gap between two of its segments ends a stay.
 */
export function preemptionPasses(result) {
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

/** Admission passes of the requests that found part of their prompt in the prefix cache. */
function hitPasses(result) {
  const { cached_tokens: cached, admit_pass: admit } = result.requests.columns;
  const out = [];
  for (let i = 0; i < cached.length; i++) if (cached[i] > 0) out.push(admit[i]);
  return out.sort((a, b) => a - b);
}

/** The samples with each one's holder rows: [{pass, used, cachedFree, free, holders: [[rid, slot, blocks]]}]. */
const sampleCache = new WeakMap();
function samplesOf(kb) {
  let out = sampleCache.get(kb);
  if (out) return out;
  const s = kb.samples, h = kb.holders;
  out = [];
  let k = 0;
  for (let i = 0; i < s.pass.length; i++) {
    const holders = [];
    for (let j = 0; j < s.holders[i]; j++, k++) holders.push([h.request[k], h.slot[k], h.blocks[k]]);
    out.push({ pass: s.pass[i], used: s.used[i], cachedFree: s.cached_free[i], free: s.free[i], holders,
      tables: holders.reduce((a, x) => a + x[2], 0) });
  }
  sampleCache.set(kb, out);
  return out;
}

function geometry(canvas, result, view, w) {
  const t = theme();
  const kb = result.kv_blocks;
  // the timeline's own pass axis, so the pool lines up with the lane above it
  const { gutter: G, plotW, passMax, x: X, passAt } = passAxis(w, view, result.metrics?.passes);
  const H = blockViewHeight(view);
  const samples = samplesOf(kb);
  // The title goes right of the run's end when it fits there. Else it takes a line of its own
  // above the plot, out of the plot's height (the canvas keeps its height, which the lanes' fit
  // counts on): a full pool's blocks reach the plot's top, so a title over them would hide them.
  // Above, as many of its parts as fit the width (a phone's: the pool and its peak; the marks
  // have the legend).
  const parts = titleOf(result, samples);
  const g2 = canvas.getContext('2d');
  g2.font = font(10.5);
  let label = parts.join(' · ');
  const endX = X(result.metrics.passes);
  const beside = endX + 10 + g2.measureText(label).width < w - 4;
  for (let n = parts.length - 1; !beside && n > 0 && G + 4 + g2.measureText(label).width > w; n--) {
    label = parts.slice(0, n).join(' · ');
  }
  const lh = Math.round(14 * t.scale), lw = g2.measureText(label).width;
  const top = beside ? 3 : 4 + lh, bottom = Math.round(12 * t.scale);
  const ph = Math.max(8, H - top - bottom);
  // where the title's text starts (its middle line) and its box [left, top, right, bottom]
  const title = beside ? { text: label, x: endX + 10, y: top + ph / 2 } : { text: label, x: G + 2, y: 2 + lh / 2 };
  title.box = [title.x, title.y - lh / 2, title.x + lw, title.y + lh / 2];
  let peak = kb.total ?? 1;
  for (const s of samples) peak = Math.max(peak, s.tables, s.used + s.cachedFree);
  return { t, kb, G, plotW, passMax, passAt, H, top, ph, samples, peak, title, X,
    Y: (v) => top + ph - (v / peak) * ph };
}

/** The title's parts, most important first. */
function titleOf(result, samples) {
  const kb = result.kv_blocks;
  const peakUsed = samples.reduce((a, s) => Math.max(a, s.used), 0);
  const hits = hitPasses(result).length;
  const pool = kb.total != null ? `${fmt(kb.total)} blocks of ${fmt(kb.block_size)} tokens` : `unlimited, blocks of ${fmt(kb.block_size)} tokens`;
  return [`KV pool: ${pool}`, `peak ${fmt(peakUsed)} blocks in use`,
    `▲ ${fmt(result.metrics?.preemptions ?? 0)} preemptions`, ...(hits ? [`● ${fmt(hits)} prefix-cache hits`] : [])];
}

/** What the block view of this result shows, as legend entries {key (a CSS class), text}. */
export function blockLegend(result) {
  const kb = result.kv_blocks;
  const samples = samplesOf(kb);
  const out = [{ key: 'kv-held', text: "a request's blocks (its colour)" }];
  if (samples.some((s) => s.cachedFree)) out.push({ key: 'kv-cached', text: 'free, still caching a prefix' });
  if (samples.some((s) => s.tables > s.used)) out.push({ key: 'kv-shared', text: 'blocks in use (shared prefixes)' });
  if (kb.total != null) out.push({ key: 'kv-pool', text: 'pool size' });
  if (result.metrics?.preemptions) out.push({ key: 'kv-pre', text: 'preempted' });
  if (hitPasses(result).length) out.push({ key: 'kv-hit', text: 'prefix-cache hit' });
  return out;
}

/** The sample shown at pass p (the last one at or before it), or null. */
export function sampleAt(result, p) {
  const samples = result.kv_blocks ? samplesOf(result.kv_blocks) : [];
  let lo = 0, hi = samples.length - 1, found = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (samples[mid].pass <= p) { found = samples[mid]; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}

/** What is under CSS pixel (x, y): {pass, rid} (rid: the request whose blocks are there, or
 *  null), or null outside the plot. */
export function blockHit(canvas, result, view, x, y) {
  const { G, plotW, passAt, Y } = geometry(canvas, result, view, canvas.clientWidth);
  if (x < G || x > G + plotW) return null;
  const pass = passAt(x);
  if (pass > result.metrics.passes) return null;
  const s = sampleAt(result, pass);
  let acc = 0, rid = null;
  for (const [r, , blocks] of s?.holders || []) {
    if (y <= Y(acc) && y >= Y(acc + blocks)) { rid = r; break; }
    acc += blocks;
  }
  return { pass, rid };
}

export function drawBlocks(canvas, result, view) {
  const H0 = blockViewHeight(view);
  const { ctx, dpr, w } = setupCanvas(canvas, H0);
  const g = geometry(canvas, result, view, w);
  const { t, kb, G, plotW, top, ph, samples, X, Y } = g;
  const end = result.metrics.passes;
  const floorY = top + ph;

  ctx.fillStyle = t.idle; ctx.fillRect(G, top, X(end) - G, ph);
  ctx.strokeStyle = t.faint; ctx.lineWidth = 1; ctx.strokeRect(G + 0.5, top + 0.5, X(end) - G - 1, ph - 1);
  const cachedPattern = dots(ctx, dpr, t.accent, t.idle);
  let lastEnd = -Infinity;
  const hoverBands = [];          // [x0, x1, y0, y1] of the hovered request, merged into one outline
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    let x0 = X(s.pass - 1);
    const x1 = X(i + 1 < samples.length ? samples[i + 1].pass - 1 : end);
    if (x1 <= lastEnd + 0.5 && i + 1 < samples.length) continue;   // pixel-bounded
    if (x0 < lastEnd) x0 = lastEnd;
    const wcol = Math.max(1 / dpr, x1 - x0);
    let acc = 0;
    for (const [rid, , blocks] of s.holders) {
      const y1 = Y(acc), y0 = Y(acc + blocks);
      ctx.fillStyle = colorFor(rid);
      ctx.fillRect(x0, y0, wcol, Math.max(1 / dpr, y1 - y0 - (y1 - y0 >= 4 ? 1 : 0)));
      if (rid === view.hoverId) hoverBands.push([x0, x0 + wcol, y0, y1]);
      acc += blocks;
    }
    if (s.cachedFree) {
      const y1 = Y(Math.max(acc, s.used)), y0 = Y(Math.max(acc, s.used) + s.cachedFree);
      ctx.fillStyle = cachedPattern; ctx.fillRect(x0, y0, wcol, y1 - y0);
    }
    if (s.tables > s.used) {      // shared prefix blocks sit in several tables: the physical level
      ctx.fillStyle = t.ink; ctx.fillRect(x0, Math.round(Y(s.used)) - 1, wcol, 2);
    }
    lastEnd = x0 + wcol;
  }
  if (hoverBands.length) {
    ctx.strokeStyle = t.ink; ctx.lineWidth = 1.5;
    for (const [x0, x1, y0, y1] of hoverBands) ctx.strokeRect(x0 + 0.5, y0 + 0.5, Math.max(1, x1 - x0 - 1), Math.max(1, y1 - y0 - 1));
  }
  if (kb.total != null) {          // the pool's size: the top of the plot unless tables exceed it
    ctx.strokeStyle = t.bad; ctx.setLineDash([4, 3]); ctx.lineWidth = 1;
    const y = Math.round(Y(kb.total)) + 0.5;
    ctx.beginPath(); ctx.moveTo(G, y); ctx.lineTo(G + plotW, y); ctx.stroke(); ctx.setLineDash([]);
  }

  // Future fades back, as in the lanes.
  const phx = Math.min(g.passMax, Math.max(0, view.playhead ?? g.passMax));
  if (phx < end) {
    ctx.globalAlpha = 0.78; ctx.fillStyle = t.panel;
    ctx.fillRect(X(phx), top, X(end) - X(phx) + 1, ph); ctx.globalAlpha = 1;
  }
  if (phx < g.passMax) {
    ctx.strokeStyle = t.playhead; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(X(phx), top); ctx.lineTo(X(phx), floorY); ctx.stroke();
  }

  // Marks under the plot: ▲ a preemption, ● an admission with a prefix-cache hit (pixel-bounded).
  const r = 4 * t.scale;
  const marks = (passes, color, shape) => {
    ctx.fillStyle = color;
    let last = -Infinity;
    for (const q of passes) {
      const x = X(q);
      if (x - last < 2) continue;
      last = x;
      ctx.beginPath();
      if (shape === 'tri') { ctx.moveTo(x, floorY + 1); ctx.lineTo(x - r, floorY + 2 * r + 1); ctx.lineTo(x + r, floorY + 2 * r + 1); ctx.closePath(); }
      else ctx.arc(x, floorY + r + 2, r * 0.8, 0, 2 * Math.PI);
      ctx.fill();
    }
  };
  const hits = hitPasses(result);
  marks(hits, t.good, 'dot');
  marks(preemptionPasses(result), t.bad, 'tri');

  // The height axis, in blocks: 0 at the floor, the pool's size (unlimited: the peak) at its line,
  // the unit between (across, the passes of the lane's axis above).
  ctx.font = font(10); ctx.fillStyle = t.muted; ctx.strokeStyle = t.faint; ctx.lineWidth = 1; ctx.textAlign = 'right';
  const yTop = kb.total ?? g.peak;
  for (const [v, base] of [[0, 'bottom'], [yTop, 'top']]) {
    const y = Math.round(Y(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(G - 4, y); ctx.lineTo(G, y); ctx.stroke();
    ctx.textBaseline = base; ctx.fillText(v >= 1e4 ? `${Math.round(v / 1e3)}k` : fmt(v), G - 6, base === 'top' ? Math.max(0, y - 2) : y + 2);   // the gutter is narrow
  }
  // the unit between the two numbers when it fits there (a lecture's plot under its title line
  // is too short: the title says "blocks" then)
  ctx.font = font(9); ctx.textBaseline = 'middle';
  if (ph >= 26 * t.scale) ctx.fillText('blocks', G - 3, top + ph / 2);
  // The title: what the pool is, and what the marks count.
  ctx.font = font(10.5); ctx.textAlign = 'left'; ctx.fillStyle = t.ink; ctx.textBaseline = 'middle';
  ctx.fillText(g.title.text, g.title.x, g.title.y);
  // data-layout: the title's box and the blocks' (the test hook that the title leaves them clear)
  canvas.dataset.layout = JSON.stringify({ title: g.title.box.map(Math.round), blocks: [G, top, X(end), floorY].map(Math.round) });
}

/** The tooltip's lines for pass p (the sample at or before it), the hovered request first. */
export function describeBlocks(result, p, rid = null) {
  const s = sampleAt(result, p);
  const kb = result.kv_blocks;
  if (!s) return null;
  const lines = [`pass ${fmt(s.pass)}${kb.stride > 1 ? ` (sampled every ≤ ${fmt(kb.stride)} passes)` : ''}`];
  lines.push(kb.total != null ? `${fmt(s.used)} of ${fmt(kb.total)} blocks in use, ${fmt(s.free)} free` : `${fmt(s.used)} blocks in use`);
  if (s.cachedFree) lines.push(`${fmt(s.cachedFree)} free blocks still hold a cached prefix`);
  if (s.tables > s.used) lines.push(`${fmt(s.tables - s.used)} prefix blocks are shared by several requests`);
  const holders = [...s.holders].sort((a, b) => (a[0] === rid ? -1 : b[0] === rid ? 1 : a[1] - b[1]));
  return { lines, holders: holders.slice(0, 8), more: Math.max(0, holders.length - 8), sample: s };
}
