// The page chrome: the status line, the preset buttons, the theme and lecture buttons, exports and
// the keyboard. Keys work wherever focus is, except while typing in a field.

import { el, $ } from './dom.js';
import * as X from './export.js';
import { fmt } from '../draw/format.js';

const STAGES = {
  download: 'Downloading the Python runtime',
  start: 'Starting Python',
  engine: 'Loading the engine',
  ready: 'Engine live: every change re-simulates in this page',
  failed: 'The engine failed to load',
};

/** The engine's load status, in words, with its progress bar. */
export function showStatus(s) {
  const text = STAGES[s.stage] || s.stage;
  const pct = s.stage !== 'ready' && s.stage !== 'failed' && s.progress > 0 ? ` ${Math.round(100 * s.progress)}%` : '';
  const slow = s.stage === 'ready' && s.via === 'fresh' ? ` (${s.detail})` : '';
  $('engine-status-text').textContent = s.stage === 'failed'
    ? `${text}: ${s.detail}. Showing the build-time result.`
    : `${text}${pct}${s.stage === 'ready' ? slow : '… (showing the build-time result)'}`;
  $('engine-progress').value = s.progress || 0;
}

export function buildPresetButtons(box, presets, onPick) {
  box.replaceChildren();
  Object.entries(presets).forEach(([name, p], i) => {
    const b = el('button', { type: 'button', 'data-preset': name, title: p.description || '', 'aria-pressed': 'false' },
      i < 9 ? el('kbd', { text: String(i + 1) }) : null, document.createTextNode(p.label || name));
    b.addEventListener('click', () => onPick(name));
    box.append(b);
  });
}

export function markPreset(box, name) {
  for (const b of box.children) b.setAttribute('aria-pressed', String(b.dataset.preset === name));
}

/** Export and share buttons. ctx: {result(), request(), lanes(), canvases(), describe()};
 *  figures: the schema's figures (the embed selector offers each). */
export function wireExports(ctx, figures) {
  $('embed-figure').replaceChildren(...Object.entries(figures).map(([name, f]) => el('option', { value: name, text: f.title })));
  $('btn-copy-link').addEventListener('click', async () => {
    const ok = await X.copyText(location.href, $('share-text'));
    $('export-status').textContent = ok ? 'Link copied.' : 'Link selected below: copy it with Ctrl+C.';
  });
  $('btn-copy-embed').addEventListener('click', async () => {
    const ok = await X.copyText(X.embedSnippet(location.href, $('embed-figure').value), $('share-text'));
    $('export-status').textContent = ok ? 'Embed snippet copied.' : 'Snippet selected below: copy it with Ctrl+C.';
  });
  $('btn-png').addEventListener('click', async () => {
    const lanes = ctx.canvases().map((l) => ({ canvas: l.canvas, title: l.title, stats: l.stats.textContent }));
    const res = ctx.result(), sp = res.speedup;
    const title = `Continuous batching: ×${sp.time.toFixed(2)} faster (×${sp.passes.toFixed(2)} in passes)`;
    const subtitle = `${res[ctx.lanes()[0]].requests.$table.toLocaleString('en-US')} requests · ${ctx.describe()}`;
    X.download(X.fileName('timeline', 'png'), await X.timelinePNG({ title, subtitle, lanes }), 'image/png');
  });
  $('btn-csv').addEventListener('click', () => X.download(X.fileName('requests', 'csv'), X.toCSV(ctx.result(), ctx.lanes()), 'text/csv'));
  $('btn-json').addEventListener('click', () => X.download(X.fileName('result', 'json'), X.toJSON(ctx.request(), ctx.result()), 'application/json'));
}

/** keys: {play, step(delta), home, end, lecture, theme, preset(i)}; passMax() for the big step. */
export function wireKeys(keys, passMax) {
  document.addEventListener('keydown', (e) => {
    const tag = e.target?.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
    const big = Math.max(1, Math.round(passMax() / 10));
    switch (e.key) {
      case ' ':
        if (tag === 'BUTTON') return;   // the button's own click handles it
        e.preventDefault(); keys.play(); break;
      case 'ArrowRight': e.preventDefault(); keys.step(e.shiftKey ? big : 1); break;
      case 'ArrowLeft': e.preventDefault(); keys.step(e.shiftKey ? -big : -1); break;
      case 'Home': e.preventDefault(); keys.home(); break;
      case 'End': e.preventDefault(); keys.end(); break;
      case 'l': case 'L': keys.lecture(); break;
      case 'd': case 'D': keys.theme(); break;
      default: {
        const n = Number(e.key);
        if (Number.isInteger(n) && n >= 1 && n <= 9 && keys.preset(n - 1)) e.preventDefault();
      }
    }
  });
}

