// Wiring: state ↔ URL ↔ controls ↔ engine ↔ drawing. Drawing, state rules, panels and exports
// live in their own modules; this file only connects them.

import { Source } from './source.js';
import * as S from './state.js';
import { buildControls, el } from './controls.js';
import { draw as drawLane, hitTest, doneBy, timeAt, segmentAt, indexSegments } from './timeline.js';
import { drawKV } from './kvstrip.js';
import * as SW from './sweeps.js';
import { renderCards } from './cards.js';
import { stallRequests, renderStall, buildKV, renderKV, renderCheck } from './panels.js';
import * as X from './export.js';
import { invalidateTheme, fmt, fmtPct, fmtTime, colorFor } from './canvas-kit.js';

const root = document.documentElement;
const $ = (id) => document.getElementById(id);
const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');

const LANES = {
  static: ['Static batching', 'request-level: a batch holds its slots until its slowest member ends'],
  continuous: ['Continuous batching', 'iteration-level: a finished slot is refilled on the next pass'],
  vllm: ['vLLM-style', 'paged KV budget, token budget per pass, preemption'],
};

const app = {
  source: new Source(),
  fields: [], presets: {}, values: {}, view: {}, ctl: null,
  req: null, cmp: null, pass: null, playing: 0, lanes: new Map(), focus: null,
  tInput: null, drawn: 0, sweeps: { skew: [], slots: [] }, stall: null, kvForm: null,
};

// ------------------------------------------------------------------ boot
applyEarlyView();
boot().catch((err) => fatal(err));

function applyEarlyView() {
  const q = new URLSearchParams(location.search);
  const th = q.get('theme');
  if (th === 'dark' || th === 'light') root.dataset.theme = th;
  if (['1', 'true'].includes(q.get('lecture'))) root.classList.add('lecture');
  const em = q.get('embed');
  if (S.FIGURES.includes(em)) setEmbed(em);
  syncThemeButton();
}

async function boot() {
  const src = app.source;
  src.onPending = (n) => { if (n) root.dataset.pending = String(n); else delete root.dataset.pending; };
  const snap = src.loadSnapshot();
  src.start(onStatus);
  await snap;
  const [schema, presets] = await Promise.all([src.call('schema', {}), src.call('presets', {})]);
  app.fields = S.fieldsFromSchema(schema);
  app.presets = presets || {};
  const { values, view, errors } = S.readURL(location.search, app.fields, app.presets);
  app.values = values;
  app.view = view;
  app.pass = view.pass;
  if (view.theme) root.dataset.theme = view.theme;
  root.classList.toggle('lecture', view.lecture);
  if (view.embed) setEmbed(view.embed);

  app.ctl = buildControls($('controls-fields'), app.fields, { onValue });
  app.ctl.setValues(app.values, app.view);
  $('ctl-vllm').checked = app.view.vllm;
  const viewMsgs = [];
  for (const [name, msg] of Object.entries(errors)) if (!app.ctl.setError(name, msg)) viewMsgs.push(msg);
  $('form-message').textContent = viewMsgs.join(' · ');
  app.viewErrors = viewMsgs.length > 0;   // link problems stay visible until the user acts
  $('embed-open').href = openHref();
  buildPresetButtons();
  wireUI();

  await recompute();
  performance.mark('cbx:first-timeline');
  startSideWork();

  src.readyPromise.then(async () => {
    performance.mark('cbx:engine-ready');
    // Re-run in the page what the snapshot answered, so "ready" means the engine's own numbers.
    await app.inflight;          // a run that was waiting for the engine is already engine-made
    if (!app.cmp || app.cmpFromSnapshot) await recompute();
    root.dataset.state = 'ready';
    startSideWork();
    if (app.view.embed === 'check') runCheck();
  }, () => { root.dataset.state = 'failed'; });
}

function fatal(err) {
  // A bug in the page itself: say so loudly (console + status line) and keep that text.
  console.error(err);
  app.fatal = `The page could not start: ${err?.detail?.message || err?.message || err}`;
  root.dataset.state = 'failed';
  $('engine-status-text').textContent = app.fatal;
}

