// The page chrome: the status line, the preset buttons, the controls drawer, exports and the
// keyboard. Keys work wherever focus is, except while typing in a field.

import { el, $ } from './dom.js';
import * as X from './export.js';
import { baseSchedulers, schedulerLabel } from '../state/context.js';

const STAGES = {
  download: 'Downloading the Python runtime',
  start: 'Starting Python',
  engine: 'Loading the engine',
  ready: 'Engine live',
  failed: 'The engine failed to load',
};
// said once the engine is live, but not while a run's progress needs the room (style.css)
const LIVE_MORE = ': every change re-simulates in this page';

/** The engine's load status, in words, with its progress bar; <html data-state="failed"> when it
 *  failed, and the test hooks of how it started and who shares it when it is ready. */
export function showStatus(s) {
  const text = STAGES[s.stage] || s.stage;
  const pct = s.stage !== 'ready' && s.stage !== 'failed' && s.progress > 0 ? ` ${Math.round(100 * s.progress)}%` : '';
  const slow = s.stage === 'ready' && s.via === 'fresh' ? ` (${s.detail})` : '';
  // an embed says it quietly, beside its link out
  const quiet = $('embed-status');
  if (quiet) quiet.textContent = s.stage === 'ready' ? 'live engine' : s.stage === 'failed' ? 'build-time result (engine failed to load)' : `build-time result · engine loading${pct}`;
  if (s.stage === 'ready') $('engine-status-text').replaceChildren(text, el('span', { class: 'status-more', text: `${LIVE_MORE}${slow}` }));
  else {
    $('engine-status-text').textContent = s.stage === 'failed'
      ? `${text}: ${s.detail}. Showing the build-time result.` : `${text}${pct}… (showing the build-time result)`;
  }
  $('engine-progress').value = s.progress || 0;
  $('engine-progress').hidden = s.stage === 'ready';   // live: the bar is a run's (ui/runprogress.js)
  const root = document.documentElement;
  if (s.stage === 'failed') root.dataset.state = 'failed';
  if (s.stage === 'ready') Object.assign(root.dataset, { engineBoot: s.via, engineNote: s.detail, engine: s.shared ? 'shared' : 'dedicated', engineClients: String(s.clients) });
}

/** The controls drawer on a narrow screen: its buttons, Escape closes it, focus goes into it. It
 *  covers the lower part of the screen: opened above the timeline's lanes, it first brings the
 *  result (the headline and the lanes' start) to the top, so a change shows above the drawer. */
export function wireDrawer(root) {
  const drawer = (open) => {
    const result = $('timeline-headline');
    if (open && result && result.getBoundingClientRect().top > 0 && $('timelines').getBoundingClientRect().bottom > innerHeight / 2) {
      result.scrollIntoView({ block: 'start' });
    }
    if (open) root.dataset.drawer = 'open'; else delete root.dataset.drawer;
    $('btn-controls').setAttribute('aria-expanded', String(open));
    if (open) $('controls').querySelector('input, select, button:not(#btn-controls-close)')?.focus({ preventScroll: true });
  };
  $('btn-controls').addEventListener('click', () => drawer(root.dataset.drawer !== 'open'));
  $('btn-controls-close').addEventListener('click', () => drawer(false));
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && root.dataset.drawer === 'open') drawer(false); });
}

/** Canvases size to the figures' width: a change of it redraws them all (a height change is
 *  redrawn by whatever caused it); in lecture mode, lanes fit the window's height as well. */
export function wireResize(figures, redraw, lecture) {
  let width = -1;
  new ResizeObserver((entries) => {
    const w = entries[entries.length - 1].contentRect.width;
    if (w !== width) { width = w; requestAnimationFrame(redraw); }
  }).observe(figures);
  window.addEventListener('resize', () => { if (lecture()) requestAnimationFrame(redraw); });
}

/** One button per preset. Each says which lanes it shows: a preset that adds a lane beyond the base
 *  pair (vllm) is tagged with it, and its title lists them all. schedulers: the schema's. */
