// Boot and wiring only: state ↔ URL ↔ controls ↔ engine ↔ figures. Each part lives in its module:
// engine/ (where answers come from), state/ (fields, URL, view), draw/ (pure drawing), ui/ (DOM).

import { Source } from './engine/source.js';
import { SCHEMA, PRESETS, STORY, lanesOf, pageRequests, embeddedFigure } from './engine/requests.js';
import { valuesFromScenario, matchingPreset, describe } from './state/schema.js';
import { makeContext } from './state/context.js';
import { parseView, parseURL, toQuery } from './state/url.js';
import { createView } from './state/view.js';
import { setRecords, poolOf } from './state/records.js';
import { buildControls } from './ui/controls.js';
import { createLanes } from './ui/lanes.js';
import { createPlayer } from './ui/player.js';
import { renderCards, lanesInWords } from './ui/cards.js';
import { renderHeadline, clearStale, showCredit } from './ui/headline.js';
import { keepOffline } from './ui/offline.js';
import { createSideWork } from './ui/sidework.js';
import { createStory, storyView } from './ui/story.js';
import { createTraceInput } from './ui/traceinput.js';
import { createMainRun } from './ui/mainrun.js';
import { createLab } from './ui/lab.js';
import { showStatus, buildPresetButtons, markPreset, wireExports, wireKeys, wireDrawer, wireResize } from './ui/chrome.js';
import { postHeight, explorerHref } from './ui/export.js';
import { $ } from './ui/dom.js';
import { invalidateTheme } from './draw/canvas-kit.js';

const root = document.documentElement;
const FIGURES = [...document.querySelectorAll('[data-figure]')].map((s) => s.dataset.figure);
const view = createView(root);
const app = { source: null, values: {}, cmp: null, req: null, fromSnapshot: false, viewErrors: false, fatal: null, tInput: null, drawn: 0 };
let ctx, controls, lanes, player, side, story, traceFile, mainRun, lab;

view.set(parseView(location.search, { figures: FIGURES }).view);   // theme, lecture, embed: at once
boot().catch(fatal);