function onStatus(s) {
  if (app.fatal) return;
  const text = {
    download: 'Downloading the Python runtime',
    start: 'Starting Python',
    engine: 'Loading the engine',
    ready: 'Engine live: every change re-simulates in this page',
    failed: 'The engine failed to load',
  }[s.stage] || s.stage;
  const pct = s.stage !== 'ready' && s.stage !== 'failed' && s.progress > 0 ? ` ${Math.round(100 * s.progress)}%` : '';
  $('engine-status-text').textContent = s.stage === 'failed'
    ? `${text}: ${s.detail}. Showing the build-time result.`
    : `${text}${pct}${s.stage === 'ready' ? '' : '… (showing the build-time result)'}`;
  $('engine-progress').value = s.progress || 0;
  if (s.stage === 'failed') root.dataset.state = 'failed';
}

// ------------------------------------------------------------------ state changes
function onValue(name, value) {
  if (app.values[name] === value) return;     // Enter then change: one value, one run
  app.tInput = performance.now();
  app.values[name] = value;
  if (name === 'arrival' || name === 'cost' || name === 'preemption') app.ctl.setValues(app.values, app.view);
  app.pass = null;
  changed();
}

function setView(patch) {
  Object.assign(app.view, patch);
  writeURL();
}

function changed({ sweeps = true } = {}) {
  writeURL();
  markPreset();
  recompute().then(() => { if (sweeps) startSideWork(); });
}

function writeURL() {
  const v = { ...app.view, pass: app.pass };
  history.replaceState(null, '', `${location.pathname}${S.toQuery(app.fields, app.presets, app.values, v)}`);
  app.viewErrors = false;
  $('embed-open').href = openHref();
}

/** The full explorer for the current view (what an embedded figure links to). */
function openHref() {
  const u = new URL(location.href);
  u.searchParams.delete('embed');
  return u.href;
}

function applyPreset(name) {
  const p = app.presets[name];
  if (!p) return;
  app.tInput = performance.now();
  app.values = S.valuesFromScenario(app.fields, p.scenario || {});
  if (S.presetUsesVllm(p)) { app.view.vllm = true; $('ctl-vllm').checked = true; }
  app.ctl.clearErrors();
  $('form-message').textContent = '';
  app.ctl.setValues(app.values, app.view);
  app.pass = null;
  changed();
}

function markPreset() {
  const match = S.matchingPreset(app.fields, app.presets, app.values);
  for (const b of $('preset-buttons').children) b.setAttribute('aria-pressed', String(b.dataset.preset === match));
}

function buildPresetButtons() {
  const box = $('preset-buttons');
  box.replaceChildren();
  Object.entries(app.presets).forEach(([name, p], i) => {
    const b = el('button', { type: 'button', 'data-preset': name, title: p.description || '', 'aria-pressed': 'false' },
      i < 9 ? el('kbd', { text: String(i + 1) }) : null, document.createTextNode(p.label || name));
    b.addEventListener('click', () => applyPreset(name));
    box.append(b);
  });
  markPreset();
}

function schedulers() { return app.view.vllm ? ['static', 'continuous', 'vllm'] : ['static', 'continuous']; }