export function buildPresetButtons(box, presets, onPick, schedulers) {
  box.replaceChildren();
  const label = (s) => schedulerLabel(schedulers, s);
  const base = baseSchedulers(schedulers);
  Object.entries(presets).forEach(([name, p], i) => {
    const extra = (p.schedulers || []).filter((s) => !base.includes(s));
    const lanes = `Lanes: ${(p.schedulers || base).map(label).join(', ')}${extra.length ? '' : ' (no vLLM lane)'}`;
    const b = el('button', { type: 'button', 'data-preset': name, title: `${p.description || ''}\n${lanes}`, 'aria-pressed': 'false',
      'data-lanes': (p.schedulers || base).join(',') },
    i < 9 ? el('kbd', { text: String(i + 1) }) : null, document.createTextNode(p.label || name),
    ...extra.map((s) => el('span', { class: 'tag', text: `+ ${label(s).split(' ')[0]}` })));
    b.addEventListener('click', () => onPick(name));
    box.append(b);
  });
}

export function markPreset(box, name) {
  for (const b of box.children) b.setAttribute('aria-pressed', String(b.dataset.preset === name));
}

/** Export and share buttons. ctx: {result(), request(), lanes(), canvases(), describe(), call(method, params),
 *  traceFile(): the reader's own trace file in words, or null, fleet(): the fleet figure's runs or
 *  null, plan(): the plan shown or null}; figures: the schema's figures (the embed selector offers each). */
export function wireExports(ctx, figures) {
  $('embed-figure').replaceChildren(...Object.entries(figures).map(([name, f]) => el('option', { value: name, text: f.title })));
  // a trace file is no link's to carry (it never leaves the page): say what the link runs instead
  const without = (what) => {
    const file = ctx.traceFile?.();
    return file ? ` Your trace file ${file} is not in the ${what}: it runs the scenario's own workload; the file travels in Download JSON.` : '';
  };
  $('btn-copy-link').addEventListener('click', async () => {
    const ok = await X.copyText(location.href, $('share-text'));
    $('export-status').textContent = (ok ? 'Link copied.' : 'Link selected below: copy it with Ctrl+C.') + without('link');
  });
  $('btn-copy-embed').addEventListener('click', async () => {
    const ok = await X.copyText(X.embedSnippet(location.href, $('embed-figure').value, figures), $('share-text'));
    $('export-status').textContent = (ok ? 'Embed snippet copied.' : 'Snippet selected below: copy it with Ctrl+C.') + without('snippet');
  });
  // The engine writes the command (py_engine/app/serve_flags.py); data-command keeps the last one.
  $('btn-copy-serve').addEventListener('click', async () => {
    const btn = $('btn-copy-serve');
    let command;
    try {
      ({ command } = await ctx.call('serve_flags', { scenario: ctx.request()?.params?.scenario ?? {} }));
    } catch (e) {
      $('export-status').textContent = `No command: ${e?.message || e}`;
      return;
    }
    btn.dataset.command = command;
    const ok = await X.copyText(command, $('share-text'));
    $('export-status').textContent = ok ? 'vllm serve command copied.' : 'Command selected below: copy it with Ctrl+C.';
  });
  $('btn-png').addEventListener('click', async () => {
    const lanes = ctx.canvases().map((l) => ({ canvas: l.canvas, title: l.title, stats: l.stats.textContent }));
    const res = ctx.result(), sp = res.speedup;
    const title = `Continuous batching: ×${sp.time.toFixed(2)} faster (×${sp.passes.toFixed(2)} in passes)`;
    const subtitle = `${res[ctx.lanes()[0]].requests.$table.toLocaleString('en-US')} requests · ${ctx.describe()}`;
    // a production trace's attribution travels with its picture, as with its CSV (CC BY 4.0, Apache-2.0)
    const credit = X.creditOf(res, ctx.lanes());
    X.download(X.fileName('timeline', 'png'), await X.timelinePNG({ title, subtitle, lanes, credit }), 'image/png');
  });
  $('btn-csv').addEventListener('click', () => X.download(X.fileName('requests', 'csv'), X.toCSV(ctx.result(), ctx.lanes(), ctx.fleet?.()), 'text/csv'));
  $('btn-json').addEventListener('click', () => X.download(X.fileName('result', 'json'), X.toJSON(ctx.request(), ctx.result(), ctx.fleet?.(), ctx.plan?.()), 'application/json'));
}

