// The scenario fields as the page uses them, all from the engine's schema (py_engine/scenario/fields.py):
// defaults, ranges, labels, hints, URL names, when a field exists or is worth showing. Values are
// kept flat, keyed by the field's dotted path; nothing here names a field.

/** The fields the page sets, in the engine's order: those it offers as controls, and those a
 *  figure sets itself (figures.<name>.fields: the policy lab's scheduler and code). */
export function pageFields(schema) {
  const owned = new Set(Object.values(schema.figures).flatMap((g) => g.fields || []));
  return schema.fields.filter((f) => f.control || owned.has(f.path)).map((f) => ({ ...f, group: f.path.split('.')[0] }));
}

function parentOf(path) { const i = path.lastIndexOf('.'); return i < 0 ? '' : path.slice(0, i); }

function holds(conditions, values) {
  return Object.entries(conditions || {}).every(([path, allowed]) => allowed.includes(values[path]));
}

/** Is the field part of the scenario for these values (its variant chosen, its object form on)? */
export function exists(f, values, fields) {
  if (!holds(f.when, values)) return false;
  return !f.form || values[parentOf(f.path)] === f.form;
}

/** The nested value a field in an object form writes: {kind?, its form's fields}; the first form
 *  is written without "kind" (the engine's rule, py_engine/scenario/fields.py). */
function objectValue(f, fields, values) {
  const choice = values[f.path];
  const obj = f.object_choices.indexOf(choice) > 0 ? { kind: choice } : {};
  for (const c of fields) if (c.form === choice && parentOf(c.path) === f.path) obj[c.path.slice(f.path.length + 1)] = values[c.path];
  return obj;
}

/** Worth a control now: it exists, it matters for these values and one of its schedulers is shown. */
export function isVisible(f, values, fields, lanes) {
  if (f.applies_to && !f.applies_to.some((s) => lanes.includes(s))) return false;
  return exists(f, values, fields) && holds(f.shown_if, values);
}

/** The field's hint for these values: the first of its hint_when whose conditions hold, else its
 *  hint (an example that works with the cost model chosen). */
export function hintOf(f, values) {
  return (f.hint_when || []).find(([conditions]) => holds(conditions, values))?.[1] ?? (f.hint || '');
}

/** Does the scenario set a fleet ({fleet}: several replicas, or prefill/decode pools: {pooled})? */
export function fleetOf(schema, values) {
  const fig = schema.figures.fleet;
  const pooled = values[fig?.pools?.prefill] > 0 || values[fig?.pools?.decode] > 0;
  return { fleet: !!fig && (values[fig.replicas] > 1 || pooled), pooled };
}

/** Does setting the field change the run for these values (its shown_if holds)? A field worth
 *  showing only for some workload (the generator's: no production trace) changes nothing of a
 *  trace file's requests either (items: the reader's file). */
export function matters(f, values, items = null) {
  if (items && generatorOnly(f)) return false;
  return holds(f.shown_if, values);
}

/** Is the field shown only for some workload (the generator's: its shown_if names workload fields)? */
export const generatorOnly = (f) => Object.keys(f.shown_if || {}).some((p) => p.startsWith('workload.'));

export function defaults(fields) {
  return Object.fromEntries(fields.map((f) => [f.path, f.default]));
}

