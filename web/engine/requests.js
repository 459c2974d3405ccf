// Every engine request the page makes, built in one place. The page's figures take their requests
// from pageRequests(); the build answers startupRequests() natively (tools/snapshot.py runs this
// module in Node), so whatever the page asks before its engine is live is already answered.

import { fleetOf, matters, scenarioFrom } from '../state/schema.js';
import { parseURL, storyStep } from '../state/url.js';
import { baseSchedulers } from '../state/context.js';

/** Deterministic JSON (sorted keys): the key a request is matched by in the build-time snapshot. */
export function canonical(x) {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (x && typeof x === 'object') {
    return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${canonical(x[k])}`).join(',')}}`;
  }
  return JSON.stringify(x);
}

export const SCHEMA = { method: 'schema', params: {} };
export const PRESETS = { method: 'presets', params: {} };
export const STORY = { method: 'story', params: {} };
export const KV_PRESETS = { method: 'kv', params: { presets: true } };

/** The schedulers on screen: the base pair, the optional lanes switched on, and the policy lab's
 *  lane while the scenario's scheduler is the lab's (values: the page's field values). */
export function lanesOf(schedulers, view, values = {}) {
  const on = (s) => s.base || (s.lab ? values.scheduler === s.name : view.lanes.includes(s.name));
  return schedulers.filter(on).map((s) => s.name);
}

function compareRequest(scenario, lanes) {
  return { method: 'compare', params: { scenario, schedulers: lanes } };
}

/** The schedulers a sweep figure runs: "base" = the compared pair, "last" = the richest lane. */
export function sweepSchedulers(def, lanes, schedulers) {
  if (def.schedulers === 'last') return [lanes[lanes.length - 1]];
  return baseSchedulers(schedulers);
}

/** A sweep figure's declaration with the parameter the reader chose (fig.sweep.params); with
 *  `current` and the page's values, the reader's own setting is one of its values too (`grid`: the
 *  declared ones, the axis's ticks). */
export function sweepOf(fig, param, values) {
  const alt = (fig.sweep.params || []).find((p) => p.param === param);
  const def = alt ? { ...fig.sweep, ...alt } : fig.sweep;
  const own = values?.[def.param];
  if (!def.current || typeof own !== 'number' || def.values.includes(own)) return def;
  return { ...def, grid: def.values, values: [...def.values, own].sort((a, b) => a - b) };
}

/** The scenario as one server runs it: without the keys a figure owns (figures.fleet.owns: the
 *  cluster), which only that figure's runs keep. */
export function oneServer(schema, scenario) {
  const owned = Object.values(schema.figures).map((f) => f.owns).filter((k) => k && k in scenario);
  if (!owned.length) return scenario;
  const out = { ...scenario };
  for (const k of owned) delete out[k];
  return out;
}

/**
 * The fleet figure's runs (figures.fleet), or null while the scenario has one replica: `run` the
 * fleet as set, and `routers`: one run per router kind on the same trace, the other knobs as set.
 * Each is a simulate on the richest scheduler on screen. Start-up requests of a page opened on a
 * fleet (an embed, a story step: startupRequests), so the build-time snapshot answers them there;
 * a single-server page never asks them.
 */
export function fleetRequests(ctx, values, lanes, items) {
  const fig = ctx.schema.figures.fleet;
  const { fleet, pooled } = fleetOf(ctx.schema, values);
  if (!fleet) return null;
  const scheduler = sweepSchedulers(fig, lanes, ctx.schema.schedulers)[0];
  const simulate = (vals) => {
    const scenario = { ...scenarioFrom(ctx.fields, vals), scheduler };
    if (items) scenario.workload = { ...scenario.workload, items };
    return { method: 'simulate', params: { scenario } };
  };
  const kinds = ctx.fields.find((f) => f.path === fig.router)?.choices || [];
  return { scheduler, router: values[fig.router], replicas: values[fig.replicas], pooled, run: simulate(values),
    routers: kinds.map((kind) => ({ kind, req: simulate({ ...values, [fig.router]: kind }) })) };
}

/**
 * The planner's requests (figures.plan, app/plan.py) for a GPU budget: `candidates`, then
 * `point(candidate)` one at a time (progress, cancel), then `verdict(rows)`. The scenario as set,
 * cluster included (the planner keeps its router and link), on the richest scheduler on screen.
 */
