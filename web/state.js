// Page state: the scenario fields (built from the engine's `schema`, the one source of truth for
// defaults and ranges), the view (vllm, embed, lecture, theme, playhead) and the URL round trip.
// Nothing read from the URL is executed or inserted as HTML: values are parsed as numbers or
// matched against the schema's choices, and anything else becomes a message.

// Work bound for the browser: a run this size takes seconds in Pyodide; bigger runs belong to
// the native CLI, and the message says so.
export const PAGE_LIMITS = { requests: 20000 };

export const FIGURES = ['timeline', 'metrics', 'skew', 'slots', 'cost', 'kv', 'check'];
const HIDDEN_PATHS = new Set(['scheduler', 'workload.items']);
const GROUPS = { workload: 'Workload', server: 'Server', slo: 'Service-level objectives' };
const VLLM_ONLY = new Set(['max_num_batched_tokens', 'block_size', 'kv_tokens', 'preemption', 'pcie_gb_s', 'kv_bytes_per_token']);
const LABELS = {
  requests: 'Requests', seed: 'Seed', skew: 'Length skew', output_mean: 'Mean output', prompt_mean: 'Mean prompt',
  arrival: 'Arrivals', rate: 'Arrival rate', every: 'Arrival gap', slots: 'Slots (max_num_seqs)', chunk: 'Prefill chunk',
  cost: 'Cost model', fixed_ms: 'Fixed per pass', per_row_ms: 'Per row', per_prefill_token_ms: 'Per prefill token',
  max_num_batched_tokens: 'Token budget / pass', block_size: 'KV block size', kv_tokens: 'KV capacity',
  preemption: 'Preemption', pcie_gb_s: 'PCIe bandwidth', kv_bytes_per_token: 'KV bytes / token',
  ttft_ms: 'TTFT SLO', tbt_ms: 'TBT SLO',
};

/** Schema (dict keyed by dotted path) → ordered list of page fields. */
export function fieldsFromSchema(schema) {
  const out = [];
  for (const [path, spec] of Object.entries(schema)) {
    if (HIDDEN_PATHS.has(path)) continue;
    const parts = path.split('.');
    let name = parts[parts.length - 1];
    if (path === 'workload.arrival.kind') name = 'arrival';
    out.push({
      path, name, group: parts[0], type: spec.type, default: spec.default,
      min: spec.min, max: spec.max, choices: spec.choices, unit: spec.unit,
      description: spec.description, allowed: spec.allowed || '',
      label: LABELS[name] || name, vllmOnly: VLLM_ONLY.has(name),
    });
  }
  return out;
}

export function groupTitle(g) { return GROUPS[g] || g; }

/** Is the field relevant for the current values (e.g. rate only for Poisson arrivals)? */
export function fieldVisible(f, values, view) {
  if (f.name === 'rate') return values.arrival === 'poisson';
  if (f.name === 'every') return values.arrival === 'gap';
  if (f.path.startsWith('server.cost.')) return values.cost === 'custom';
  if (f.name === 'pcie_gb_s' || f.name === 'kv_bytes_per_token') return !!view.vllm && values.preemption === 'swap';
  if (f.vllmOnly) return !!view.vllm;
  return true;
}

export function defaults(fields) {
  const v = {};
  for (const f of fields) v[f.name] = f.default;
  return v;
}

function show(text) {
  const s = String(text);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/**
 * Parse user / URL text for one field. Returns {value} or {error} where error names the field
 * and the allowed range, in the engine's own words ("server.slots = 0: must be ...").
 */
export function parseField(f, text) {
  const raw = text == null ? '' : String(text).trim();
  const fail = () => ({ error: `${f.path} = ${show(raw) || '(empty)'}: must be ${f.allowed}` });
  if (f.type === 'choice' || f.type === 'cost') {
    return (f.choices || []).includes(raw) ? { value: raw } : fail();
  }
  if (f.type === 'int_or_null' && (raw === '' || /^(null|none|unlimited|∞)$/i.test(raw))) return { value: null };
  if (raw === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw.replace(/[_,]/g, ''))) return fail();
  const n = Number(raw.replace(/[_,]/g, ''));
  if (!Number.isFinite(n)) return fail();
  if ((f.type === 'int' || f.type === 'int_or_null') && !Number.isInteger(n)) return fail();
  if ((f.min != null && n < f.min) || (f.max != null && n > f.max)) return fail();
  const cap = PAGE_LIMITS[f.name];
  if (cap != null && n > cap) {
    return { error: `${f.path} = ${show(raw)}: must be at most ${cap.toLocaleString('en-US')} in the page (the engine takes up to ${Number(f.max).toLocaleString('en-US')} natively: python -m py_engine)` };
  }
  return { value: n };
}

/** Flat values → the nested scenario the engine takes; only fields that differ from defaults. */
export function scenarioFrom(fields, values) {
  const sc = {};
  const set = (path, v) => {
    const parts = path.split('.');
    let o = sc;
    for (const p of parts.slice(0, -1)) o = o[p] ??= {};
    o[parts[parts.length - 1]] = v;
  };
  for (const f of fields) {
    const v = values[f.name];
    if (f.path.startsWith('workload.arrival.') || f.path.startsWith('server.cost')) continue;
    if (v === f.default || v === undefined) continue;
    set(f.path, v);
  }
  const by = Object.fromEntries(fields.map((f) => [f.name, f]));
  if (values.arrival && values.arrival !== by.arrival?.default) {
    const a = { kind: values.arrival };
    if (values.arrival === 'poisson' && values.rate !== by.rate?.default) a.rate = values.rate;
    if (values.arrival === 'gap' && values.every !== by.every?.default) a.every = values.every;
    set('workload.arrival', a);
  }
  if (values.cost === 'custom') {
    set('server.cost', { fixed_ms: values.fixed_ms, per_row_ms: values.per_row_ms, per_prefill_token_ms: values.per_prefill_token_ms });
  } else if (values.cost && values.cost !== by.cost?.default) {
    set('server.cost', values.cost);
  }
  return sc;
}