// ------------------------------------------------------------------ engine calls
// One engine run at a time: changes that arrive meanwhile (a dragged slider) collapse into one
// more run with the latest values, instead of queueing stale runs in the worker.
let gen = 0, loop = null, again = false;
function recompute() {
  if (loop) { again = true; return loop; }
  root.dataset.busy = '1';       // test / bench hook: set until the latest values are drawn
  loop = (async () => {
    try { do { again = false; await compute(); } while (again); } finally { loop = null; delete root.dataset.busy; }
  })();
  app.inflight = loop;
  return loop;
}
async function compute() {
  const my = ++gen;
  const scenario = S.scenarioFrom(app.fields, app.values);
  const req = S.compareRequest(scenario, app.view.vllm);
  const fromSnapshot = !app.source.live && app.source.hasSnapshot(req.method, req.params);
  let failNote = null;
  if (!app.source.live && !fromSnapshot) {
    $('timeline-wait').textContent = 'Simulating this scenario in your browser… (the engine answers as soon as it has loaded)';
    $('timeline-wait').classList.remove('bad');
    $('timeline-wait').hidden = false;
  }
  try {
    const tCall = performance.now();
    const cmp = await app.source.call(req.method, req.params);
    performance.measure('cbx:engine', { start: tCall, end: performance.now() });
    if (my !== gen) return;
    app.req = req;
    app.cmp = cmp;
    app.cmpFromSnapshot = fromSnapshot;
    app.ctl.clearEngineErrors();
    if (!app.viewErrors) $('form-message').textContent = '';
    renderMain();
  } catch (err) {
    if (my !== gen) return;
    const d = err.detail || { message: err.message };
    if (!(d.type === 'ScenarioError' && app.ctl.showEngineError(d))) $('form-message').textContent = d.message;
    failNote = `Not simulated: ${d.message}${app.cmp ? ' — still showing the last good result.' : ''}`;
  } finally {
    if (my === gen) {
      $('timeline-wait').textContent = failNote || '';
      $('timeline-wait').classList.toggle('bad', !!failNote);
      $('timeline-wait').hidden = !failNote;
    }
  }
}

function renderMain() {
  const cmp = app.cmp, scheds = schedulers().filter((s) => cmp[s]);
  renderHeadline(cmp);
  const t0 = performance.now();
  renderLaneInfo();
  renderTimelines();
  performance.measure('cbx:draw', { start: t0, end: performance.now() });
  renderCards($('metric-cards'), cmp, scheds);
  app.drawn++;
  root.dataset.drawn = String(app.drawn);
  if (app.tInput != null) {
    performance.measure('cbx:redraw', { start: app.tInput, end: performance.now() });
    app.tInput = null;
  }
}

function renderHeadline(cmp) {
  const sp = cmp.speedup || {};
  const setM = (id, v, text) => { const e = $(id); e.dataset.value = v == null ? '' : String(v); e.textContent = text; };
  setM('hl-speedup', sp.time, sp.time == null ? '–' : sp.time.toFixed(2));
  setM('hl-speedup-passes', sp.passes, sp.passes == null ? '–' : sp.passes.toFixed(2));
  $('hl-passes-cont').textContent = fmt(cmp.continuous.metrics.passes);
  $('hl-passes-static').textContent = fmt(cmp.static.metrics.passes);
}

// ------------------------------------------------------------------ timelines
function passMax() {
  return Math.max(1, ...schedulers().filter((s) => app.cmp?.[s]).map((s) => app.cmp[s].metrics.passes));
}

function ensureLanes() {
  const want = schedulers().join(',');
  if ($('timelines').dataset.lanes === want) return;
  $('timelines').dataset.lanes = want;
  app.lanes.clear();
  const nodes = [];
  for (const s of schedulers()) {
    const [title, sub] = LANES[s];
    const stats = el('div', { class: 'lane-stats' });
    const canvas = el('canvas', { class: 'timeline', tabindex: '0', role: 'img', 'data-lane': s,
      'aria-label': `${title} timeline: one row per slot, one column per forward pass. Arrow keys up and down inspect a slot at the playhead.` });
    const lane = { s, title, canvas, stats, kv: null };
    const wrap = el('div', { class: 'lane', 'data-lane': s },
      el('div', { class: 'lane-head' }, el('div', { class: 'lane-title' }, document.createTextNode(`${title} `), el('small', { text: `— ${sub}` })), stats),
      canvas);
    if (s === 'vllm') {
      lane.kv = el('canvas', { class: 'kvstrip', role: 'img', 'aria-label': 'KV cache in use per pass, with the budget and preemptions' });
      wrap.append(lane.kv);
    }
    wireLane(lane);
    app.lanes.set(s, lane);
    nodes.push(wrap);
  }
  $('timelines').replaceChildren(...nodes);
}

function laneView(s) {
  // The hovered request is outlined in every lane, so its fate under each scheduler lines up.
  return { passMax: passMax(), playhead: app.pass ?? passMax(), hoverId: app.hover?.rid ?? null,
    focus: app.focus?.s === s ? app.focus : null, lecture: root.classList.contains('lecture'), compact: !!root.dataset.embed };
}

