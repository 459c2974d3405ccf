// The one URL codec: the scenario fields by their URL names (from the engine's schema) and the
// page's view parameters. Nothing read from the URL is executed or inserted as HTML: values are
// parsed as numbers or matched against known choices, anything else becomes a message.

import { parseField, defaults, valuesFromScenario, matchingPreset, exists, valueText, fleetOf } from './schema.js';
import { PLAY_SECONDS, DEFAULT_PLAY_SECONDS } from './view.js';

const FLAG_ON = ['1', 'true', 'yes', 'on'];
const FLAG_OFF = ['0', 'false', 'no', 'off'];
const THEMES = ['dark', 'light'];
// A figure's former names, so that links made before it was renamed still open it. The prefill
// stall was the figure "cost" (embed=cost, while its engine method was already "stall"); it has
// one name now, stall. The one place an old figure name is read.
const FORMER_FIGURES = new Map([['cost', 'stall']]);

// A field with url_codec "base64url" (a policy's source) travels as base64url of its UTF-8 bytes,
// and only while that fits in a link this long; longer code travels in the exports.
export const LINK_TEXT_MAX = 3000;

export function toBase64url(text) {
  let bin = '';
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** base64url → text, or null when it is not base64url of UTF-8. */
export function fromBase64url(s) {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return null;
  try {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

// The view's own parameters (parseView) besides the lanes (ctx.optional); with the fields' URL
// names, every name a link may carry. Others a link picks up on its way (analytics, ads) are no
// setting and no mistake: ignored without a word.
const VIEW_KEYS = ['lecture', 'theme', 'embed', 'pass', 'speed', 'preset', 'story', 'challenge', 'gpus', 'capacity'];
const PASSING = /^(utm_\w*|fbclid|gclid|msclkid|mc_cid|mc_eid|_ga|ref)$/i;

/** Levenshtein distance (names of a few letters: the plain table). */
function distance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/** {name: message} for the link's parameters that are no setting of the page (a typo in a
 *  hand-edited link would otherwise leave the default in place without a word). */
function unknownParams(q, ctx) {
  const known = new Set([...VIEW_KEYS, ...(ctx.optional || []),
    ...ctx.fields.flatMap((f) => [f.url, ...(f.aliases || [])])]);
  const out = {};
  for (const key of new Set(q.keys())) {
    if (!key || known.has(key) || PASSING.test(key)) continue;
    const lower = key.toLowerCase();
    let best = null, bestD = Infinity;
    for (const k of known) {
      const d = distance(lower, k.toLowerCase());
      if (d < bestD) { best = k; bestD = d; }
    }
    const near = bestD <= Math.max(1, Math.floor(key.length / 3)) ? `; did you mean ${best}?` : '';
    out[key] = `${show(key)}: not a setting of this page (ignored${near})`;
  }
  return out;
}

function show(text) {
  const s = String(text);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function flag(q, key, errors) {
  const raw = (q.get(key) ?? '').toLowerCase();
  if (FLAG_ON.includes(raw)) return true;
  if (FLAG_OFF.includes(raw) || raw === '') return false;
  errors[key] = `${key} = ${show(q.get(key))}: must be 1 or 0`;
  return false;
}

/**
 * The view part of a URL: {view: {embed, lecture, theme, pass, preset, lanes, speed, story, challenge, gpus,
 * capacity}, errors}.
 * ctx.figures: the figure names an embed may show; ctx.optional: schedulers a reader may add as
 * lanes (`<name>=1`); ctx.presets (optional): the presets, whose lanes apply unless overridden;
 * ctx.challenges (optional): the policy lab's challenge names; ctx.plan (optional): the planner's
 * GPU budget {gpus: its default, max} (gpus=, and capacity=1: each candidate at its capacity).
 */
export function parseView(search, ctx) {
  const q = new URLSearchParams(search);
  const errors = {};
  const view = { embed: null, lecture: false, theme: null, pass: null, preset: null, lanes: [], speed: DEFAULT_PLAY_SECONDS, story: null, challenge: null, gpus: null, capacity: false };
  view.lecture = q.has('lecture') && flag(q, 'lecture', errors);
  const th = q.get('theme');
  if (th != null) {
    if (THEMES.includes(th)) view.theme = th;
    else errors.theme = `theme = ${show(th)}: must be one of ${THEMES.join(', ')}`;
  }
  const em = q.get('embed');
  if (em != null) {
    const name = FORMER_FIGURES.get(em) ?? em;
    if ((ctx.figures || []).includes(name)) view.embed = name;
    else errors.embed = `embed = ${show(em)}: must be one of ${(ctx.figures || []).join(', ')}`;
  }
  const p = q.get('pass');
  if (p != null) {
    const n = Number(p);
    if (/^\d+$/.test(p) && Number.isSafeInteger(n)) view.pass = n;
    else errors.pass = `pass = ${show(p)}: must be an integer from 0 to the number of passes`;
  }
  const sp = q.get('speed');
  if (sp != null) {
    if (PLAY_SECONDS.map(String).includes(sp)) view.speed = Number(sp);
    else errors.speed = `speed = ${show(sp)}: must be one of ${PLAY_SECONDS.join(', ')} (seconds a run plays in)`;
  }
  const preset = q.get('preset');
  if (preset != null && ctx.presets) {
    if (Object.prototype.hasOwnProperty.call(ctx.presets, preset)) view.preset = preset;
    else errors.preset = `preset = ${show(preset)}: must be one of ${Object.keys(ctx.presets).join(', ')}`;
  }
  const st = q.get('story');
  if (st != null && ctx.story) {
    const n = Number(st);
    if (/^\d+$/.test(st) && n >= 1 && n <= ctx.story.length) view.story = n;
    else errors.story = `story = ${show(st)}: must be a step from 1 to ${ctx.story.length}`;
  }
  const ch = q.get('challenge');     // the policy lab's challenge (figures.lab.challenges)
  if (ch != null && ctx.challenges) {
    if (ctx.challenges.includes(ch)) view.challenge = ch;
    else errors.challenge = `challenge = ${show(ch)}: must be one of ${ctx.challenges.join(', ')}`;
  }
  const g = q.get('gpus');           // the planner's GPU budget (figures.plan)
  if (g != null && ctx.plan) {
    const n = Number(g);
    if (/^\d+$/.test(g) && n >= 1 && n <= ctx.plan.max) view.gpus = n;
    else errors.gpus = `gpus = ${show(g)}: must be an integer from 1 to ${ctx.plan.max} (the planner's GPU budget)`;
  }
  if (q.has('capacity') && ctx.plan) view.capacity = flag(q, 'capacity', errors);
  const step = storyStep(ctx, view);
  const presetLanes = step ? step.schedulers || [] : view.preset ? ctx.presets[view.preset].schedulers || [] : [];
  for (const s of ctx.optional || []) {
    if (q.has(s) ? flag(q, s, errors) : presetLanes.includes(s)) view.lanes.push(s);
  }
  return { view, errors };
}

/** The story step a view is on ({title, text, scenario, schedulers, highlight, focus}), or null. */
export function storyStep(ctx, view) {
  return view?.story ? ctx.story?.[view.story - 1] ?? null : null;
}

/**
 * URL → {values, view, errors}. errors: {key: message} for values that could not be used (the
 * default is used instead, and the page says so beside the control; key = the URL name), and
 * for parameters that are no setting (above the form).
 */
export function parseURL(search, ctx) {
  const { view, errors } = parseView(search, ctx);
  const q = new URLSearchParams(search);
  const step = storyStep(ctx, view);
  const values = step ? valuesFromScenario(ctx.fields, step.scenario || {})
    : view.preset ? valuesFromScenario(ctx.fields, ctx.presets[view.preset].scenario || {})
      : defaults(ctx.fields);
  for (const f of ctx.fields) {
    // a field's former URL names still work (old links); the current name wins
    const key = [f.url, ...(f.aliases || [])].find((k) => q.has(k));
    if (key == null) continue;
    const text = f.url_codec ? fromBase64url(q.get(key)) : q.get(key);
    if (text == null) { errors[f.url] = `${key}: not base64url of UTF-8 text (from the link; ignored)`; continue; }
    const r = parseField(f, text);
    if ('error' in r) errors[f.url] = `${r.error} (from the link; using ${values[f.path] ?? 'none'})`;
    else values[f.path] = r.value;
  }
  // an embedded figure shows what its button opens (an embed has no buttons that change the
  // scenario): the fleet figure with no fleet set its fleet (it would stay empty), the planner
  // with no cost model in the link a roofline deployment (it would only say it needs one)
  const { fleet, plan } = ctx.schema?.figures ?? {};
  if (view.embed === 'fleet' && fleet && !fleetOf(ctx.schema, values).fleet) values[fleet.replicas] = fleet.open_replicas;
  const cost = plan && ctx.fields.find((f) => f.path === plan.cost);
  if (view.embed === 'plan' && cost && !q.has(cost.url)) values[plan.cost] = plan.open_cost;
  return { values, view, errors: { ...errors, ...unknownParams(q, ctx) } };
}

/** State → query string: the preset's name when the values equal it, else every field that exists
 *  and differs from its default; then the view. */
export function toQuery(ctx, values, view) {
  const q = new URLSearchParams();
  const step = storyStep(ctx, view);
  const preset = step ? null : matchingPreset(ctx.fields, ctx.presets, values);
  if (step) q.set('story', String(view.story));      // the step's own scenario (main.js keeps them equal)
  else if (preset && preset !== ctx.defaultPreset) q.set('preset', preset);
  if (!preset && !step) {
    for (const f of ctx.fields) {
      const v = values[f.path];
      if (!exists(f, values, ctx.fields) || v === f.default) continue;
      const text = v === null ? 'none' : f.url_codec ? toBase64url(v) : valueText(v);
      if (!f.url_codec || text.length <= LINK_TEXT_MAX) q.set(f.url, text);
    }
  }
  for (const s of view.lanes || []) q.set(s, '1');
  if (view.lecture) q.set('lecture', '1');
  if (view.theme) q.set('theme', view.theme);
  if (view.embed) q.set('embed', view.embed);
  if (view.challenge) q.set('challenge', view.challenge);
  if (view.gpus != null && view.gpus !== ctx.plan?.gpus) q.set('gpus', String(view.gpus));
  if (view.capacity) q.set('capacity', '1');
  if (view.pass != null) q.set('pass', String(view.pass));
  if (view.speed != null && view.speed !== DEFAULT_PLAY_SECONDS) q.set('speed', String(view.speed));
  const s = q.toString();
  return s ? `?${s}` : '';
}
