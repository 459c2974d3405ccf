// Boot and wiring only: state ↔ URL ↔ controls ↔ engine ↔ figures. Each part lives in its module:
// engine/ (where answers come from), state/ (fields, URL, view), draw/ (pure drawing), ui/ (DOM).

import { Source } from './engine/source.js';
import { coalesce, latest } from './engine/latest.js';
import { SCHEMA, PRESETS, STORY, lanesOf, pageRequests, embeddedFigure } from './engine/requests.js';
import { valuesFromScenario, matchingPreset, describe, sameValues } from './state/schema.js';
import { makeContext } from './state/context.js';
import { parseView, parseURL, toQuery, storyStep } from './state/url.js';
import { createView } from './state/view.js';
import { setRecords } from './state/records.js';
import { buildControls } from './ui/controls.js';
import { createLanes } from './ui/lanes.js';
import { createPlayer } from './ui/player.js';
import { renderCards } from './ui/cards.js';
import { parseTrace, lineOf, MAX_TRACE_BYTES } from './state/tracefile.js';
import { renderHeadline, showNote, markStale, clearStale, STALE } from './ui/headline.js';
import { keepOffline } from './ui/offline.js';
import { createSideWork } from './ui/sidework.js';
import { showStatus, buildPresetButtons, markPreset, wireExports, wireKeys } from './ui/chrome.js';
import { postHeight } from './ui/export.js';
import { $ } from './ui/dom.js';
import { invalidateTheme } from './draw/canvas-kit.js';

const root = document.documentElement;
const FIGURES = [...document.querySelectorAll('[data-figure]')].map((s) => s.dataset.figure);
const view = createView(root);
const app = { source: null, values: {}, cmp: null, req: null, inflight: null, fromSnapshot: false, viewErrors: false, fatal: null, tInput: null, drawn: 0, trace: null };
let ctx, controls, lanes, player, side;

view.set(parseView(location.search, { figures: FIGURES }).view);   // theme, lecture, embed: at once
boot().catch(fatal);

async function boot() {
  const source = new Source({
    onPending: (n) => { if (n) root.dataset.pending = String(n); else delete root.dataset.pending; },
    onMiss: (n) => { root.dataset.snapshotMisses = String(n); },
  });
  app.source = source;
  const snap = source.loadSnapshot();
  source.start(onStatus);
  await snap;
  const [schema, presets, story] = await Promise.all([SCHEMA, PRESETS, STORY].map((r) => source.call(r.method, r.params)));
  setRecords(schema.records);
  ctx = makeContext(schema, presets, FIGURES, story);
  const { values, view: v, errors } = parseURL(location.search, ctx);
  app.values = values;
  if (v.embed === 'story' && !v.story) v.story = 1;     // an embedded story starts at its first step
  view.set({ embed: v.embed, lecture: v.lecture, theme: v.theme, lanes: v.lanes, speed: v.speed, ...storyView(v.story) });

  controls = buildControls($('controls-fields'), $('sched-list'), $('lane-toggles'), schema, ctx.fields, { onValue, onLane });
  controls.setValues(app.values, lanesNow());
  // A bad value in the link goes beside its control; one with no control (theme=…) above the form.
  const viewMsgs = Object.entries(errors).filter(([key, msg]) => !controls.setError(key, msg)).map(([, msg]) => msg);
  $('form-message').textContent = viewMsgs.join(' · ');
  app.viewErrors = viewMsgs.length > 0;   // link problems stay visible until the user acts
  $('embed-open').href = openHref();
  buildPresetButtons($('preset-buttons'), presets, applyPreset, schema.schedulers);
  markPreset($('preset-buttons'), matchingPreset(ctx.fields, presets, app.values));

  lanes = createLanes({ container: $('timelines'), tooltip: $('tooltip'), figure: $('fig-timeline'), schema,
    state: laneState, redraw: redrawSoon, onPick: (p) => player.goto(p) });
  player = createPlayer({ passMax: lanes.passMax, onFrame: redrawSoon, onSettle: writeURL,
    seconds: v.speed, onSpeed: (speed) => { view.set({ speed }); writeURL(); },
    results: () => lanesNow().filter((s) => app.cmp?.[s]).map((s) => [s, app.cmp[s]]) });
  player.reset(v.pass);
  side = createSideWork({ source, schema, fields: ctx.fields, page: ctx, root, state: sideState, onUseKV, onApply: onValue, onDeploy, onCalibrated });
  wireUI();

  await recompute();
  performance.mark('cbx:first-timeline');
  side.begin(embeddedFigure(ctx, view.get()));
  if (view.get().embed) postHeight(view.get().embed);

  source.readyPromise.then(async () => {
    performance.mark('cbx:engine-ready');
    // Re-run in the page what the snapshot answered, so "ready" means the engine's own numbers.
    await app.inflight;          // a run that was waiting for the engine is already engine-made
    if (!app.cmp || app.fromSnapshot) await recompute();
    root.dataset.state = 'ready';
    side.live();
    keepOffline(source.client.cached, () => { root.dataset.offline = 'ready'; $('engine-offline').hidden = false; });
    if (view.get().embed === 'check') side.runCheck();
  }, () => { root.dataset.state = 'failed'; });
}