// Once per result: lane rows, their readouts and accessible descriptions.
function renderLaneInfo() {
  ensureLanes();
  for (const lane of app.lanes.values()) {
    const res = app.cmp[lane.s];
    if (!res) continue;
    const m = res.metrics;
    lane.canvas.setAttribute('aria-label', `${lane.title} timeline: ${res.scenario.server.slots} slots, ${fmt(m.passes)} passes, `
      + `${fmtPct(m.utilization)} of slot-steps emit a token, ${fmtPct(m.shares.padding)} padding, ${fmtPct(m.shares.idle)} idle. `
      + 'Up and down arrows inspect a slot at the playhead.');
    lane.stats.replaceChildren(el('b', { text: fmt(m.passes) }), document.createTextNode(' passes · '),
      el('b', { text: fmtPct(m.utilization) }), document.createTextNode(' useful · '),
      document.createTextNode(fmtTime(m.makespan, unitOf(res))),
      res.truncated?.segments ? el('span', { class: 'trunc', text: ' · drawing cut at the engine\'s segment cap' }) : '');
  }
}

// Every frame (playhead, hover, resize): the canvases and the playhead readout only.
function renderTimelines() {
  if (!app.cmp) return;
  for (const lane of app.lanes.values()) {
    const res = app.cmp[lane.s];
    if (!res) continue;
    const view = laneView(lane.s);
    drawLane(lane.canvas, res, view);
    if (lane.kv) drawKV(lane.kv, res, view);
  }
  renderPlayer();
}

function unitOf(res) { return res.scenario?.server?.cost === 'unit' ? 'pass' : 'ms'; }

function renderPlayer() {
  const pm = passMax();
  const p = app.pass ?? pm;
  const scrub = $('scrub');
  scrub.max = String(pm);
  scrub.value = String(p);
  const parts = [`pass ${fmt(p)} of ${fmt(pm)}`];
  for (const s of schedulers()) {
    const r = app.cmp?.[s];
    if (!r) continue;
    const t = timeAt(r, Math.min(p, r.metrics.passes));
    parts.push(`${s}: ${fmt(doneBy(r, p))}/${fmt(r.requests.length)} done${t == null ? '' : ` by ${fmtTime(t, unitOf(r))}`}`);
  }
  $('playhead-readout').textContent = parts.join(' · ');
  $('btn-play').textContent = app.playing ? '❚❚ Pause' : '▶ Play';
  $('btn-play').setAttribute('aria-label', app.playing ? 'Pause (space)' : 'Play (space)');
}

let rafPending = false;
function redrawSoon() {
  if (rafPending) return;
  rafPending = true;
  requestAnimationFrame(() => { rafPending = false; renderTimelines(); });
}

function setPass(p, { write = true } = {}) {
  const pm = passMax();
  app.pass = Math.max(0, Math.min(pm, Math.round(p)));
  if (app.pass === pm) app.pass = null;
  redrawSoon();
  if (write) writeURL();
  if (app.focus) showFocusTip();
}

function play() {
  if (app.playing) { stop(); return; }
  const pm = passMax();
  if ((app.pass ?? pm) >= pm) app.pass = 0;
  const token = ++app.playToken;
  app.playing = token;
  const seconds = 8;
  let last = performance.now(), acc = app.pass;
  const tick = (now) => {
    if (app.playing !== token) return;
    if (reducedMotion.matches) {
      // No smooth motion: jump a tenth of the run every 700 ms.
      acc += pm / 10;
      setPass(Math.min(pm, acc), { write: false });
      if (acc >= pm) { stop(); return; }
      setTimeout(() => tick(performance.now()), 700);
      return;
    }
    acc += ((now - last) / 1000) * (pm / seconds);
    last = now;
    setPass(Math.min(pm, acc), { write: false });
    if (acc >= pm) { stop(); return; }
    requestAnimationFrame(tick);
  };
  app.pass = app.pass ?? 0;
  renderPlayer();
  if (reducedMotion.matches) setTimeout(() => tick(performance.now()), 300); else requestAnimationFrame(tick);
}
app.playToken = 0;

