// The figures beside the main timelines: the fleet, the sweeps, the prefill stall, the KV
// calculator and the self-check. They run after the main view, one engine call at a time; any
// change restarts them (latest wins), and a sweep (or the fleet's router comparison) can be
// cancelled between its points.

import { latest } from '../engine/latest.js';
import { KV_PRESETS, CHECK, canonical, kvRequest, pageRequests, planRequests, sweepSchedulers, sweepOf } from '../engine/requests.js';
import { speedupPoint, sizingPoint, drawSpeedup, drawSizing, sloRule, drawLatency, renderAdvice, fieldWords } from './sweeps.js';
import { renderStall, buildKV, renderKV, renderCheck, renderFit } from './panels.js';
import { createFleet } from './fleet.js';
import { createPapers } from './papers.js';
import { createPlanner } from './plan.js';
import { $, el } from './dom.js';
import { schedulerLabel } from '../state/context.js';
import { fleetOf, generatorOnly } from '../state/schema.js';

const SETTLE_MS = 400;   // live engine: wait for a pause in the changes before sweeping
const WAIT_ENGINE_MS = 1500;   // at start, the side figures wait this long at most for the engine

/**
 * ctx: {source, schema, fields, page (the page's context: state/context.js), root,
 *       state: () => ({values, view, lanes, cmp}),
 *       onUseKV(tokens), onApply(path, value), onDeploy(cost terms, {field path: value}),
 *       onCalibrated(cost), onFleetAnswer(error detail or null: the fleet's own run answered),
 *       held(): the reader stopped the main run (nothing starts by itself),
 *       view(): the page's view, onView(patch): a change of it for the link (the planner's budget)}.
 *       Returns {begin(embed, fleetFirst), start(), live(), show(), supersede(), cancel(), redraw(),
 *       runCheck(), fleetAhead(), fleetExport(), planExport()}.
 */