/** Nested scenario (e.g. a preset) → flat values over the defaults. */
export function valuesFromScenario(fields, scenario) {
  const v = defaults(fields);
  const get = (path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), scenario);
  for (const f of fields) {
    if (f.path === 'server.cost') continue;
    let x = get(f.path);
    if (f.path === 'workload.arrival.kind' && typeof get('workload.arrival') === 'string') x = get('workload.arrival');
    if (x !== undefined && !(x === null && f.type !== 'int_or_null')) v[f.name] = x;
  }
  const c = get('server.cost');
  if (typeof c === 'string') v.cost = c;
  else if (c && typeof c === 'object') {
    v.cost = 'custom';
    for (const k of ['fixed_ms', 'per_row_ms', 'per_prefill_token_ms']) if (k in c) v[k] = c[k];
  }
  return v;
}

function sameValues(fields, a, b) {
  return fields.every((f) => a[f.name] === b[f.name]);
}

/** A preset made for the vLLM-style scheduler turns its timeline on. */
export function presetUsesVllm(preset) { return preset?.scenario?.scheduler === 'vllm'; }

/** Which preset (if any) the values equal exactly. */
export function matchingPreset(fields, presets, values) {
  for (const [name, p] of Object.entries(presets || {})) {
    if (sameValues(fields, values, valuesFromScenario(fields, p.scenario || {}))) return name;
  }
  return null;
}

/**
 * URL → {values, view, errors}. errors: {fieldName: message} for values that could not be used
 * (the default is used instead, and the page says so beside the control).
 */
export function readURL(search, fields, presets) {
  const q = new URLSearchParams(search);
  const errors = {};
  const view = { vllm: false, preset: null, embed: null, lecture: false, theme: null, pass: null };
  let values = defaults(fields);
  const preset = q.get('preset');
  if (preset != null) {
    if (presets && Object.prototype.hasOwnProperty.call(presets, preset)) {
      values = valuesFromScenario(fields, presets[preset].scenario || {});
      view.preset = preset;
    } else {
      errors.preset = `preset = ${show(preset)}: must be one of ${Object.keys(presets || {}).join(', ')}`;
    }
  }
  for (const f of fields) {
    if (!q.has(f.name)) continue;
    const r = parseField(f, q.get(f.name));
    if ('error' in r) errors[f.name] = `${r.error} (from the link; using ${f.default ?? 'none'})`;
    else values[f.name] = r.value;
  }
  const flag = (k) => ['1', 'true', 'yes', 'on'].includes((q.get(k) || '').toLowerCase());
  view.vllm = q.has('vllm') ? flag('vllm') : presetUsesVllm(presets?.[view.preset]);
  view.lecture = flag('lecture');
  const th = q.get('theme');
  if (th === 'dark' || th === 'light') view.theme = th;
  else if (th != null) errors.theme = `theme = ${show(th)}: must be one of dark, light`;
  const em = q.get('embed');
  if (em != null) {
    if (FIGURES.includes(em)) view.embed = em;
    else errors.embed = `embed = ${show(em)}: must be one of ${FIGURES.join(', ')}`;
  }
  const p = q.get('pass');
  if (p != null) {
    const n = Number(p);
    if (/^\d+$/.test(p) && Number.isSafeInteger(n)) view.pass = n;
    else errors.pass = `pass = ${show(p)}: must be an integer from 0 to the number of passes`;
  }
  return { values, view, errors };
}

/** State → query string: the preset's name when the values equal it, else every non-default field. */
export function toQuery(fields, presets, values, view) {
  const q = new URLSearchParams();
  const preset = matchingPreset(fields, presets, values);
  if (preset && preset !== 'article') q.set('preset', preset);
  if (!preset) {
    for (const f of fields) {
      if (!fieldVisible(f, values, { vllm: true }) && f.name !== 'cost') continue;
      const v = values[f.name];
      if (v !== f.default) q.set(f.name, v === null ? 'none' : String(v));
    }
  }
  if (view.vllm) q.set('vllm', '1');
  if (view.lecture) q.set('lecture', '1');
  if (view.theme) q.set('theme', view.theme);
  if (view.embed) q.set('embed', view.embed);
  if (view.pass != null) q.set('pass', String(view.pass));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The protocol request for the main view. */
export function compareRequest(scenario, vllm) {
  return { method: 'compare', params: { scenario, schedulers: vllm ? ['static', 'continuous', 'vllm'] : ['static', 'continuous'] } };
}

/** One point of a sweep (the page sweeps point by point so the work is cancellable). */
export function sweepRequest(scenario, param, value, schedulers) {
  const params = { scenario, param, values: [value] };
  if (schedulers) params.schedulers = schedulers;
  return { method: 'sweep', params };
}

/** Deterministic JSON (sorted keys) so a request can be matched against the build-time snapshot. */
export function canonical(x) {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (x && typeof x === 'object') {
    return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${canonical(x[k])}`).join(',')}}`;
  }
  return JSON.stringify(x);
}