function stop() {
  if (!app.playing) return;   // steps and scrubs call this; only a running play has state to end
  app.playing = 0;
  renderPlayer();
  writeURL();
}

function step(delta) {
  stop();
  const pm = passMax();
  setPass((app.pass ?? pm) + delta);
}

// ------------------------------------------------------------------ tooltips
function tipFor(lane, hit, x, y) {
  const tip = $('tooltip');
  if (!hit || (!hit.request && hit.phase !== 'padding')) { tip.hidden = true; return; }
  const res = app.cmp[lane.s];
  const unit = unitOf(res);
  const t = (v) => fmtTime(v, unit);
  const kids = [];
  const what = { prefill: 'prefill chunk', useful: 'emits a token', padding: hit.request ? 'padding: finished, slot held until its batch ends' : 'padding: empty row of a short batch', idle: 'idle' }[hit.phase] || hit.phase;
  if (hit.request) {
    const r = hit.request;
    const sw = el('i', { class: 'sw' });
    sw.style.background = colorFor(r.id);
    kids.push(el('b', {}, sw, document.createTextNode(`Request #${r.id} · ${LANES[lane.s][0]}`)));
    kids.push(el('div', { text: `slot ${hit.slot + 1}, pass ${fmt(hit.pass)}: ${what}` }));
    const dl = el('dl');
    const row = (k, v) => dl.append(el('dt', { text: k }), el('dd', { text: v }));
    row('prompt / output', `${fmt(r.prompt)} / ${fmt(r.out)} tokens`);
    row('arrived', t(r.arrive));
    row('admitted', t(r.admit));
    row('first token', `${t(r.first_token)} (pass ${fmt(r.first_token_pass)})`);
    row('completed', `${t(r.done)} (pass ${fmt(r.done_pass)})`);
    row('TTFT', t(r.ttft));
    row('end to end', t(r.e2e));
    row('preemptions', fmt(r.preemptions));
    kids.push(dl);
  } else {
    kids.push(el('b', { text: `slot ${hit.slot + 1}, pass ${fmt(hit.pass)}` }), el('div', { text: what }));
  }
  tip.replaceChildren(...kids);
  tip.hidden = false;
  const fig = $('fig-timeline').getBoundingClientRect();
  const c = lane.canvas.getBoundingClientRect();
  let left = c.left - fig.left + x + 14, top = c.top - fig.top + y + 14;
  if (left + tip.offsetWidth > fig.width - 8) left = c.left - fig.left + x - tip.offsetWidth - 14;
  tip.style.left = `${Math.max(4, left)}px`;
  tip.style.top = `${top}px`;
}

function wireLane(lane) {
  lane.canvas.addEventListener('mousemove', (e) => {
    const r = lane.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const hit = hitTest(lane.canvas, app.cmp[lane.s], laneView(lane.s), x, y);
    const rid = hit?.request ? hit.request.id : null;
    if ((app.hover?.rid ?? null) !== rid) { app.hover = rid == null ? null : { rid }; redrawSoon(); }
    tipFor(lane, hit, x, y);
  });
  lane.canvas.addEventListener('mouseleave', () => { $('tooltip').hidden = true; if (app.hover) { app.hover = null; redrawSoon(); } });
  lane.canvas.addEventListener('click', (e) => {
    const r = lane.canvas.getBoundingClientRect();
    const hit = hitTest(lane.canvas, app.cmp[lane.s], laneView(lane.s), e.clientX - r.left, e.clientY - r.top);
    if (hit) { stop(); setPass(hit.pass); }
  });
  lane.canvas.addEventListener('focus', () => { app.focus = { s: lane.s, slot: app.focus?.s === lane.s ? app.focus.slot : 0 }; showFocusTip(); redrawSoon(); });
  lane.canvas.addEventListener('blur', () => { app.focus = null; app.hover = null; $('tooltip').hidden = true; redrawSoon(); });
  lane.canvas.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
    e.preventDefault();
    const slots = app.cmp[lane.s].scenario.server.slots;
    app.focus.slot = Math.max(0, Math.min(slots - 1, app.focus.slot + (e.key === 'ArrowUp' ? -1 : 1)));
    showFocusTip();
    redrawSoon();
  });
}