const TEXT_TYPES = new Set(['', 'text', 'number', 'search', 'email', 'url', 'tel', 'password']);
/** Is the reader typing (a text field, a textarea, a select's own keys)? Then no shortcut. A
 *  select keeps its arrows, letters and Space, not PageDown / PageUp: those are a clicker's. */
function typing(t, key) {
  if (!t || t.isContentEditable) return !!t;
  if (t.tagName === 'SELECT') return key !== 'PageDown' && key !== 'PageUp';
  if (t.tagName === 'TEXTAREA') return true;
  return t.tagName === 'INPUT' && TEXT_TYPES.has((t.getAttribute('type') || '').toLowerCase());
}
/** A control the keyboard put focus on keeps its own Space (a button, a checkbox); one a mouse
 *  click focused gives it to the player. */
const keyboardFocused = (t) => t?.matches?.(':focus-visible');
const ownsSpace = (t) => t && (t.tagName === 'BUTTON' || t.tagName === 'SUMMARY' || t.tagName === 'A'
  || (t.tagName === 'INPUT' && ['checkbox', 'radio', 'file'].includes(t.type)));

/**
 * keys: {play, step(delta), home, end, lecture, theme, preset(i), lane() (V: the vLLM lane),
 * story() (S), storyStep(delta) (PageDown / PageUp: true when in story mode), cancel() (Escape: stop
 * a long run; true when there was one)}; passMax() for the
 * big step. Shortcuts work wherever focus is except in text fields; after a mouse click, the
 * button or slider clicked lets go of the focus, so Space plays and digits switch presets.
 */
export function wireKeys(keys, passMax) {
  document.addEventListener('click', (e) => {
    const t = e.target?.closest?.('button, input[type="range"], input[type="checkbox"], summary');
    if (t && e.detail > 0 && !t.closest('dialog')) t.blur();   // a pointer click (detail 0: keyboard)
  });
  document.addEventListener('pointerup', (e) => {
    if (e.target?.matches?.('input[type="range"]')) e.target.blur();
  });
  // a dropdown chosen with the mouse lets go of the focus once its value is picked, like a button
  let pointed = null;
  document.addEventListener('pointerdown', (e) => { pointed = e.target?.closest?.('select') || null; });
  document.addEventListener('change', (e) => {
    if (e.target === pointed) { e.target.blur(); pointed = null; }
  });
  document.addEventListener('keydown', (e) => {
    // the element typed in: inside a shadow root (the lab's editor) e.target is only its host
    const t = e.composedPath?.()[0] ?? e.target;
    // Escape types nothing: it stops a long run even from the field that started it
    if (e.key === 'Escape' && keys.cancel()) { e.preventDefault(); return; }
    if (typing(t, e.key) || e.ctrlKey || e.metaKey || e.altKey) return;
    const range = t?.tagName === 'INPUT' && t.type === 'range';
    const big = Math.max(1, Math.round(passMax() / 10));
    switch (e.key) {
      case ' ':
        if (ownsSpace(t) && keyboardFocused(t)) return;   // its own activation
        e.preventDefault(); keys.play(); break;
      case 'ArrowRight': case 'ArrowLeft': case 'Home': case 'End':
        if (range) return;                                   // the scrubber moves itself (its input event)
        e.preventDefault();
        if (e.key === 'ArrowRight') keys.step(e.shiftKey ? big : 1);
        else if (e.key === 'ArrowLeft') keys.step(e.shiftKey ? -big : -1);
        else if (e.key === 'Home') keys.home(); else keys.end();
        break;
      case 'PageDown': if (keys.storyStep(1)) e.preventDefault(); break;
      case 'PageUp': if (keys.storyStep(-1)) e.preventDefault(); break;
      case 'l': case 'L': keys.lecture(); break;
      case 'd': case 'D': keys.theme(); break;
      case 'v': case 'V': keys.lane(); break;
      case 's': case 'S': keys.story(); break;
      default: {
        const n = Number(e.key);
        if (Number.isInteger(n) && n >= 1 && n <= 9 && keys.preset(n - 1)) e.preventDefault();
      }
    }
  });
}