function fatal(err) {   // a bug in the page itself: say so loudly (console + status line), keep it
  console.error(err);
  app.fatal = `The page could not start: ${err?.detail?.message || err?.message || err}`;
  root.dataset.state = 'failed';
  $('engine-status-text').textContent = app.fatal;
}

function onStatus(s) {
  if (app.fatal) return;
  showStatus(s);
  if (s.stage === 'failed') root.dataset.state = 'failed';
  // test hooks: how the engine started, and who shares it
  if (s.stage === 'ready') Object.assign(root.dataset, { engineBoot: s.via, engineNote: s.detail, engine: s.shared ? 'shared' : 'dedicated', engineClients: String(s.clients) });
}

// ------------------------------------------------------------------ state changes
const lanesNow = () => lanesOf(ctx.schema.schedulers, view.get());
const laneState = () => ({ cmp: app.cmp, lanes: lanesNow(), pass: player?.pass ?? null,
  lecture: root.classList.contains('lecture'), compact: !!root.dataset.embed });
const sideState = () => ({ values: app.values, view: view.get(), lanes: lanesNow(), cmp: app.cmp, items: app.trace?.items });

function onValue(path, value) {
  if (app.values[path] === value) return;     // Enter then change: one value, one run
  app.values[path] = value;
  changed();
}

function onLane(name, on) {
  const ls = view.get().lanes.filter((s) => s !== name);
  view.set({ lanes: on ? [...ls, name] : ls });
  changed();
}

/** The KV calculator's "use as budget": set the budget field and show a lane it applies to. */
function onUseKV(tokens) {
  const path = ctx.schema.figures.kv.budget;
  app.values[path] = tokens;
  const owner = ctx.fields.find((f) => f.path === path);
  const ls = view.get().lanes;
  view.set({ lanes: [...ls, ...(owner?.applies_to || []).filter((s) => !ls.includes(s) && ctx.optional.includes(s))] });
  changed();
}

/** The reader's own trace file: parsed here (never sent anywhere), then run like any trace. */
async function onTraceFile(file) {
  const status = $('trace-file-status'), error = $('trace-file-error');
  error.textContent = '';
  if (!file) return;
  if (file.size > MAX_TRACE_BYTES) { error.textContent = `${file.name}: larger than ${MAX_TRACE_BYTES / 1e6} MB`; return; }
  const r = parseTrace(file.name, await file.text());
  if (r.error) { error.textContent = r.error; return; }
  app.trace = { name: file.name, ...r };
  status.textContent = `${file.name}: ${r.items.length.toLocaleString('en-US')} requests (${r.format}); the generator's and the production trace's fields are not used.`;
  $('trace-file-clear').hidden = false;
  changed();
}

function clearTraceFile() {
  app.trace = null;
  $('trace-file').value = '';
  $('trace-file-status').textContent = '';
  $('trace-file-error').textContent = '';
  $('trace-file-clear').hidden = true;
  changed();
}