function showFocusTip() {
  const f = app.focus;
  if (!f) return;
  const lane = app.lanes.get(f.s);
  const res = app.cmp?.[f.s];
  if (!lane || !res) return;
  const idx = indexSegments(res);
  const pass = Math.max(1, Math.min(idx.passes, app.pass ?? idx.passes));
  const hit = { slot: f.slot, pass, ...segmentAt(idx, f.slot, pass) };
  app.hover = hit.request ? { rid: hit.request.id } : null;
  const pm = passMax();
  const w = lane.canvas.clientWidth - 38;
  const rowH = (lane.canvas.clientHeight - 18) / idx.slots;
  tipFor(lane, hit, 34 + (pass / pm) * w, (f.slot + 1) * rowH);
}

// ------------------------------------------------------------------ sweeps, stall panel, KV
let sideGen = 0;
function startSideWork() {
  const my = ++sideGen;
  clearTimeout(app.sideTimer);
  // Let the main view settle first; a new change cancels this whole chain.
  root.dataset.sweeping = '1';
  app.sideTimer = setTimeout(async () => {
    await runStall(my);
    await runSkewSweep(my);
    await runSlotsSweep(my);
    if (my === sideGen) delete root.dataset.sweeping;
    // Once the engine is live and idle, verify it once without being asked.
    if (my === sideGen && app.source.live && !app.checkedOnce) runCheck();
  }, app.source.live ? 400 : 0);   // wait for a pause in the changes before sweeping
}
function cancelSweeps() { sideGen++; delete root.dataset.sweeping; for (const k of ['skew', 'slots']) sweepUI(k, null); }

function sweepUI(kind, state) {
  const prog = $(`${kind}-progress`), status = $(`${kind}-status`), cancel = $(`${kind}-cancel`);
  if (!state) { cancel.hidden = true; if (prog.value < 1) status.textContent = 'cancelled'; return; }
  prog.value = state.done / state.total;
  status.textContent = state.done < state.total ? `${state.done} of ${state.total} points${app.source.live ? '' : ' (waiting for the engine)'}` : '';
  cancel.hidden = state.done >= state.total;
}

async function sweep(my, kind, xs, request, onPoint) {
  const pts = [];
  sweepUI(kind, { done: 0, total: xs.length });
  for (const x of xs) {
    if (my !== sideGen) return null;
    const req = request(x);
    try {
      pts.push([x, await app.source.call(req.method, req.params)]);
    } catch (err) {
      pts.push([x, null]);
    }
    if (my !== sideGen) return null;
    sweepUI(kind, { done: pts.length, total: xs.length });
    onPoint(pts);
    await new Promise((r) => setTimeout(r, 0));   // yield: the page stays responsive between points
  }
  return pts;
}

async function runSkewSweep(my) {
  const base = S.scenarioFrom(app.fields, app.values);
  await sweep(my, 'skew', SW.SKEWS, (x) => SW.skewRequest(base, x), (pts) => {
    app.sweeps.skew = pts.map(([x, r]) => [x, ...SW.skewPoint(r)]);
    drawSkew();
  });
}

function drawSkew() { SW.drawSkew($('chart-skew'), app.sweeps.skew, app.values.skew); }

async function runSlotsSweep(my) {
  const sched = app.view.vllm ? 'vllm' : 'continuous';
  $('slots-sched').textContent = sched === 'vllm' ? 'vLLM-style' : 'continuous';
  const base = S.scenarioFrom(app.fields, app.values);
  await sweep(my, 'slots', SW.SLOTS, (x) => SW.slotsRequest(base, x, sched), (pts) => {
    app.sweeps.slots = pts.map(([x, r]) => [x, ...SW.slotsPoint(r, sched)]);
    drawSlots();
  });
}

function drawSlots() {
  SW.drawSlots($('chart-slots'), app.sweeps.slots, {
    slo: app.values.ttft_ms, slots: app.values.slots, unit: app.values.cost === 'unit' ? 'pass' : 'ms',
  });
}