async function boot() {
  const source = new Source({
    onPending: (n) => { if (n) root.dataset.pending = String(n); else delete root.dataset.pending; },
    onMiss: (n, method) => { root.dataset.snapshotMisses = String(n); root.dataset.snapshotMissed = method; },   // test hooks: how many, the last one's method
  });
  app.source = source;
  mainRun = createMainRun({ source, root, onResult, onKeep: drawResult, onError: onRunError,
    onNone: () => { clearStale(); root.dataset.drawn = String(++app.drawn); },   // nothing to draw
    behind: () => side.fleetAhead(), onCancel: () => side.cancel(),
    request: () => pageRequests(ctx, { values: app.values, view: view.get(), items: traceFile.items() }).main });
  const snap = source.loadSnapshot();
  source.start(onStatus); await snap;
  const [schema, presets, steps] = await Promise.all([SCHEMA, PRESETS, STORY].map((r) => source.call(r.method, r.params)));
  setRecords(schema.records);
  ctx = makeContext(schema, presets, FIGURES, steps);
  const { values, view: v, errors } = parseURL(location.search, ctx);
  app.values = values;
  if (v.embed === 'story' && !v.story) v.story = 1;     // an embedded story starts at its first step
  view.set({ embed: v.embed, lecture: v.lecture, theme: v.theme, lanes: v.lanes, speed: v.speed, challenge: v.challenge,
    gpus: v.gpus, capacity: v.capacity, ...storyView(ctx.story, v.story) });
  if (v.embed) postHeight(v.embed, schema.figures);   // its height reserved before the first draw

  controls = buildControls($('controls-fields'), $('sched-list'), $('lane-toggles'), schema, ctx.fields, { onValue, onLane });
  controls.setValues(app.values, lanesNow());
  // A bad value in the link goes beside its control; one with no control (theme=…) above the form.
  const viewMsgs = Object.entries(errors).filter(([key, msg]) => !controls.setError(key, msg)).map(([, msg]) => msg);
  $('form-message').textContent = viewMsgs.join(' · ');
  app.viewErrors = viewMsgs.length > 0;   // link problems stay visible until the user acts
  $('embed-open').href = explorerHref(location.href);
  buildPresetButtons($('preset-buttons'), presets, applyPreset, schema.schedulers);
  markPreset($('preset-buttons'), matchingPreset(ctx.fields, presets, app.values));

  lanes = createLanes({ container: $('timelines'), tooltip: $('tooltip'), figure: $('fig-timeline'), schema,
    state: laneState, redraw: redrawSoon, onPick: (p) => player.goto(p) });
  player = createPlayer({ passMax: lanes.passMax, onFrame: redrawSoon, onSettle: writeURL,
    seconds: v.speed, onSpeed: (speed) => { view.set({ speed }); writeURL(); },
    results: () => lanesNow().filter((s) => app.cmp?.[s]).map((s) => [s, app.cmp[s]]) });
  player.reset(v.pass);
  side = createSideWork({ source, schema, fields: ctx.fields, page: ctx, root, state: sideState, onUseKV, onApply: onValue, onDeploy, onCalibrated,
    onFleetAnswer, held: () => mainRun.stopped(), view: view.get, onView: (patch) => { view.set(patch); writeURL(); } });
  lab = createLab({ source, page: ctx, values: () => app.values, view: view.get, onValues, onView: (patch) => { view.set(patch); writeURL(); } });
  wireUI(); lab.sync();

  // A fleet's page (a link to one, its embed) is opened for the fleet: its run is the engine's
  // first call, the one-server timelines' next (on a whole trace those may take as long, to be
  // refused)
  const embed = embeddedFigure(ctx, view.get());
  if (pageRequests(ctx, sideState()).fleet) side.begin(embed, true);
  await mainRun.run();
  performance.mark('cbx:first-timeline');
  side.begin(embed);

  source.readyPromise.then(async () => {
    performance.mark('cbx:engine-ready');
    // Re-run in the page what the snapshot answered, so "ready" means the engine's own numbers.
    await mainRun.whenLive(() => !app.cmp || app.fromSnapshot);   // (not after a Cancel)
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

function onStatus(s) { if (!app.fatal) showStatus(s); }

// ------------------------------------------------------------------ state changes
const lanesNow = () => lanesOf(ctx.schema.schedulers, view.get(), app.values);
const laneState = () => ({ cmp: app.cmp, lanes: lanesNow(), pass: player?.pass ?? null,
  lecture: root.classList.contains('lecture'), compact: !!root.dataset.embed, policyName: app.values['custom.name'] });
const sideState = () => ({ values: app.values, view: view.get(), lanes: lanesNow(), cmp: app.cmp, items: traceFile.items() });

function onValue(path, value, patch = typeof path === 'object' ? path : { [path]: value }) {   // or onValue({path: value, ...})
  if (Object.entries(patch).some(([p, v]) => app.values[p] !== v)) onValues(patch);   // Enter then change: one run
}
function onValues(patch) { Object.assign(app.values, patch); changed(); }

function onLane(name, on) {
  const ls = view.get().lanes.filter((s) => s !== name);
  view.set({ lanes: on ? [...ls, name] : ls });
  changed();
}

/** The KV budget (tokens, or 'auto'), and on screen the optional lanes it applies to (vllm). */
function setBudget(tokens) {
  const path = ctx.schema.figures.kv.budget;
  app.values[path] = tokens;
  const ls = view.get().lanes;
  const owners = ctx.fields.find((f) => f.path === path)?.applies_to || [];
  view.set({ lanes: [...ls, ...owners.filter((s) => !ls.includes(s) && ctx.optional.includes(s))] });
}

/** The cost model of `kind` with the terms it has of `terms`. */
function setCost(kind, terms) {
  const cost = ctx.schema.figures.kv.cost;
  app.values[cost] = kind;
  for (const [k, v] of Object.entries(terms)) if (`${cost}.${k}` in app.values) app.values[`${cost}.${k}`] = v;
}

// The side panels' buttons: "use as budget", "run on this deployment", "use the fitted cost model".
function onUseKV(tokens) { setBudget(tokens); changed(); }
function onDeploy(d, knobs) { setCost('roofline', d); setBudget('auto'); Object.assign(app.values, knobs); changed(); }
function onCalibrated(c) {   // a fitted cost has no deployment: "auto" keeps the pool it resolved to
  const pool = app.values[ctx.schema.figures.kv.budget] === 'auto' ? poolOf(app.cmp) : null;
  setCost('custom', c); if (pool != null) setBudget(pool);
  changed(); return pool;
}

function changed() {
  app.tInput = performance.now();
  story.follow(app.values);
  controls.setValues(app.values, lanesNow());   // a choice can show or hide other fields
  player.reset(null);
  writeURL();
  markPreset($('preset-buttons'), matchingPreset(ctx.fields, ctx.presets, app.values));
  side.show(); side.supersede(); lab.sync();
  mainRun.run().then(() => { if (!mainRun.stopped()) side.start(); });   // a Cancel leaves the engine free
}

function writeURL() {
  history.replaceState(null, '', `${location.pathname}${toQuery(ctx, app.values, { ...view.get(), pass: player.pass })}`);
  app.viewErrors = false;
  $('embed-open').href = explorerHref(location.href);
}

/** A preset or a story step ({scenario, schedulers}): its values and lanes with the view patch,
 *  the messages cleared, then run. */
function applyScenario({ scenario, schedulers }, patch) {
  app.values = valuesFromScenario(ctx.fields, scenario || {});
  view.set({ lanes: (schedulers || []).filter((s) => ctx.optional.includes(s)), ...patch });
  story.render();
  controls.clearErrors();
  $('form-message').textContent = '';
  changed();
}

function applyPreset(name) {
  const p = ctx.presets[name];
  if (!p) return false;
  applyScenario(p, storyView(ctx.story, null));
  return true;
}

// ------------------------------------------------------------------ the main run
/** The engine's answer for the latest values: keep it, clear the engine's messages, draw it. */
function onResult(r) {
  Object.assign(app, r);
  controls.clearEngineErrors();
  if (!app.viewErrors) $('form-message').textContent = '';
  renderMain();
}

/** The engine refused the values (or failed): its message beside the trace file or the control it
 *  names, else above the form. */
function onRunError(d) {
  controls.clearEngineErrors();     // the latest answer's message replaces an earlier refusal's
  if (!traceFile.showError(d) && !(d.type === 'ScenarioError' && controls.showEngineError(d))) $('form-message').textContent = d.message;
}

/** The fleet figure's own run answered (d null) or was refused: the cluster's fields are run
 *  there alone (every other figure runs one server), so its message goes beside the control it
 *  names, as the main run's do (a bad pool server JSON said nothing beside its box). */
function onFleetAnswer(d) {
  controls.clearEngineErrors('fleet');
  if (d?.type === 'ScenarioError') controls.showEngineError(d, 'fleet');
}

function renderMain() {
  drawResult();
  root.dataset.drawn = String(++app.drawn);
  root.dataset.firstPaint ??= app.fromSnapshot ? 'snapshot' : 'engine';   // test hook
  if (app.tInput != null) { performance.measure('cbx:redraw', { start: app.tInput, end: performance.now() }); app.tInput = null; }
}

/** Draw the result kept in app (the latest answer, or the last good one after a refusal). */
function drawResult() {
  const cmp = app.cmp;
  renderHeadline(cmp, ctx.base);
  clearStale();
  const t0 = performance.now();
  lanes.render();
  lanes.frame();
  player.readout();
  performance.measure('cbx:draw', { start: t0, end: performance.now() });
  const shown = lanesNow().filter((s) => cmp[s]);
  renderCards($('metric-cards'), cmp, shown, ctx.fields.filter((f) => f.group === 'slo'));
  $('metrics-lanes').textContent = lanesInWords(shown, ctx.schema.schedulers);
  showCredit(cmp);
  story.markFocus();
  $('phone-summary').textContent = describe(ctx.fields, app.values);
}

// ------------------------------------------------------------------ drawing and chrome
let framePending = false;
function redrawSoon() {
  if (framePending) return;
  framePending = true;
  requestAnimationFrame(() => { framePending = false; lanes.frame(); player.readout(); lanes.focusTip(); });
}

function redrawAll() {   // a theme, size or mode change: every figure again
  invalidateTheme(); view.set({}); lanes.refit(); lanes.frame(); player.readout(); side.redraw();
}

function wireUI() {
  story = createStory({ page: ctx, view, apply: applyScenario, left: () => { writeURL(); lanes.refit(); redrawAll(); } });
  traceFile = createTraceInput(changed, ctx.fields.find((f) => f.path === 'workload.requests')?.page_max, (m, p) => app.source.call(m, p));
  $('btn-lecture').addEventListener('click', toggleLecture);
  wireDrawer(root);
  $('btn-theme').addEventListener('click', toggleTheme);
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redrawAll);
  $('controls-form').addEventListener('submit', (e) => e.preventDefault());
  wireExports({ result: () => app.cmp, request: () => app.req, lanes: () => lanesNow().filter((s) => app.cmp?.[s]),
    canvases: () => lanes.canvases(), describe: () => describe(ctx.fields, app.values),
    call: (method, params) => app.source.call(method, params), traceFile: () => traceFile.describe(),
    fleet: () => side.fleetExport(), plan: () => side.planExport() }, ctx.schema.figures);
  wireKeys({
    play: () => player.play(), step: (d) => player.step(d), home: () => player.home(), end: () => player.end(),
    lecture: toggleLecture, theme: toggleTheme, preset: (i) => applyPreset(Object.keys(ctx.presets)[i]),
    lane: () => { const s = ctx.optional[0]; if (s) onLane(s, !view.get().lanes.includes(s)); },
    story: story.toggle, storyStep: story.stepBy, cancel: mainRun.cancel,
  }, lanes.passMax);
  wireResize(document.querySelector('.figures'), redrawAll, () => view.get().lecture);
}

function toggleTheme() { view.toggleTheme(); writeURL(); redrawAll(); }
function toggleLecture() { view.toggleLecture(); writeURL(); requestAnimationFrame(redrawAll); }