/** The deployment panel's "run on this deployment": the roofline cost for it, its KV pool
 *  (kv_tokens auto) and the vllm lane (the only scheduler with a KV pool). */
function onDeploy(d) {
  const cost = ctx.schema.figures.kv.cost;
  app.values[cost] = 'roofline';
  for (const [k, v] of Object.entries(d)) if (`${cost}.${k}` in app.values) app.values[`${cost}.${k}`] = v;
  app.values[ctx.schema.figures.kv.budget] = 'auto';
  const ls = view.get().lanes;
  const kvLanes = ctx.fields.find((f) => f.path === ctx.schema.figures.kv.budget)?.applies_to || [];
  view.set({ lanes: [...ls, ...kvLanes.filter((s) => !ls.includes(s) && ctx.optional.includes(s))] });
  changed();
}

/** The calibration's "use the fitted cost model": the custom cost with the fitted terms. */
function onCalibrated(c) {
  const cost = ctx.schema.figures.kv.cost;
  app.values[cost] = 'custom';
  for (const [k, v] of Object.entries(c)) if (`${cost}.${k}` in app.values) app.values[`${cost}.${k}`] = v;
  changed();
}

function changed() {
  app.tInput = performance.now();
  // a change away from the story step's own scenario leaves the story (the reader explores on)
  const step = storyStep(ctx, view.get());
  if (step && !sameValues(ctx.fields, app.values, valuesFromScenario(ctx.fields, step.scenario || {}))) {
    view.set(storyView(null));
  }
  controls.setValues(app.values, lanesNow());   // a choice can show or hide other fields
  player.reset(null);
  writeURL();
  markPreset($('preset-buttons'), matchingPreset(ctx.fields, ctx.presets, app.values));
  recompute().then(() => side.start());
}

function writeURL() {
  history.replaceState(null, '', `${location.pathname}${toQuery(ctx, app.values, { ...view.get(), pass: player.pass })}`);
  app.viewErrors = false;
  $('embed-open').href = openHref();
}

/** The full explorer for the current view (what an embedded figure links to). */
function openHref() {
  const u = new URL(location.href);
  u.searchParams.delete('embed');
  return u.href;
}

// ------------------------------------------------------------------ story mode
/** The view patch for story step n (1-based), or for leaving the story (null). */
function storyView(n) {
  const step = n ? ctx?.story?.[n - 1] : null;
  return { story: step ? n : null, storyFigure: step?.highlight ?? null, storyFocus: step?.focus ?? null };
}

/** Go to story step n: its scenario and lanes, its card, what it highlights. */
function applyStory(n) {
  const step = ctx.story[n - 1];
  if (!step) return false;
  app.values = valuesFromScenario(ctx.fields, step.scenario || {});
  view.set({ lanes: (step.schedulers || []).filter((s) => ctx.optional.includes(s)), ...storyView(n) });
  controls.clearErrors();
  $('form-message').textContent = '';
  renderStory();
  changed();
  showStoryFigure();
  return true;
}

/** PageDown / PageUp: the next or previous step; false when not in story mode. */
function storyStepBy(delta) {
  const n = view.get().story;
  if (!n) return false;
  applyStory(Math.max(1, Math.min(ctx.story.length, n + delta)));
  return true;
}

function toggleStory() {
  if (view.get().story) { view.set(storyView(null)); renderStory(); writeURL(); lanes.refit(); redrawAll(); return; }
  applyStory(1);
}

function renderStory() {
  const v = view.get();
  const step = storyStep(ctx, v);
  if (step) {
    $('story-count').textContent = `Step ${v.story} of ${ctx.story.length}`;
    $('story-title').textContent = step.title;
    $('story-text').textContent = step.text;
    $('story-prev').disabled = v.story <= 1;
    $('story-next').disabled = v.story >= ctx.story.length;
  }
  markStoryFocus();
}

/** The part of the highlighted figure the step points at: a lane, or the vllm lane's block view. */
function markStoryFocus() {
  for (const e of document.querySelectorAll('.story-focus')) e.classList.remove('story-focus');
  const focus = view.get().story ? view.get().storyFocus : null;
  if (!focus) return;
  const target = focus === 'blocks' ? document.querySelector('canvas.blockview:not([hidden])')
    : document.querySelector(`.lane[data-lane="${focus}"]`);
  target?.classList.add('story-focus');
}