export function planRequests(ctx, values, lanes, items, gpus, capacity = false) {
  const fig = ctx.schema.figures.plan;
  const scheduler = sweepSchedulers(fig, lanes, ctx.schema.schedulers)[0];
  const scenario = { ...scenarioFrom(ctx.fields, values), scheduler };
  if (items) scenario.workload = { ...scenario.workload, items };
  for (const path of fig.ignores) {       // set by each candidate: the plan does not depend on them
    const [head, key] = path.split('.');
    if (scenario[head]?.[key] !== undefined) {
      scenario[head] = { ...scenario[head] };
      delete scenario[head][key];
      if (!Object.keys(scenario[head]).length) delete scenario[head];
    }
  }
  return {
    // capacity: refused at once where the workload has no load to search (not at its first point)
    candidates: { method: 'plan_candidates', params: { scenario, gpus, ...(capacity ? { capacity } : {}) } },
    // capacity: each candidate at its highest load meeting the SLO (plan --capacity)
    point: (candidate) => ({ method: 'plan_point', params: { scenario, gpus, candidate, ...(capacity ? { capacity } : {}) } }),
    verdict: (rows) => ({ method: 'plan_verdict', params: { scenario, gpus, rows, ...(capacity ? { capacity } : {}) } }),
  };
}

/** One request per point (the page sweeps point by point, so a sweep is cancellable). */
function sweepRequests(def, scenario, lanes, schedulers) {
  const scheds = sweepSchedulers(def, lanes, schedulers);
  const base = def.schedulers === 'base';
  return def.values.map((x) => {
    const params = { scenario, param: def.param, values: [x] };
    if (!base) params.schedulers = scheds;
    return { x, req: { method: 'sweep', params } };
  });
}

function stallRequest(scenario) { return { method: 'stall', params: { scenario } }; }
export function kvRequest(params) { return { method: 'kv', params: params || {} }; }
export const CHECK = { method: 'check', params: {} };
/** Every check of the papers figure at once: the build-time snapshot's answer, shown while the page
 *  has not recomputed them (ui/papers.js recomputes one check a call). */
export const PAPERS = { method: 'papers', params: {} };

/**
 * What each figure asks of the engine for a page state {values, view}:
 * {main, sweeps: {figure: [{x, req}]}, off: {figure: the swept field}, stall, kv: [...], fleet}.
 * An embed asks only for its own figure (main null: it reads nothing of it). Every figure but the
 * fleet runs one server (oneServer). A sweep of a field that changes nothing for these values
 * (the skew of a production trace: matters()) is not run: `off` names it instead.
 */
export function pageRequests(ctx, state) {
  const { schema, fields } = ctx;
  const scenario = oneServer(schema, scenarioFrom(fields, state.values));
  if (state.items) (scenario.workload ??= {}).items = state.items;   // the reader's own trace file
  const lanes = lanesOf(schema.schedulers, state.view, state.values);
  const only = embeddedFigure(ctx, state.view);
  const wants = (fig) => !only || only === fig;
  // an embed of a figure that reads nothing of the main comparison runs none (figures: alone)
  const out = { main: schema.figures[only]?.alone ? null : compareRequest(scenario, lanes), sweeps: {}, off: {}, stall: null, kv: [],
    fleet: wants('fleet') ? fleetRequests(ctx, state.values, lanes, state.items) : null };
  // an embedded P/D fleet is about its pools and TTFT parts: no room (nor runs) for every router
  if (only === 'fleet' && out.fleet?.pooled) out.fleet.routers = [];
  for (const [name, fig] of Object.entries(schema.figures)) {
    if (!fig.sweep || !wants(name)) continue;
    const def = sweepOf(fig, state.sizing?.[name], state.values);
    const f = schema.fields.find((x) => x.path === def.param);
    if (f && !matters(f, state.values, state.items)) out.off[name] = f;
    else out.sweeps[name] = sweepRequests(def, scenario, lanes, schema.schedulers);
  }
  if (wants('stall')) out.stall = stallRequest(scenario);
  if (wants('kv')) out.kv = [KV_PRESETS, kvRequest(null)];
  return out;
}

/** The figure an embed shows: its own, or for the story the figure its step highlights. */
export function embeddedFigure(ctx, view) {
  if (view.embed !== 'story') return view.embed;
  return (storyStep(ctx, view) || ctx.story?.[0])?.highlight ?? null;
}

/** What the default view's first picture waits for, in two parts: `boot`, what main.js's boot asks
 *  on every page whatever its URL (index.html preloads these answers), and `main`, the default
 *  view's main run (engine/start.js preloads it only on the default view: another URL may run
 *  another scenario). tools/site.py writes both preloads. */
export function firstDrawRequests(ctx) {
  return { boot: [SCHEMA, PRESETS, STORY], main: [pageRequests(ctx, parseURL('', ctx)).main] };
}

/** Every request the page makes before its engine is live, for each of these URLs' states. */
export function startupRequests(ctx, searches) {
  const seen = new Map();
  const add = (r) => { if (r) seen.set(canonical(r), r); };
  add(SCHEMA); add(PRESETS); add(STORY); add(PAPERS);
  for (const search of searches) {
    const state = parseURL(search, ctx);
    const reqs = pageRequests(ctx, state);
    add(reqs.main);
    for (const pts of Object.values(reqs.sweeps)) for (const p of pts) add(p.req);
    add(reqs.stall);
    reqs.kv.forEach(add);
    if (reqs.fleet) [reqs.fleet.run, ...reqs.fleet.routers.map((r) => r.req)].forEach(add);
  }
  return [...seen.values()];
}