async function runStall(my) {
  const reqs = stallRequests(app.values.chunk, S.scenarioFrom(app.fields, app.values).server?.cost);
  const key = JSON.stringify(reqs);
  if (app.stall?.key === key && app.stall.live === app.source.live) return;
  try {
    const out = [];
    for (const r of reqs) { if (my !== sideGen) return; out.push(await app.source.call(r.method, r.params)); }
    app.stall = { key, live: app.source.live, out };
    renderStall($('cost-panel'), out, app.values.chunk, app.values.cost === 'unit');
  } catch (err) {
    $('cost-panel').textContent = err.detail?.message || err.message;
  }
}

async function initKV() {
  let kvPresets = null;
  try { kvPresets = await app.source.call('kv', { presets: true }); } catch { /* older engine: no presets */ }
  app.kvForm = buildKV($('kv-form'), kvPresets?.presets || kvPresets, (params) => runKV(params));
  runKV(null);
}

let kvGen = 0;
async function runKV(params) {
  const my = ++kvGen;
  for (const e of $('kv-form').querySelectorAll('.error')) e.textContent = '';
  try {
    const res = await app.source.call('kv', params || {});
    if (my !== kvGen) return;
    renderKV($('kv-result'), res, (tokens) => {
      app.values.kv_tokens = tokens;
      app.view.vllm = true;
      $('ctl-vllm').checked = true;
      app.ctl.setValues(app.values, app.view);
      changed();
    });
  } catch (err) {
    if (my !== kvGen) return;
    const d = err.detail || { message: err.message };
    const box = $('kv-form').querySelector(`[data-error-for="kv-${d.field}"]`)
      || $('kv-form').querySelector(`[data-error-for="kv-${{ gpu_bytes: 'gpu_gb', weight_bytes: 'weight_gb' }[d.field]}"]`);
    if (box) box.textContent = d.message;
    else $('kv-result').textContent = d.message;
  }
}

async function runCheck() {
  const btn = $('btn-check');
  if (app.checking) return;
  app.checking = true;
  app.checkedOnce = true;     // asked for (or done): no automatic run on top of it
  btn.disabled = true;
  delete $('check-summary').dataset.total;
  delete $('check-summary').dataset.passed;
  $('check-summary').className = 'check-summary';
  $('check-summary').textContent = app.source.live ? 'running in the page…' : 'waiting for the engine to load…';
  try {
    await app.source.readyPromise;
    const res = await app.source.call('check', {});
    renderCheck($('check-summary'), $('check-list'), res);
  } catch (err) {
    $('check-summary').textContent = `could not run: ${err.detail?.message || err.message}`;
    $('check-summary').className = 'check-summary fail';
  } finally {
    btn.disabled = false;
    app.checking = false;
  }
}

// ------------------------------------------------------------------ UI wiring
function setEmbed(fig) {
  root.dataset.embed = fig;
  for (const s of document.querySelectorAll('[data-figure]')) s.classList.toggle('embedded', s.dataset.figure === fig);
  $('embed-open').hidden = false;
}

function syncThemeButton() {
  const dark = root.dataset.theme ? root.dataset.theme === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
  $('btn-theme').textContent = dark ? 'Light' : 'Dark';
  $('btn-theme').setAttribute('aria-label', dark ? 'Switch to light mode' : 'Switch to dark mode');
}

function redrawAll() {
  invalidateTheme();
  syncThemeButton();
  renderTimelines();
  if (app.sweeps.skew.length) drawSkew();
  if (app.sweeps.slots.length) drawSlots();
}

function toggleTheme() {
  const dark = root.dataset.theme ? root.dataset.theme === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
  root.dataset.theme = dark ? 'light' : 'dark';
  setView({ theme: root.dataset.theme });
  redrawAll();
}

function toggleLecture() {
  const on = !root.classList.contains('lecture');
  root.classList.toggle('lecture', on);
  $('btn-lecture').setAttribute('aria-pressed', String(on));
  setView({ lecture: on });
  requestAnimationFrame(redrawAll);
}