function show(text) {
  const s = String(text);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** The allowed values in the page's words: a page limit under the engine's ("from 1 to 20,000 in
 *  the page", not the engine's 1,000,000 the page then refuses), and an empty box for null. */
export function pageAllowed(f) {
  let words = f.allowed;
  if (f.page_max != null && f.max != null && f.page_max < f.max) {
    words = words.replace(/ to [\d,.]+/, ` to ${f.page_max.toLocaleString('en-US')} in the page (the engine takes up to ${Number(f.max).toLocaleString('en-US')} natively: python -m py_engine)`);
  }
  if (f.nullable && f.empty) words = words.replace('(or null', `(or empty: ${f.empty}`);
  return words;
}

/**
 * Parse user or URL text for one field: {value} or {error}, the error naming the field and its
 * allowed range in the engine's own words ("server.slots = 0: must be an integer from 1 to 4096").
 */
export function parseField(f, text) {
  const raw = text == null ? '' : String(text).trim();
  const fail = () => ({ error: `${f.path} = ${show(raw) || '(empty)'}: must be ${pageAllowed(f)}` });
  if (f.type === 'choice' || f.type === 'cost') return (f.choices || []).includes(raw) ? { value: raw } : fail();
  if (f.type === 'text') {   // as written (code keeps its spaces), at most f.max characters
    const t = text == null ? '' : String(text);
    return t.length <= f.max ? { value: t } : { error: `${f.path}: ${t.length.toLocaleString('en-US')} characters; must be ${f.allowed}` };
  }
  if (f.type === 'overrides') return parseOverrides(f, raw, fail);
  if (f.type === 'bool') {
    if (/^(1|true|yes|on)$/i.test(raw)) return { value: true };
    if (/^(0|false|no|off)$/i.test(raw)) return { value: false };
    return fail();
  }
  if ((f.words || []).includes(raw.toLowerCase())) return { value: raw.toLowerCase() };
  if (f.nullable && (raw === '' || /^(null|none|unlimited|∞)$/i.test(raw) || raw.toLowerCase() === f.empty)) return { value: null };
  // Digits only: "1,5" or "2_000" is refused rather than guessed (a decimal comma? a separator?).
  if (raw === '' || !NUMBER.test(raw)) return fail();
  const n = Number(raw);
  if (!Number.isFinite(n) || (f.type === 'int' && !Number.isInteger(n))) return fail();
  if ((f.min != null && n < f.min) || (f.max != null && n > f.max)) return fail();
  if (f.page_max != null && n > f.page_max) {
    return { error: `${f.path} = ${show(raw)}: must be at most ${f.page_max.toLocaleString('en-US')} in the page (the engine takes up to ${Number(f.max).toLocaleString('en-US')} natively: python -m py_engine)` };
  }
  return { value: n };
}

const MAX_OVERRIDES = 2000;   // characters: a pool's few server fields, never a document

/** A pool's server overrides: empty = none (null), else a JSON object (the engine checks each
 *  field in it and names the one it refuses). */
function parseOverrides(f, raw, fail) {
  if (raw === '' || /^(null|none)$/i.test(raw)) return { value: null };
  if (raw.length > MAX_OVERRIDES) return { error: `${f.path}: at most ${MAX_OVERRIDES} characters` };
  let v;
  try { v = JSON.parse(raw); } catch { return { error: `${f.path} = ${show(raw)}: not JSON; must be ${f.allowed}, e.g. {"slots": 16}` }; }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return fail();
  return { value: v };
}

/** A value as the text its control and the URL show (an object as JSON, null as ''). */
export function valueText(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function setPath(obj, path, v) {
  const parts = path.split('.');
  let o = obj;
  for (const p of parts.slice(0, -1)) o = o[p] ??= {};
  o[parts[parts.length - 1]] = v;
}

/** The value at a dotted path ("server.slots") in a nested object, or undefined where the path
 *  leaves it. The page's one reader of dotted paths (scenarios, results, metrics). */
export function getPath(obj, path) {
  return path.split('.').reduce((o, k) => (o == null || typeof o !== 'object' ? undefined : o[k]), obj);
}

/** Flat values → the nested scenario the engine takes: only fields that exist and differ from
 *  their defaults; a cost model in its object form carries all of its fields. */
export function scenarioFrom(fields, values) {
  const sc = {};
  for (const f of fields) {
    if (f.form) continue;                                          // written with its parent
    if (!exists(f, values, fields)) continue;
    const v = values[f.path];
    if ((f.object_choices || []).includes(v)) {
      setPath(sc, f.path, objectValue(f, fields, values));
    } else if (v !== undefined && v !== f.default) {
      setPath(sc, f.path, v);
    }
  }
  return sc;
}

/** Nested scenario (a preset, say) → flat values over the defaults. */
export function valuesFromScenario(fields, scenario) {
  const v = defaults(fields);
  for (const f of fields) {
    let x = getPath(scenario, f.path);
    if (x === undefined && f.shorthand) {
      const whole = getPath(scenario, parentOf(f.path));          // e.g. "arrival": "poisson"
      if (typeof whole === 'string') x = whole;
    }
    if ((f.object_choices || []).length && x && typeof x === 'object') {
      v[f.path] = x.kind || f.object_choices[0];
      for (const c of fields) if (c.form === v[f.path] && c.path.slice(f.path.length + 1) in x) v[c.path] = x[c.path.slice(f.path.length + 1)];
      continue;
    }
    if (x !== undefined && (x !== null || f.nullable)) v[f.path] = x;
  }
  return v;
}

/** Do two value sets agree on every field? */
export function sameValues(fields, a, b) { return fields.every((f) => a[f.path] === b[f.path]); }

/** Which preset (if any) the values equal exactly. */
export function matchingPreset(fields, presets, values) {
  for (const [name, p] of Object.entries(presets || {})) {
    if (sameValues(fields, values, valuesFromScenario(fields, p.scenario || {}))) return name;
  }
  return null;
}

export function groupTitle(schema, g) { return schema.groups?.[g] || g; }

/** The fields that differ from their defaults, in words ("Slots (max_num_seqs) 16 · Length skew 0.8"). */
export function describe(fields, values) {
  const parts = fields.filter((f) => exists(f, values, fields) && values[f.path] !== f.default)
    .map((f) => (f.url_codec ? f.label : `${f.label} ${values[f.path] === null ? 'none' : valueText(values[f.path])}`));   // not a policy's source
  return parts.length ? parts.join(' · ') : 'the default scenario';
}
