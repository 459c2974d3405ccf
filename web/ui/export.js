// Exports: PNG of the timelines, CSV of every request, JSON of the engine's result; copy link and
// copy an iframe embed snippet. Numbers are written with String(n), exactly as the engine gave them.

import { theme, font } from '../draw/canvas-kit.js';
import { LAYOUTS, count, toRows } from '../state/records.js';

/** One row per request per scheduler; the columns are the declared request record (records.py). */
export function toCSV(compare, schedulers) {
  const cols = LAYOUTS.request.map((f) => f.name);
  const lines = [['scheduler', ...cols].join(',')];
  // a production trace's attribution travels with its numbers (CC BY 4.0), as a comment line
  const credit = schedulers.map((s) => compare[s]?.credit).find(Boolean);
  if (credit) lines.unshift(`# ${credit}`);
  for (const s of schedulers) {
    const t = compare[s]?.requests;
    if (!t) continue;
    for (let i = 0; i < count(t); i++) lines.push([s, ...cols.map((k) => String(t.columns[k][i]))].join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** The request and its result, exactly as the native engine's JSON would have them. */
export function toJSON(request, compare) {
  return JSON.stringify({ request, result: toRows(compare) }, null, 1);
}

/** Download names (built, so the site checker does not mistake them for files we serve). */
export function fileName(what, ext) { return ['continuous-batching', what].join('-') + '.' + ext; }

export function download(name, data, type) {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url; a.download = name;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

/**
 * One PNG of the timeline figure: the headline, then each lane's title and canvas, then a legend
 * line. Lane canvases are already at device resolution, so the export is as crisp as the screen.
 */
export function timelinePNG({ title, subtitle, lanes }) {
  const t = theme();
  const dpr = Math.max(1, window.devicePixelRatio || 1);
  const W = Math.max(...lanes.map((l) => l.canvas.width / dpr), 600) + 32;
  const laneH = lanes.reduce((s, l) => s + 24 + l.canvas.height / dpr + 8, 0);
  const H = 16 + 30 + 20 + laneH + 30;
  const c = document.createElement('canvas');
  c.width = Math.round(W * dpr); c.height = Math.round(H * dpr);
  const g = c.getContext('2d');
  g.scale(dpr, dpr);
  g.fillStyle = t.panel; g.fillRect(0, 0, W, H);
  g.fillStyle = t.ink; g.textBaseline = 'top'; g.font = font(20, 600);
  g.fillText(title, 16, 14);
  g.font = font(13); g.fillStyle = t.muted;
  g.fillText(subtitle, 16, 42);
  let y = 66;
  for (const l of lanes) {
    g.font = font(13, 600); g.fillStyle = t.ink;
    g.fillText(l.title, 16, y + 4);
    g.font = font(12); g.fillStyle = t.muted; g.textAlign = 'right';
    g.fillText(l.stats, W - 16, y + 5); g.textAlign = 'left';
    y += 24;
    g.drawImage(l.canvas, 16, y, l.canvas.width / dpr, l.canvas.height / dpr);
    y += l.canvas.height / dpr + 8;
  }
  g.font = font(11); g.fillStyle = t.muted;
  g.fillText('solid: emits a token · faint: prefill chunk · hatched: padding (slot held, no token) · blank: idle', 16, y + 6);
  return new Promise((res) => c.toBlob(res, 'image/png'));
}

export async function copyText(text, textarea) {
  if (textarea) { textarea.value = text; textarea.select(); }
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    try { return document.execCommand('copy'); } catch { return false; }
  }
}

export function embedSnippet(url, figure) {
  const u = new URL(url);
  u.searchParams.delete('lecture');
  u.searchParams.set('embed', figure);
  const h = { timeline: 540, metrics: 640, skew: 400, slots: 400, cost: 380, kv: 460, check: 220 }[figure] || 460;
  const title = `Continuous Batching Explorer: ${figure}`;
  return `<iframe src="${u.href.replace(/"/g, '&quot;')}" width="100%" height="${h}" title="${title}" loading="lazy" referrerpolicy="no-referrer"></iframe>`;
}
