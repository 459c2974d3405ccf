// The fleet figure's TTFT breakdown, for prefill/decode pools (SPEC §9): each part's mean and p95
// over every request (data-metric "fleet.ttft_parts.<part>.mean" / ".p95", the engine's
// metrics.ttft_parts), the means as one stacked bar, and a stacked bar per request whose hover
// shows its parts (they add up to its TTFT exactly, in the engine's integer ticks).

import { el } from './dom.js';
import { fmt, fmtTime, fmtTimeColumn } from '../draw/format.js';
import { drawParts, partColor } from '../draw/ttftparts.js';
import { partColumns, foldBars, barAt } from '../state/ttftparts.js';

const BARS_HEIGHT = 64;      // CSS px of the per-request bars (an embed: its share)

/**
 * ctx: {box (the element it fills), parts ([[name, label]]: figures.fleet.parts), metric(tag,
 * name, value, text) (the figure's hook maker), tooltip(kids, canvas, x, y), hide(), compact()}.
 * Returns {render(res), frame()}.
 */
export function createParts(ctx) {
  let shown = null;            // {res, cols, canvas, fold}
  let hoverId = null;

  function render(res) {
    const cols = res && partColumns(res, ctx.parts);
    if (!cols) { shown = null; ctx.box.replaceChildren(); ctx.box.hidden = true; return; }
    ctx.box.hidden = false;
    const unit = res.unit || 'ms';
    const stats = res.metrics.ttft_parts;
    const mean = ctx.parts.reduce((s, [name]) => s + (stats[name]?.mean || 0), 0);
    const stack = el('div', { class: 'parts-stack', role: 'img',
      'aria-label': `Mean TTFT ${fmtTime(mean, unit)}: ${ctx.parts.map(([n, l]) => `${l} ${fmtTime(stats[n].mean, unit)}`).join(', ')}` });
    // one unit for the table (its means and p95s side by side), not "2.10 s" under "338.3 ms"
    const show = fmtTimeColumn(ctx.parts.flatMap(([n]) => [stats[n]?.mean, stats[n]?.p95]), unit);
    const rows = ctx.parts.map(([name, label], i) => {
      const seg = el('i', { title: label });
      seg.style.width = `${mean > 0 ? (100 * stats[name].mean) / mean : 0}%`;
      seg.style.background = partColor(i);
      stack.append(seg);
      const sw = el('i', { class: 'part-swatch', 'aria-hidden': 'true' });
      sw.style.background = partColor(i);
      return el('tr', {}, el('th', {}, sw, document.createTextNode(label)),
        ctx.metric('td', `fleet.ttft_parts.${name}.mean`, stats[name].mean, show(stats[name].mean)),
        ctx.metric('td', `fleet.ttft_parts.${name}.p95`, stats[name].p95, show(stats[name].p95)));
    });
    const table = el('table', { class: 'parts-table' },
      el('thead', {}, el('tr', {}, el('th', { text: 'TTFT part' }), el('th', { text: 'mean' }), el('th', { text: 'p95' }))),
      el('tbody', {}, ...rows));
    const canvas = el('canvas', { class: 'parts-bars', role: 'img',
      'aria-label': 'Each request\'s TTFT as a stacked bar of its parts, in arrival order' });
    wire(canvas);
    const n = cols[0].length;
    ctx.box.replaceChildren(
      el('h4', { class: 'parts-title', text: 'Time to first token, in its parts' }),
      el('div', { class: 'parts-grid' }, table, el('div', { class: 'parts-right' }, stack, canvas,
        el('p', { class: 'caption parts-what', text: `${fmt(n)} requests in arrival order, a bar each (where they outnumber the pixels, a pixel shows the slowest of its requests); hover for the parts.` }))));
    shown = { res, cols, canvas, fold: null };
    frame();
  }

  function frame() {
    if (!shown) return;
    const { res, cols, canvas } = shown;
    const width = canvas.clientWidth || canvas.parentElement?.clientWidth || 300;
    shown.fold = foldBars(res.requests.columns.ttft, width);
    const c = ctx.compact();
    drawParts(canvas, { cols, ttft: res.requests.columns.ttft, fold: shown.fold, unit: res.unit,
      height: c ? Math.round(BARS_HEIGHT * c) : BARS_HEIGHT, hoverId });
  }

  function wire(canvas) {
    canvas.addEventListener('mousemove', (e) => {
      if (!shown?.fold) return;
      const b = canvas.getBoundingClientRect();
      const x = e.clientX - b.left, y = e.clientY - b.top;
      const id = barAt(shown.fold, x);
      if (id !== hoverId) { hoverId = id < 0 ? null : id; frame(); }
      if (id < 0) { ctx.hide(); return; }
      ctx.tooltip(partsTip(id), canvas, x, y);
    });
    canvas.addEventListener('mouseleave', () => { ctx.hide(); if (hoverId != null) { hoverId = null; frame(); } });
  }

  /** A request's parts, each with its share of its TTFT. */
  function partsTip(id) {
    const { res, cols } = shown;
    const c = res.requests.columns, unit = res.unit;
    const dl = el('dl');
    const show = fmtTimeColumn([c.ttft[id], ...cols.map((col) => col[id])], unit);   // one unit down the list
    ctx.parts.forEach(([, label], i) => dl.append(el('dt', { text: label }),
      el('dd', { text: `${show(cols[i][id])}${c.ttft[id] > 0 ? ` (${Math.round((100 * cols[i][id]) / c.ttft[id])}%)` : ''}` })));
    dl.append(el('dt', { text: 'TTFT' }), el('dd', { text: show(c.ttft[id]) }));
    return [el('b', { text: `Request #${id}: prefill ${c.prefill_replica[id]} → decode ${c.replica[id]}` }), dl];
  }

  return { render, frame };
}