function wireUI() {
  $('btn-lecture').setAttribute('aria-pressed', String(root.classList.contains('lecture')));
  $('btn-lecture').addEventListener('click', toggleLecture);
  $('btn-theme').addEventListener('click', toggleTheme);
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redrawAll);
  $('ctl-vllm').addEventListener('change', (e) => {
    app.tInput = performance.now();
    app.view.vllm = e.target.checked;
    app.ctl.setValues(app.values, app.view);
    changed();
  });
  $('controls-form').addEventListener('submit', (e) => e.preventDefault());
  $('btn-play').addEventListener('click', play);
  $('btn-back').addEventListener('click', () => step(-1));
  $('btn-fwd').addEventListener('click', () => step(1));
  $('scrub').addEventListener('input', (e) => { stop(); setPass(Number(e.target.value)); });
  $('skew-cancel').addEventListener('click', cancelSweeps);
  $('slots-cancel').addEventListener('click', cancelSweeps);
  $('btn-check').addEventListener('click', runCheck);
  $('btn-copy-link').addEventListener('click', async () => {
    const ok = await X.copyText(location.href, $('share-text'));
    $('export-status').textContent = ok ? 'Link copied.' : 'Link selected below: copy it with Ctrl+C.';
  });
  $('btn-copy-embed').addEventListener('click', async () => {
    const ok = await X.copyText(X.embedSnippet(location.href, $('embed-figure').value), $('share-text'));
    $('export-status').textContent = ok ? 'Embed snippet copied.' : 'Snippet selected below: copy it with Ctrl+C.';
  });
  $('btn-png').addEventListener('click', async () => {
    const lanes = [...app.lanes.values()].map((l) => ({ canvas: l.canvas, title: `${l.title}`, stats: l.stats.textContent }));
    const sp = app.cmp.speedup;
    const blob = await X.timelinePNG({
      title: `Continuous batching: ×${sp.time.toFixed(2)} faster (×${sp.passes.toFixed(2)} in passes)`,
      subtitle: `${fmt(app.cmp.static.requests.length)} requests · ${app.values.slots} slots · chunk ${app.values.chunk} · skew ${app.values.skew} · seed ${app.values.seed}`,
      lanes,
    });
    X.download(X.fileName('timeline', 'png'), blob, 'image/png');
  });
  $('btn-csv').addEventListener('click', () => X.download(X.fileName('requests', 'csv'), X.toCSV(app.cmp, schedulers()), 'text/csv'));
  $('btn-json').addEventListener('click', () => X.download(X.fileName('result', 'json'), X.toJSON(app.req, app.cmp), 'application/json'));
  document.addEventListener('keydown', onKey);
  // Canvases size to the figure's width; a height change (new lanes, a sweep's cancel button) is
  // already redrawn by whatever caused it.
  let figWidth = -1;
  new ResizeObserver((entries) => {
    const w = entries[entries.length - 1].contentRect.width;
    if (w !== figWidth) { figWidth = w; redrawSoonAll(); }
  }).observe(document.querySelector('.figures'));
  initKV();
}

let resizePending = false;
function redrawSoonAll() {
  if (resizePending) return;
  resizePending = true;
  requestAnimationFrame(() => { resizePending = false; redrawAll(); });
}

function onKey(e) {
  const tag = e.target?.tagName;
  if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
  const pm = passMax();
  const big = Math.max(1, Math.round(pm / 10));
  switch (e.key) {
    case ' ':
      if (tag === 'BUTTON') return;   // the button's own click handles it
      e.preventDefault(); play(); break;
    case 'ArrowRight': e.preventDefault(); step(e.shiftKey ? big : 1); break;
    case 'ArrowLeft': e.preventDefault(); step(e.shiftKey ? -big : -1); break;
    case 'Home': e.preventDefault(); stop(); setPass(0); break;
    case 'End': e.preventDefault(); stop(); setPass(pm); break;
    case 'l': case 'L': toggleLecture(); break;
    case 'd': case 'D': toggleTheme(); break;
    default: {
      const n = Number(e.key);
      const names = Object.keys(app.presets);
      if (Number.isInteger(n) && n >= 1 && n <= names.length) { e.preventDefault(); applyPreset(names[n - 1]); }
    }
  }
}