function showStoryFigure() {
  const v = view.get();
  if (v.embed) return;
  const fig = document.querySelector(`[data-figure="${v.storyFigure}"]`);
  const card = $('fig-story');
  const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  requestAnimationFrame(() => {
    if (v.storyFigure === 'timeline') window.scrollTo({ top: 0, behavior: smooth ? 'smooth' : 'auto' });
    else (card || fig)?.scrollIntoView({ block: 'start', behavior: smooth ? 'smooth' : 'auto' });
  });
}

function applyPreset(name) {
  const p = ctx.presets[name];
  if (!p) return false;
  app.values = valuesFromScenario(ctx.fields, p.scenario || {});
  view.set({ lanes: (p.schedulers || []).filter((s) => ctx.optional.includes(s)), ...storyView(null) });
  renderStory();
  controls.clearErrors();
  $('form-message').textContent = '';
  changed();
  return true;
}

// ------------------------------------------------------------------ the main run
// One engine run at a time; changes that arrive meanwhile collapse into one more run.
const mainRun = latest();
const recompute = coalesce(compute, {
  onBusy: () => { root.dataset.busy = '1'; },        // test / bench hook: set until the latest values are drawn
  onIdle: () => { delete root.dataset.busy; },
});

async function compute() {
  const token = mainRun.start();
  const req = pageRequests(ctx, { values: app.values, view: view.get(), items: app.trace?.items }).main;
  const fromSnapshot = !app.source.live && app.source.hasSnapshot(req.method, req.params);
  if (!app.source.live && !fromSnapshot) markStale(app.source.failed ? STALE.failed : STALE.waiting);
  const busy = app.source.live ? setTimeout(() => { if (!token.stale) markStale(STALE.busy); }, STALE.busyAfterMs) : null;
  app.inflight = (async () => {
    let note = null;
    try {
      const tCall = performance.now();
      const cmp = await app.source.call(req.method, req.params, { signal: token.signal });
      performance.measure('cbx:engine', { start: tCall, end: performance.now() });
      if (token.stale) return;
      Object.assign(app, { req, cmp, fromSnapshot });
      controls.clearEngineErrors();
      if (!app.viewErrors) $('form-message').textContent = '';
      renderMain();
    } catch (err) {
      if (token.stale) return;
      const d = err.detail || { message: err.message };
      if (app.source.failed) markStale(STALE.failed);   // never "computing…" once the engine has failed
      if (app.trace && /^workload\.items/.test(d.field || '')) $('trace-file-error').textContent = lineOf(d.message, app.trace.name, app.trace.lines);
      else if (!(d.type === 'ScenarioError' && controls.showEngineError(d))) $('form-message').textContent = d.message;
      note = `Not simulated: ${d.message}${app.cmp ? ' — still showing the last good result.' : ''}`;
    } finally {
      clearTimeout(busy);
      if (!token.stale) showNote(note, true);
    }
  })();
  await app.inflight;
}

/** The reader stops a long run: the engine drops it between two slices of work. */
function cancelRun() {
  if (document.documentElement.dataset.stale !== STALE.busy) return false;
  mainRun.cancel();
  markStale(STALE.cancelled);
  showNote('Cancelled: the engine stopped that run; change a value to simulate again.');
  return true;
}
$('btn-cancel-run').addEventListener('click', cancelRun);