export function createSideWork(ctx) {
  const { source, schema, fields, root } = ctx;
  const work = latest();
  const kvCalls = latest();
  const figures = Object.entries(schema.figures).filter(([, f]) => f.sweep);
  const points = Object.fromEntries(figures.map(([name]) => [name, []]));
  const verdicts = {};        // figure -> the engine's recommendation once every point is in
  const swept = {};           // figure -> its requests' key once all its points (and verdict) are in
  // figure -> {key, def, st}: the requests its points answer (reqKey), the sweep and the page
  // state they were asked for (drawn with them, not with newer values); null once cleared
  const shownFor = {};
  const field = (path) => fields.find((f) => f.path === path) || schema.fields.find((f) => f.path === path);
  let timer = null;
  let stallKey = null;
  let checking = false;
  let checkedOnce = false;
  let kvForm = null;
  const sizing = {};          // figure -> the parameter the reader chose to sweep (fig.sweep.params)
  const defOf = (name) => sweepOf(schema.figures[name], sizing[name], ctx.state().values);
  const state = () => ({ ...ctx.state(), sizing });
  const fleet = createFleet({ source, schema, onApply: ctx.onApply, cancel: () => cancel(), onAnswer: ctx.onFleetAnswer,
    compact: () => ({ story: 0.6, fleet: 0.8 })[root.dataset.embed] || 0 });
  const papers = createPapers({ source, schema });
  const showFleet = () => fleet.show(pageRequests(ctx.page, state()).fleet);
  const planner = createPlanner({ source, schema, onApply: ctx.onApply, start: () => start(), cancel: () => cancel(),
    values: () => ctx.state().values, embedded: () => root.dataset.embed === 'plan', view: ctx.view, onView: ctx.onView });
  const planReqs = (st) => planRequests(ctx.page, st.values, st.lanes, st.items, planner.gpus(), planner.capacity());
  for (const [name, fig] of figures) {
    const pick = $(`${name}-param`);
    if (!pick || !fig.sweep.params) continue;
    for (const p of fig.sweep.params) pick.append(el('option', { value: p.param, text: fieldWords(field(p.param)) }));
    pick.addEventListener('change', () => { sizing[name] = pick.value; start(); });
  }

  function sweepUI(name, state) {
    const prog = $(`${name}-progress`), status = $(`${name}-status`), cancel = $(`${name}-cancel`);
    if (!state) { cancel.hidden = true; if (prog.value < 1) status.textContent = 'cancelled'; return; }
    prog.value = state.done / state.total;
    status.textContent = state.done < state.total ? `${state.done} of ${state.total} points${source.live ? '' : ' (waiting for the engine)'}` : '';
    cancel.hidden = state.done >= state.total;
  }

  /** A figure's requests as a key (the points differ only by their x: one request's JSON, not
   *  one per point). */
  const reqKey = (reqs) => canonical(reqs[0]?.req ?? null) + reqs.map((r) => r.x).join();

  /** A change: a figure whose points answer other requests than the new values' is stale until
   *  its sweep comes round (after the fleet, the planner, the stall and the figures before it; on
   *  a big trace a minute or more): dimmed, saying so, its buttons off (as ui/fleet.js and
   *  ui/plan.js mark theirs: .stale). */
  function markStale() {
    const now = state();
    const { sweeps: reqs, off } = pageRequests(ctx.page, now);
    // a fleet set: a sweep is still one server taking all of its traffic (its points do not
    // change with the fleet, so this follows the values, not the points)
    const fleet = fleetOf(schema, now.values).fleet;
    for (const [name] of figures) {
      const one = $(`${name}-one-server`);
      if (one) one.hidden = !fleet;
      setOff(name, off[name]);
      setStale(name, !!shownFor[name] && !!reqs[name] && shownFor[name].key !== reqKey(reqs[name]));
    }
  }

  /** A sweep of a field that changes nothing for these values (requests.js `off`: the skew of a
   *  production trace) is not run: the figure says why instead of drawing a flat line. */
  function setOff(name, f) {
    const box = $(`fig-${name}`);
    let note = $(`${name}-off`);
    if (f && !note) box.append(note = el('p', { id: `${name}-off`, class: 'sweep-off muted' }));
    if (note) {
      note.hidden = !f;
      note.textContent = !f ? '' : generatorOnly(f)
        ? `${f.label} applies to generated workloads only: a production trace (or a trace file) keeps its own requests, so this sweep would be flat and is not run.`
        : `${f.label} changes nothing with the current settings, so its sweep is not run.`;
    }
    for (const e of box.querySelectorAll('.chart, .sweep-bar, .advice')) e.hidden = !!f;
    if (f) {                  // any points shown were of a workload it applied to
      points[name] = [];
      swept[name] = null;
      verdicts[name] = null;
      shownFor[name] = null;
    }
  }
  function setStale(name, on) {
    const box = $(`fig-${name}`);
    if (box.classList.contains('stale') === on) return;
    box.classList.toggle('stale', on);
    $(`${name}-status`).textContent = on ? 'updating… (queued: the figures run one at a time)' : '';
    for (const b of $(`${name}-advice`)?.querySelectorAll('button') ?? []) b.disabled = on;
  }
  const isStale = (name) => $(`fig-${name}`).classList.contains('stale');
  /** The cost unit of the main run's numbers (ms, or passes under the unit cost). */
  const unitOf = (st) => st.cmp?.[st.lanes[0]]?.unit || 'ms';

  function draw(name) {
    // the points with the sweep and values they answer (a stale figure keeps them, dimmed)
    const { def, st } = shownFor[name] ?? { def: defOf(name), st: ctx.state() };
    const canvas = $(`chart-${name}`);
    const pts = points[name];
    if (!def.limit) { drawSpeedup(canvas, def, field(def.param), pts, st.values[def.param]); return; }
    const sched = sweepSchedulers(def, st.lanes, schema.schedulers)[0];
    $(`${name}-sched`).textContent = schedulerLabel(schema.schedulers, sched);
    const unit = st.unit ?? unitOf(st);
    const rule = $(`${name}-rule`);
    if (rule) rule.textContent = sloRule(ctx.fields, st.values, unit);
    const pick = $(`${name}-param`);
    if (pick) pick.value = defOf(name).param;      // the reader's choice, even before it is swept
    const f = field(def.param), current = st.values[def.param];
    const done = pts.length === def.values.length;
    drawSizing(canvas, def, {
      field: f, limitField: field(def.limit), limit: st.values[def.limit],
      current, unit, metricLabel: def.metric_label, recommended: done ? verdicts[name]?.value : null,
    }, pts);
    const lat = $(`chart-${name}-latency`);
    if (lat) drawLatency(lat, def, { field: f, current, values: st.values }, pts);
    const box = $(`${name}-advice`);
    if (box) {
      const rec = done ? verdicts[name] ?? null : null;
      // the field that binds instead of the one swept, when this figure can sweep it
      const other = (schema.figures[name].sweep.params || []).some((p) => p.param === rec?.binds) ? rec.binds : null;
      renderAdvice(box, { rec, label: fieldWords(f), path: def.param, current, pts, unit, onApply: ctx.onApply,
        binds: other && { path: other, label: fieldWords(field(other)) },
        onSweep: (path) => { sizing[name] = path; $(`${name}-param`).value = path; start(); }, stale: isStale(name) });
    }
  }

  async function sweep(token, name, reqs) {
    const def = defOf(name);
    const sched = sweepSchedulers(def, ctx.state().lanes, schema.schedulers)[0];
    const got = [], answers = [];
    if (token.stale) return;
    started.add(name);
    // the same points as those shown (a change this figure does not depend on: a fleet's router,
    // a theme): they stay, and the engine is free for the figures that did change
    const key = reqKey(reqs) + source.live;
    if (swept[name] === key) { setStale(name, false); return; }
    swept[name] = null;
    verdicts[name] = null;
    points[name] = [];          // the old points belong to other values: clear them first
    const st = ctx.state();
    // what drawing reads of the state, not the main run's whole result (kept alive meanwhile)
    shownFor[name] = { key: reqKey(reqs), def, st: { values: { ...st.values }, lanes: st.lanes, unit: unitOf(st) } };
    setStale(name, false);
    draw(name);
    sweepUI(name, { done: 0, total: reqs.length });
    for (const { x, req } of reqs) {
      if (token.stale) return;
      let res = null;
      try { res = await source.call(req.method, req.params, { signal: token.signal }); } catch { /* a failed or cancelled point stays empty */ }
      if (token.stale) return;
      got.push([x, ...(def.limit ? sizingPoint(res, sched, def) : speedupPoint(res))]);
      answers.push(res?.points?.[0] ?? null);
      points[name] = got.slice();
      sweepUI(name, { done: got.length, total: reqs.length });
      draw(name);
      await new Promise((r) => setTimeout(r, 0));   // yield: the page stays responsive between points
    }
    // the recommendation is the engine's, from the points as they came (api.sizing); asked of the
    // live engine only (it is no start-up request: points the snapshot answered are run again
    // once the engine is live, side.live(), and asked then)
    if (def.limit && source.live && answers.every(Boolean)) {
      const { scenario, param } = reqs[0].req.params;
      try {
        const doc = await source.call('sizing', { scenario, param, points: answers, schedulers: [sched] }, { signal: token.signal });
        if (token.stale) return;
        verdicts[name] = doc.recommendation[sched];
      } catch { if (token.stale) return; verdicts[name] = null; }
      draw(name);
    }
    swept[name] = key;
  }

  async function stall(token, req) {
    const key = JSON.stringify(req) + source.live;
    if (stallKey === key) return;
    if (!source.live && !source.hasSnapshot(req.method, req.params)) {
      $('stall-panel').textContent = 'computing… (the engine answers as soon as it has loaded)';
    }
    try {
      const res = await source.call(req.method, req.params, { signal: token.signal });
      if (token.stale) return;
      stallKey = key;
      renderStall($('stall-panel'), res);
    } catch (err) {
      if (!token.stale) $('stall-panel').textContent = err.detail?.message || err.message;
    }
  }

  let ranLive = false;        // the last run was answered by the live engine, not the snapshot
  const started = new Set();  // figures whose sweep began for the current values
  /** now: ask at once, the fleet's run from the engine even while it loads (fleet first). */
  function start(now = false) {
    // a fleet first waits for the engine (all of it is engine-made) unless the build-time snapshot
    // answers it (then side.live() asks it again)
    const asked = now ? pageRequests(ctx.page, state()) : null;    // (now: runAll asks them at once)
    const first = asked?.fleet?.run;
    ranLive = source.live || (now && !(first && source.hasSnapshot(first.method, first.params)));
    started.clear();
    markStale();
    const token = work.start();
    clearTimeout(timer);
    root.dataset.sweeping = '1';
    showFleet();
    const runAll = async () => {
      const reqs = asked ?? pageRequests(ctx.page, state());
      await fleet.run(token, reqs.fleet, now);  // first: with replicas above 1 it is the question
      if (token.stale) return;
      if (planner.active()) await planner.run(token, planReqs(state()));    // once asked for
      if (token.stale) return;
      if (reqs.stall) await stall(token, reqs.stall);
      for (const [name, pts] of Object.entries(reqs.sweeps)) {
        if (token.stale) return;      // cancelled during the last figure: the next one never starts
        await sweep(token, name, pts);
      }
      if (token.stale) return;
      delete root.dataset.sweeping;
      // Once the engine is live and idle, verify it once without being asked.
      if (source.live && !checkedOnce) runCheck();
    };
    if (now) runAll();       // its first engine call is made before the caller's next one
    else timer = setTimeout(runAll, source.live ? SETTLE_MS : 0);
  }

  function cancel() {
    work.cancel();
    delete root.dataset.sweeping;
    fleet.cancelled();
    planner.cancelled();
    for (const [name] of figures) {
      if (!started.has(name)) {        // its points belong to older values: not shown as current
        points[name] = [];
        swept[name] = null;
        shownFor[name] = null;
        setStale(name, false);
        draw(name);
        $(`${name}-progress`).value = 0;
      }
      sweepUI(name, null);
    }
  }

  async function runKV(params) {
    const token = kvCalls.start();
    for (const e of $('kv-form').querySelectorAll('.error')) e.textContent = '';
    try {
      const req = kvRequest(params);
      const res = await source.call(req.method, req.params, { signal: token.signal });
      if (token.stale) return;
      $('kv-result').classList.remove('stale');
      renderKV($('kv-result'), res, ctx.onUseKV, ctx.onDeploy);
    } catch (err) {
      if (token.stale) return;
      const d = err.detail || { message: err.message };
      const box = kvForm?.errorBox(d.field);
      const message = kvForm ? kvForm.explain(d) : d.message;
      if (!box) { $('kv-result').textContent = message; return; }
      box.textContent = message;
      // the last answer stays for reference, but is not this form's: its buttons do nothing
      $('kv-result').classList.add('stale');
      for (const b of $('kv-result').querySelectorAll('button')) b.disabled = true;
    }
  }

  async function initKV() {
    let presets = null;
    try { presets = await source.call(KV_PRESETS.method, KV_PRESETS.params); } catch { /* the form still works */ }
    kvForm = buildKV($('kv-form'), presets, (params) => runKV(params), field('server.cost.fit'), ctx.state().values['server.cost.fit']);
    if (!syncKV()) runKV(null);
  }

  // The deployment panel shows the scenario's roofline deployment (it showed the article's "custom"
  // GPU under ?gpu=h100-80gb) when it has one and whenever it changes; the reader's own choices
  // in the panel stay until then. Returns whether the panel asked the engine again.
  const DEPLOYMENT = ['model', 'gpu', 'tp', 'dtype', 'gpu_memory_utilization', 'fit'];
  let kvShown = null;         // the scenario's deployment the panel was set to (its key)
  function syncKV() {
    const v = ctx.state().values, cost = schema.figures.kv.cost;
    if (!kvForm || v[cost] !== 'roofline') { kvShown = null; return false; }
    const d = Object.fromEntries(DEPLOYMENT.map((k) => [k, v[`${cost}.${k}`]]));
    const key = JSON.stringify(d);
    if (key === kvShown) return false;
    kvShown = key;
    return kvForm.showDeployment(d);
  }

  async function runCheck() {
    if (checking) return;
    checking = true;
    checkedOnce = true;     // asked for (or done): no automatic run on top of it
    const btn = $('btn-check'), summary = $('check-summary');
    btn.disabled = true;
    delete summary.dataset.total;
    delete summary.dataset.passed;
    summary.className = 'check-summary';
    summary.textContent = source.live ? 'running in the page…' : 'waiting for the engine to load…';
    try {
      await source.readyPromise;
      renderCheck(summary, $('check-list'), await source.call(CHECK.method, CHECK.params));
    } catch (err) {
      summary.textContent = `could not run: ${err.detail?.message || err.message}`;
      summary.className = 'check-summary fail';
    } finally {
      btn.disabled = false;
      checking = false;
    }
  }

  // The calibration: the reader's own measurements, fitted by the engine (numpy on demand).
  // the fit in flight (its AbortController): a new fit or Cancel stops it, in the engine too
  // (numpy's first load included), and only the latest fit's answer is shown
  let fitting = null;
  async function fitCalibration() {
    fitting?.abort();
    const call = fitting = new AbortController();
    const out = $('calibrate-result');
    out.textContent = source.live ? 'fitting… (numpy loads the first time)' : 'waiting for the engine to load…';
    $('calibrate-cancel').hidden = false;
    try {
      // (engine: a fit is no start-up request, the snapshot has none)
      const fit = await source.call('calibrate', { csv: $('calibrate-csv').value }, { signal: call.signal, engine: true });
      if (fitting === call) renderFit(out, fit, ctx.onCalibrated);
    } catch (err) {
      if (fitting !== call) return;
      if (err.detail?.type === 'Cancelled') out.textContent = 'Cancelled: Fit runs it again.';
      else out.replaceChildren(el('p', { class: 'error', role: 'alert', text: err.detail?.message || err.message }));
    } finally {
      if (fitting === call) { fitting = null; $('calibrate-cancel').hidden = true; }
    }
  }
  $('calibrate-fit')?.addEventListener('click', fitCalibration);
  $('calibrate-cancel')?.addEventListener('click', () => fitting?.abort());
  $('calibrate-file')?.addEventListener('change', async (ev) => {
    const file = ev.target.files?.[0];
    if (!file) return;
    if (file.size > 5_000_000) { $('calibrate-result').textContent = `${file.name}: larger than 5 MB`; return; }
    $('calibrate-csv').value = await file.text();
    fitCalibration();
  });

  for (const [name] of figures) $(`${name}-cancel`).addEventListener('click', cancel);
  $('btn-check').addEventListener('click', runCheck);

  /**
   * The first run: the side figures wait for the engine (on a small machine they would slow its
   * start), unless one of them is the embedded figure, or the engine takes longer than
   * WAIT_ENGINE_MS or fails (then the snapshot answers them). fleetFirst (a fleet's page: the
   * question it was opened for): at once, the fleet's run the engine's first call, before the
   * one-server timelines' (the caller's next call), which on a whole trace may take as long.
   */
  let begun = false, began = false;
  function begin(embed, fleetFirst = false) {
    if (began) return;
    began = true;
    showFleet();
    papers.begin(embed);
    // (the KV panel is the kv figure's: an embed of another shows none, and asks nothing of it)
    const go = () => { if (!begun) { begun = true; if (!ctx.held()) start(fleetFirst); if (!embed || embed === 'kv') initKV(); } };
    if (fleetFirst || (embed && !schema.figures[embed]?.main)) go();
    else setTimeout(go, WAIT_ENGINE_MS);
    source.readyPromise.then(go, go);
  }

  return {
    begin, cancel, runCheck,
    /** Is the fleet's own run in the engine (a fleet's page asks it first)? */
    fleetAhead: () => fleet.running(),
    /** The fleet figure's runs for Download JSON, or null (fleet.js exported()). */
    fleetExport: () => fleet.exported(),
    /** The plan shown for Download JSON, or null (plan.js exported()). */
    planExport: () => planner.exported(),
    /** Run the figures again for the current values (once begun). */
    start() { if (begun) start(); },
    /** The engine is live: what the snapshot answered is asked again, so the page shows the
     *  engine's own numbers. */
    live() { if (begun && !ranLive && !ctx.held()) start(); },
    /** A change: the runs for the old values stop now, not when start() follows the main run
     *  (their answers would be drawn under the new values, and the engine is the main run's). */
    supersede() {
      if (!begun) return;
      clearTimeout(timer);
      work.cancel();
      root.dataset.sweeping = '1';    // the figures' work is pending: start() follows
      markStale();
    },
    /** A change: the fleet figure opens or closes at once, and drops numbers of other values; the
     *  deployment panel follows the scenario's deployment. */
    show() { showFleet(); syncKV(); },
    /** Redraw what is already computed (theme or size change). */
    redraw() { for (const [name] of figures) if (points[name].length) draw(name); fleet.redraw(); },
  };
}
