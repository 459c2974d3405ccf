// Exports: PNG of the timelines, CSV of every request, JSON of the engine's result; copy link and
// copy an iframe embed snippet. The JSON keeps the engine's numbers exactly; the CSV's headers carry
// units and its times are rounded to the microsecond (CSV_TIME_DIGITS decimals of a millisecond).

import { theme, font } from '../draw/canvas-kit.js';
import { LAYOUTS, count, toRows } from '../state/records.js';
import { maxOf } from '../draw/format.js';

export const CSV_TIME_DIGITS = 3;

/** A column's header with its unit: "ttft (ms)", "prompt (tokens)", "done_pass (pass)". */
function csvHeader(f, timeUnit) {
  const unit = f.unit === 'time' ? timeUnit : f.unit;
  return unit ? `${f.name} (${unit})` : f.name;
}

/** A value for the CSV: integers as they are, times rounded (a float that is not a time never
 *  occurs in the request record, but would be kept at 6 significant digits). */
function csvValue(v, f) {
  if (Number.isInteger(v)) return String(v);
  if (!Number.isFinite(v)) return '';
  return String(f.unit === 'time' ? +v.toFixed(CSV_TIME_DIGITS) : +v.toPrecision(6));
}

/** A production trace's attribution (CC BY 4.0, Apache-2.0) among the runs shown, or null. */
export function creditOf(compare, schedulers, fleet = null) {
  return [...schedulers.map((s) => compare[s]?.credit), fleet?.result?.credit].find(Boolean) || null;
}

/** One row per request per scheduler; the columns are the declared request record (records.py).
 *  With a fleet shown (toJSON's `fleet`: {request, result}), its requests follow, and a first
 *  column `run` says which rows are which ("one server", "fleet"), `replica` which replica served
 *  each (0 on a single server), and a P/D fleet's own columns come last (`prefill_replica`, the
 *  `ttft_parts.<part>` times), empty on the one-server rows. */
export function toCSV(compare, schedulers, fleet = null) {
  const layout = LAYOUTS.request;
  const cols = layout.map((f) => f.name);
  const fleetRows = fleet?.result?.requests;
  const own = fleetRows ? Object.keys(fleetRows.columns).filter((k) => !cols.includes(k))
    .map((name) => ({ name, unit: name.startsWith('ttft_parts.') ? 'time' : null })) : [];
  const unit = [...schedulers.map((s) => compare[s]?.unit), fleet?.result?.unit].find(Boolean) || 'ms';
  const run = fleetRows ? ['run'] : [];
  const lines = [[...run, 'scheduler', ...[...layout, ...own].map((f) => csvHeader(f, unit))].join(',')];
  // a production trace's attribution travels with its numbers (CC BY 4.0, Apache-2.0), as a comment line
  const credit = creditOf(compare, schedulers, fleet);
  if (credit) lines.unshift(`# ${credit}`);
  const rows = (t, first) => {
    for (let i = 0; i < count(t); i++) {
      lines.push([...first, ...cols.map((k, j) => csvValue(t.columns[k][i], layout[j])),
        ...own.map((f) => (t.columns[f.name] ? csvValue(t.columns[f.name][i], f) : ''))].join(','));
    }
  };
  for (const s of schedulers) {
    if (compare[s]?.requests) rows(compare[s].requests, [...(fleetRows ? ['one server'] : []), s]);
  }
  if (fleetRows) rows(fleetRows, ['fleet', fleet.request.params.scenario.scheduler]);
  return `${lines.join('\n')}\n`;
}

/** The request and its result, exactly as the native engine's JSON would have them; with a
 *  fleet set, the fleet figure's runs too ({request, result, routers: {kind: {request, result}}}:
 *  the main comparison is one server taking all of the fleet's traffic); with a plan shown, the
 *  planner's ({request: its candidates' request, result: the ranking, as `plan --json`}). */
