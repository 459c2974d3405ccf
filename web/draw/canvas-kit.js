// Small canvas helpers shared by the timelines and the charts: crisp high-DPI setup, theme colours
// from CSS variables (every colour a canvas uses comes from here), nice ticks and fonts.

// Okabe–Ito (colour-blind safe), black swapped for a mid blue-grey so it reads in dark mode too.
const PALETTE = ['#E69F00', '#56B4E9', '#009E73', '#F0E442', '#0072B2', '#D55E00', '#CC79A7', '#7F8FA6'];

/** The i-th colour of the categorical palette (series that are not requests: TTFT parts). */
export function seriesColor(i) { return PALETTE[i % PALETTE.length]; }

export function colorFor(id) {
  // Consecutive requests get different colours; the stride keeps neighbours apart when the palette wraps.
  return PALETTE[((id * 3) % PALETTE.length + PALETTE.length) % PALETTE.length];
}

/** Size the canvas backing store to its CSS box × devicePixelRatio; returns a context in CSS pixels. */
export function setupCanvas(canvas, cssHeight) {
  if (cssHeight != null) canvas.style.height = `${cssHeight}px`;
  const dpr = Math.max(1, window.devicePixelRatio || 1);
  const w = Math.max(1, canvas.clientWidth || canvas.parentElement?.clientWidth || 600);
  const h = Math.max(1, cssHeight ?? canvas.clientHeight ?? 150);
  const bw = Math.round(w * dpr), bh = Math.round(h * dpr);
  if (canvas.width !== bw) canvas.width = bw;
  if (canvas.height !== bh) canvas.height = bh;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { ctx, dpr, w, h };
}

const CANVAS_TEXT_PX = 10.5;   // the canvases' body text at scale 1 (font(10.5))
let themeCache = null;
export function invalidateTheme() { themeCache = null; }
/** Colours come from the stylesheet so light/dark switch in one place. */
export function theme() {
  if (themeCache) return themeCache;
  const cs = getComputedStyle(document.documentElement);
  const v = (name) => cs.getPropertyValue(name).trim();
  themeCache = {
    bg: v('--bg'), panel: v('--panel'), ink: v('--ink'), muted: v('--muted'), faint: v('--faint'),
    grid: v('--grid'), accent: v('--accent'), alt: v('--alt'), good: v('--good'), bad: v('--bad'),
    paddingInk: v('--padding-ink'), paddingBg: v('--padding-bg'), idle: v('--idle'), playhead: v('--playhead'),
    font: v('--font') || 'sans-serif',
    // canvas text follows the page's type (--chart-text rem): lecture mode's grows with the screen
    scale: (parseFloat(cs.fontSize) * parseFloat(v('--chart-text'))) / CANVAS_TEXT_PX || 1,
    heightScale: parseFloat(v('--chart-height')) || 1,   // an embed's charts are shorter
  };
  return themeCache;
}

const patternCache = new Map();
/** A repeating tile `size` CSS px square on `bg`, drawn by paint(g, px) at device resolution (so
 *  it stays crisp) and cached by key. */
function tile(ctx, dpr, key, size, bg, paint) {
  let p = patternCache.get(key);
  if (p) return p;
  const px = Math.round(size * dpr);
  const c = document.createElement('canvas');
  c.width = c.height = px;
  const g = c.getContext('2d');
  g.fillStyle = bg; g.fillRect(0, 0, px, px);
  paint(g, px);
  p = ctx.createPattern(c, 'repeat');
  p.setTransform?.(new DOMMatrix([1 / dpr, 0, 0, 1 / dpr, 0, 0]));
  patternCache.set(key, p);
  return p;
}

/** Diagonal hatch for padding. */
export function hatch(ctx, dpr, ink, bg) {
  return tile(ctx, dpr, `${dpr}|${ink}|${bg}`, 6, bg, (g, size) => {
    g.strokeStyle = ink; g.lineWidth = Math.max(1, 1.2 * dpr);
    g.beginPath();
    g.moveTo(-1, size + 1); g.lineTo(size + 1, -1);
    g.moveTo(-1, 1); g.lineTo(1, -1);
    g.moveTo(size - 1, size + 1); g.lineTo(size + 1, size - 1);
    g.stroke();
  });
}

/** Dots (free KV blocks that still cache a prefix): a texture the timeline's padding hatch is not. */
export function dots(ctx, dpr, ink, bg) {
  return tile(ctx, dpr, `dots|${dpr}|${ink}|${bg}`, 5, bg, (g, size) => {
    g.fillStyle = ink;
    g.beginPath(); g.arc(size / 2, size / 2, 1.1 * dpr, 0, 2 * Math.PI); g.fill();
  });
}

/** Round ticks covering [lo, hi], about n of them. */
export function niceTicks(lo, hi, n = 5) {
  if (!(hi > lo)) return [lo];
  const span = hi - lo;
  const raw = span / Math.max(1, n);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toPrecision(12));
  return out;
}

/** The fewest decimals that write every tick exactly (0.05 steps: 2). */
export function tickDecimals(ticks) {
  for (let d = 0; d < 12; d++) if (ticks.every((v) => Math.abs(+v.toFixed(d) - v) <= 1e-9 * Math.max(1, Math.abs(v)))) return d;
  return 12;
}

/** The ticks with the decimals their step needs, every one distinct and exact: 0.1 steps "0.0 0.1
 *  0.2", 0.05 steps "0.00 0.05 0.10" (a fixed "0.0" wrote "0.1 0.1 0.1" on wide charts). */
export function tickNumbers(ticks) {
  const d = tickDecimals(ticks);
  return ticks.map((v) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
}

/** One label per tick: the axis's own format (a unit, a ×, a %), unless it writes two ticks alike;
 *  then the plain numbers. An axis without a format gets tickNumbers. */
export function tickLabels(ticks, format = null) {
  if (!format) return tickNumbers(ticks);
  const own = ticks.map((v) => format(v));
  return new Set(own).size === own.length ? own : tickNumbers(ticks);
}

export function font(px, weight = 400) {
  const t = theme();
  return `${weight} ${Math.round(px * t.scale * 10) / 10}px ${t.font}`;
}