function renderMain() {
  const cmp = app.cmp;
  renderHeadline(cmp, ctx.schema.schedulers.filter((s) => s.base).map((s) => s.name));
  clearStale();
  const t0 = performance.now();
  lanes.render();
  lanes.frame();
  player.readout();
  performance.measure('cbx:draw', { start: t0, end: performance.now() });
  const shown = lanesNow().filter((s) => cmp[s]);
  renderCards($('metric-cards'), cmp, shown, ctx.fields.filter((f) => f.group === 'slo'));
  const label = (s) => ctx.schema.schedulers.find((x) => x.name === s)?.label || s;
  $('metrics-lanes').textContent = shown.length > 2 ? `${shown.slice(0, -1).map(label).join(', ')} and ${label(shown.at(-1))}`
    : shown.map(label).join(' vs ');
  // a production trace's attribution, wherever its numbers are shown (CC BY 4.0)
  const credit = Object.values(cmp).find((r) => r && r.credit)?.credit || '';
  for (const p of document.querySelectorAll('[data-credit]')) { p.textContent = credit ? `Trace: ${credit}.` : ''; p.hidden = !credit; }
  markStoryFocus();
  $('phone-summary').textContent = describe(ctx.fields, app.values);
  root.dataset.drawn = String(++app.drawn);
  root.dataset.firstPaint ??= app.fromSnapshot ? 'snapshot' : 'engine';   // test hook
  if (app.tInput != null) {
    performance.measure('cbx:redraw', { start: app.tInput, end: performance.now() });
    app.tInput = null;
  }
}

// ------------------------------------------------------------------ drawing and chrome
let framePending = false;
function redrawSoon() {
  if (framePending) return;
  framePending = true;
  requestAnimationFrame(() => { framePending = false; lanes.frame(); player.readout(); lanes.focusTip(); });
}

function redrawAll() {
  invalidateTheme();
  view.set({});
  lanes.refit();
  lanes.frame();
  player.readout();
  side.redraw();
}

function wireUI() {
  $('btn-lecture').addEventListener('click', toggleLecture);
  $('btn-story').addEventListener('click', toggleStory);
  const drawer = (open) => {
    if (open) root.dataset.drawer = 'open'; else delete root.dataset.drawer;
    $('btn-controls').setAttribute('aria-expanded', String(open));
    if (open) $('controls').querySelector('input, select, button:not(#btn-controls-close)')?.focus({ preventScroll: true });
  };
  $('btn-controls').addEventListener('click', () => drawer(root.dataset.drawer !== 'open'));
  $('btn-controls-close').addEventListener('click', () => drawer(false));
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && root.dataset.drawer === 'open') drawer(false); });
  $('story-prev').addEventListener('click', () => storyStepBy(-1));
  $('story-next').addEventListener('click', () => storyStepBy(1));
  $('story-exit').addEventListener('click', toggleStory);
  renderStory();
  $('btn-theme').addEventListener('click', toggleTheme);
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redrawAll);
  $('controls-form').addEventListener('submit', (e) => e.preventDefault());
  $('trace-file').addEventListener('change', (e) => onTraceFile(e.target.files?.[0]));
  $('trace-file-clear').addEventListener('click', clearTraceFile);
  wireExports({ result: () => app.cmp, request: () => app.req, lanes: () => lanesNow().filter((s) => app.cmp?.[s]),
    canvases: () => lanes.canvases(), describe: () => describe(ctx.fields, app.values) }, ctx.schema.figures);
  wireKeys({
    play: () => player.play(), step: (d) => player.step(d), home: () => player.home(), end: () => player.end(),
    lecture: toggleLecture, theme: toggleTheme, preset: (i) => applyPreset(Object.keys(ctx.presets)[i]),
    lane: () => { const s = ctx.optional[0]; if (s) onLane(s, !view.get().lanes.includes(s)); },
    story: toggleStory, storyStep: storyStepBy, cancel: cancelRun,
  }, lanes.passMax);
  // Canvases size to the figure's width; a height change is redrawn by whatever caused it.
  let figWidth = -1;
  new ResizeObserver((entries) => {
    const w = entries[entries.length - 1].contentRect.width;
    if (w !== figWidth) { figWidth = w; requestAnimationFrame(redrawAll); }
  }).observe(document.querySelector('.figures'));
  // lecture mode fits the lanes to the window's height as well
  window.addEventListener('resize', () => { if (view.get().lecture) requestAnimationFrame(redrawAll); });
}

function toggleTheme() { view.toggleTheme(); writeURL(); redrawAll(); }
function toggleLecture() { view.toggleLecture(); writeURL(); requestAnimationFrame(redrawAll); }