export function toJSON(request, compare, fleet = null, plan = null) {
  const doc = { request, result: toRows(compare) };
  if (plan) doc.plan = plan;          // its rows are plain JSON (no tables)
  if (fleet) {
    doc.fleet = { request: fleet.request, result: toRows(fleet.result),
      routers: Object.fromEntries(Object.entries(fleet.routers).map(([k, r]) => [k, { request: r.request, result: toRows(r.result) }])) };
  }
  return JSON.stringify(doc, null, 1);
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
export function timelinePNG({ title, subtitle, lanes, credit = null }) {
  const t = theme();
  const dpr = Math.max(1, window.devicePixelRatio || 1);
  const W = maxOf(lanes.map((l) => l.canvas.width / dpr), 600) + 32;
  // the subtitle (the scenario in words) and a trace's credit wrap to the image's width
  const measure = document.createElement('canvas').getContext('2d');
  measure.font = font(13);
  const sub = wrapText(measure, subtitle, W - 32);
  measure.font = font(11);
  const foot = ['solid: emits a token · faint: prefill chunk · hatched: padding (slot held, no token) · blank: idle',
    ...(credit ? wrapText(measure, credit, W - 32) : [])];
  const laneH = lanes.reduce((s, l) => s + 24 + l.canvas.height / dpr + 8, 0);
  const H = 16 + 30 + 18 * sub.length + 6 + laneH + 16 * foot.length + 14;
  const c = document.createElement('canvas');
  c.width = Math.round(W * dpr); c.height = Math.round(H * dpr);
  const g = c.getContext('2d');
  g.scale(dpr, dpr);
  g.fillStyle = t.panel; g.fillRect(0, 0, W, H);
  g.fillStyle = t.ink; g.textBaseline = 'top'; g.font = font(20, 600);
  g.fillText(title, 16, 14);
  g.font = font(13); g.fillStyle = t.muted;
  sub.forEach((line, i) => g.fillText(line, 16, 42 + 18 * i));
  let y = 42 + 18 * sub.length + 6;
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
  foot.forEach((line, i) => g.fillText(line, 16, y + 6 + 16 * i));
  return new Promise((res) => c.toBlob(res, 'image/png'));
}

/** Lines of `text` no wider than `width` in the context's font, broken between words. */
export function wrapText(g, text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (line && g.measureText(next).width > width) { lines.push(line); line = word; } else line = next;
  }
  if (line) lines.push(line);
  return lines;
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

/** The host page's few lines that fit each embed's iframe to the height it posts, and ask frames
 *  to measure themselves when the host's width changes (an off-screen frame is not laid out again
 *  until asked). The snippet carries them; the README shows the same lines. */
export const HEIGHT_LISTENER = `addEventListener('message', (e) => {
  if (!e.data || e.data.type !== 'cbx:height') return;
  for (const f of document.querySelectorAll('iframe[data-cbx-embed]')) {
    if (f.contentWindow === e.source) f.style.height = \`\${e.data.height}px\`;
  }
});
addEventListener('resize', () => {
  for (const f of document.querySelectorAll('iframe[data-cbx-embed]')) f.contentWindow?.postMessage({ type: 'cbx:measure' }, '*');
});`;

/** The iframe for one figure at the height it renders (figures.py embed_height, which the embed
 *  also reserves), no border, data-cbx-embed, and the height listener (once per host page). */
export function embedSnippet(url, figure, figures) {
  const u = new URL(url);
  u.searchParams.delete('lecture');
  u.searchParams.delete('pass');
  u.searchParams.set('embed', figure);
  const f = figures[figure] || {};
  const title = `Continuous Batching Explorer: ${f.title || figure}`.replace(/"/g, '&quot;');
  return `<iframe src="${u.href.replace(/"/g, '&quot;')}" width="820" height="${f.embed_height || 520}" `
    + `style="border:0;width:100%;max-width:820px" title="${title}" loading="lazy" referrerpolicy="no-referrer" data-cbx-embed></iframe>\n`
    + '<!-- Optional, once per page: fits each data-cbx-embed iframe to its figure when a narrow column makes it taller. -->\n'
    + `<script>\n${HEIGHT_LISTENER}\n</script>`;
}

/** The full explorer for a view (what an embedded figure links to): its URL without embed. */
export function explorerHref(url) {
  const u = new URL(url);
  u.searchParams.delete('embed');
  return u.href;
}

/** In an embed: reserve the figure's height (figures.py embed_height, the largest it takes at
 *  820 px) so neither loading nor a story step moves the host page, and tell the host the
 *  document's height whenever it changes or the host asks ({type: "cbx:height", figure, height}). */
export function postHeight(figure, figures) {
  const reserve = figures[figure]?.embed_height;
  if (reserve) document.documentElement.style.setProperty('--embed-height', `${reserve}px`);
  if (window.parent === window) return;
  let last = 0;
  const root = document.documentElement;
  const send = (asked) => {
    // while a run is in flight (data-busy) the lanes are laid out before they are fitted: the
    // settled height only, so the host's frame does not jump and back on a story step
    if ('busy' in root.dataset && !asked) return;
    const height = Math.ceil(document.body.getBoundingClientRect().bottom);
    if (height === last && !asked) return;
    last = height;
    window.parent.postMessage({ type: 'cbx:height', figure, height }, '*');   // a height only: no data
  };
  new ResizeObserver(() => send(false)).observe(document.body);
  new MutationObserver(() => send(false)).observe(root, { attributes: true, attributeFilter: ['data-busy'] });
  window.addEventListener('message', (e) => { if (e.source === window.parent && e.data?.type === 'cbx:measure') send(true); });
  send(false);
}
