// The smaller panels: the prefill stall, the KV-cache calculator and the self-check. Every number
// they show comes from an engine call (methods stall, kv, check); this module builds DOM only.

import { el } from './dom.js';
import { labelNodes } from './controls.js';
import { fmt, fmtTime } from '../draw/format.js';

// ------------------------------------------------------------------ prefill stall
/** res: the engine's stall answer (py_engine/app/figures.py: stall). */
export function renderStall(container, res) {
  const a = res.unchunked, b = res.chunked;
  const max = Math.max(a.worst, b.worst, a.decode || 0);
  const bar = (v, hot) => { const i = el('div', { class: `bar${hot ? ' hot' : ''}` }); i.style.width = `${(100 * v) / max}%`; return i; };
  const row = (label, v, hot, stat) => [el('span', { class: 'lbl', text: label }), el('div', {}, bar(v, hot)),
    el('span', { class: 'num', 'data-stat': stat, 'data-value': String(v), text: fmtTime(v) })];
  const n = res.streams + 1;
  container.replaceChildren(
    el('p', { class: 'caption', text: `${n === 16 ? 'Sixteen' : fmt(n)} users share a batch. A plain decode pass costs ${fmtTime(a.decode)}. When one user pastes a ${fmt(res.prompt)}-token document, its prefill lands in a decode pass and every other stream freezes for that pass.` }),
    el('div', { class: 'stall' },
      ...row(`decode pass, ${n} rows`, a.decode, false, 'stall.decode'),
      ...row(`with the ${fmt(res.prompt)}-token prefill`, a.worst, true, 'stall.unchunked'),
      ...row(`chunked (${fmt(res.chunk)} tokens)`, b.worst, false, 'stall.chunked')),
    el('p', {}, document.createTextNode(`Worst time between tokens for the other ${res.streams} streams: `),
      el('b', { text: fmtTime(a.worst) }), document.createTextNode(' unchunked → '), el('b', { text: fmtTime(b.worst) }),
      document.createTextNode(` with ${fmt(res.chunk)}-token chunks (${fmt(b.chunk_passes)} prefill passes). The price: the long prompt's own first token comes after `),
      el('b', { text: fmtTime(b.ttft) }), document.createTextNode(` instead of ${fmtTime(a.ttft)}.`)),
    res.article_cost ? el('p', { class: 'muted', text: 'The unit cost model makes every pass cost 1, so this panel uses the article\'s cost model.' }) : '',
  );
}

// ------------------------------------------------------------------ KV calculator
// The form's own inputs (kv_capacity's parameters, py_engine/model/kv.py); GB in the form, bytes to the engine.
const NUMBERS = ['layers', 'kv_heads', 'head_dim', 'gpu_gb', 'gpus', 'gpu_mem_utilization', 'weight_gb', 'context_len'];
const BYTES = { gpu_gb: 'gpu_bytes', weight_gb: 'weight_bytes' };

/** presets: the engine's kv presets {models, gpus, dtypes, article}; the form starts at the article.
 *  fitField: the schema's server.cost.fit (the roofline's fit: its choices, label and value). */
export function buildKV(form, presets, onChange, fitField, fit) {
  const { models = {}, gpus = {}, dtypes = { bf16: 2 }, article = {} } = presets || {};
  // The article's model is named by its shape (Llama-3-8B: 32 layers, 8 KV heads, head dim 128).
  const shapeOf = Object.keys(models).find((k) => ['layers', 'kv_heads', 'head_dim'].every((d) => models[k][d] === article[d]));
  const inputs = {};
  const select = (name, label, options, value) => {
    const s = el('select', { id: `kv-${name}`, name });
    for (const [v, t] of options) s.append(el('option', { value: v, text: t }));
    s.value = value;
    inputs[name] = s;
    return el('div', { class: 'field' }, el('label', { for: `kv-${name}`, text: label }), s);
  };
  const labels = {};
  const num = (name, label, unit, value) => {
    const i = el('input', { id: `kv-${name}`, name, type: 'text', inputmode: 'decimal', autocomplete: 'off' });
    i.value = String(value ?? '');
    inputs[name] = i;
    labels[name] = label;
    return el('div', { class: 'field', 'data-field': `kv-${name}` }, el('label', { for: `kv-${name}` }, ...labelNodes(label), unit ? el('span', { class: 'unit', text: ` ${unit}` }) : null), i,
      el('p', { class: 'error', 'data-error-for': `kv-${name}` }));
  };
  // the roofline's fit: only for a deployment (a preset model on a preset GPU), where it prices passes
  const fitRow = fitField ? select('fit', fitField.label, fitField.choices.map((c) => [c, c]), fit ?? fitField.default) : null;
  form.replaceChildren(
    el('div', { class: 'presetrow' },
      select('model', 'Model', [...Object.entries(models).map(([k, m]) => [k, m.label]), ['custom', 'custom shape']], shapeOf || 'custom'),
      select('gpu', 'GPU', [...Object.entries(gpus).map(([k, g]) => [k, g.label]), ['custom', 'custom']], 'custom'),
      select('dtype', 'Weights (dtype)', Object.keys(dtypes).map((k) => [k, k]), article.dtype || 'bf16'),
      ...(fitRow ? [fitRow] : [])),
    num('layers', 'Layers', null, article.layers), num('kv_heads', 'KV heads', null, article.kv_heads),
    num('head_dim', 'Head dim', null, article.head_dim),
    num('gpu_gb', 'GPU memory', 'GB', article.gpu_bytes / 1e9), num('gpus', 'Tensor parallel (tensor_parallel_size)', 'GPUs', 1),
    num('gpu_mem_utilization', 'GPU memory used (gpu_memory_utilization)', '0–1', article.gpu_mem_utilization),
    num('weight_gb', 'Weight memory', 'GB', article.weight_bytes / 1e9), num('context_len', 'Context', 'tokens', article.context_len),
  );
  const deployed = () => inputs.model.value !== 'custom' && inputs.gpu.value !== 'custom';
  const fire = () => { if (fitRow) fitRow.hidden = !deployed(); onChange(params()); };
  if (fitRow) fitRow.hidden = !deployed();
  // a preset model's weights in the form (GB, rounded); sent as such only once edited (else the
  // engine takes params x dtype exactly, as a deployment's kv_tokens "auto" does)
  const presetWeight = () => {
    const m = models[inputs.model.value];
    return m ? String(+((m.params * (dtypes[inputs.dtype.value] ?? 2)) / 1e9).toFixed(3)) : null;
  };
  const fillModel = () => {
    const m = models[inputs.model.value];
    if (m) {
      inputs.layers.value = m.layers; inputs.kv_heads.value = m.kv_heads; inputs.head_dim.value = m.head_dim;
      inputs.weight_gb.value = presetWeight();
    }
  };
  const fillGpu = () => { const g = gpus[inputs.gpu.value]; if (g) inputs.gpu_gb.value = String(g.gpu_bytes / 1e9); };
  inputs.model.addEventListener('change', () => { fillModel(); fire(); });
  inputs.gpu.addEventListener('change', () => { fillGpu(); fire(); });
  inputs.dtype.addEventListener('change', () => inputs.model.dispatchEvent(new Event('change')));
  inputs.fit?.addEventListener('change', fire);
  for (const k of NUMBERS) {
    inputs[k].addEventListener('change', () => {
      if (['layers', 'kv_heads', 'head_dim', 'weight_gb'].includes(k)) inputs.model.value = 'custom';
      if (k === 'gpu_gb') inputs.gpu.value = 'custom';
      fire();
    });
  }
  /** The protocol params: explicit numbers (they win over presets in the engine). */
  function params() {
    const p = { dtype: inputs.dtype.value, ...(inputs.fit ? { fit: inputs.fit.value } : {}) };
    // a preset model on a preset GPU is a deployment: the engine adds its pass times
    if (deployed()) Object.assign(p, { model: inputs.model.value, gpu: inputs.gpu.value });
    for (const k of NUMBERS) {
      const t = inputs[k].value.trim();
      if (k === 'weight_gb' && p.model && t === presetWeight()) continue;   // the model's own
      const v = Number(t);
      const value = t === '' || !Number.isFinite(v) ? t : v;
      if (BYTES[k]) p[BYTES[k]] = typeof value === 'number' ? Math.round(value * 1e9) : value;
      else p[k] = value;
    }
    return p;
  }
  /** Show a deployment (the scenario's roofline cost: {model, gpu, tp, dtype,
   *  gpu_memory_utilization, fit}), as if chosen here; asks the engine (returns true) only if the
   *  form changed. */
  function showDeployment(d) {
    const before = JSON.stringify(params());
    if (models[d.model]) inputs.model.value = d.model;
    if (gpus[d.gpu]) inputs.gpu.value = d.gpu;
    if (d.dtype in dtypes) inputs.dtype.value = d.dtype;
    fillModel(); fillGpu();
    inputs.gpus.value = String(d.tp);
    inputs.gpu_mem_utilization.value = String(d.gpu_memory_utilization);
    if (inputs.fit && d.fit) inputs.fit.value = d.fit;
    if (JSON.stringify(params()) === before) return false;
    fire();
    return true;
  }
  /** Where an engine message about kv_capacity's `field` goes (the form's own input, by name). */
  function errorBox(field) {
    const input = Object.entries(BYTES).find(([, bytes]) => bytes === field)?.[0] ?? field;
    return form.querySelector(`[data-error-for="kv-${input}"]`);
  }
  /** The engine's refusal in the form's words: a field in bytes is a box in GB here ("gpu_bytes =
   *  999999999999999983222784: … from 1 to 10,000,000,000,000,000" for 1e15 typed in GB). */
  function explain(d) {
    const input = Object.entries(BYTES).find(([, bytes]) => bytes === d.field)?.[0];
    if (!input) return d.message;
    const range = /from ([\d,]+) to ([\d,]+)/.exec(d.allowed || '');
    const gb = (digits) => Number(digits.replace(/,/g, '')) / 1e9;
    const within = range ? `${gb(range[1]) === 0 ? 'from 0' : 'above 0'} up to ${fmt(gb(range[2]))} GB` : `as bytes: ${d.allowed}`;
    return `${labels[input]} = ${inputs[input].value.trim() || '(empty)'} GB: must be a number ${within}`;
  }
  return { params, inputs, errorBox, explain, showDeployment };
}

// what each named fit (server.cost.fit) was fitted to, in the panel's words
const FIT_WORDS = {
  'vllm-2025': 'vLLM 0.12-era serving on H100, NVIDIA AIConfigurator\'s measurements of served models; held-out TPOT median error 4.4%',
  'splitwise-2023': '2023 serving software, the Splitwise measurements (ISCA 2024) of Llama-2-70B and BLOOM-176B; held-out decode median error ≤ 10%',
};

export function renderKV(container, res, onUse, onDeploy) {
  const kib = res.bytes_per_token / 1024;
  const btn = el('button', { type: 'button', id: 'btn-kv-use', text: `Use ${fmt(res.tokens)} tokens as the vLLM KV budget` });
  btn.addEventListener('click', () => onUse(res.tokens));
  btn.disabled = !res.fits || !(res.tokens >= 1);
  const rf = res.roofline;
  let deployment = null;
  if (rf && !rf.error) {
    const use = el('button', { type: 'button', id: 'btn-deploy-use', text: `Run on this deployment (${rf.deployment})` });
    // the cost, and vllm serve's own batch defaults on this GPU (the engine's rule: serve_defaults)
    const sd = rf.serve_defaults;
    use.addEventListener('click', () => onDeploy({ model: res.model, gpu: res.gpu, tp: res.gpus, dtype: res.dtype, kv_dtype: res.kv_dtype, gpu_memory_utilization: res.gpu_mem_utilization, fit: rf.fit }, sd.values));
    const knobs = Object.entries(sd.knobs).map(([k, v]) => `${k} ${fmt(v)}`).join(', ');
    const ms = (v) => `${v.toFixed(1)} ms`;
    deployment = el('div', { class: 'deployment' },
      el('p', {}, document.createTextNode(`On ${rf.deployment}, the roofline model gives a decode pass of `),
        el('b', { 'data-stat': 'roofline.decode_1_ms', 'data-value': String(rf.decode_1_ms), text: ms(rf.decode_1_ms) }),
        document.createTextNode(` for 1 request and `),
        el('b', { 'data-stat': 'roofline.decode_32_ms', 'data-value': String(rf.decode_32_ms), text: ms(rf.decode_32_ms) }),
        document.createTextNode(` for 32 (each at ${fmt(rf.context)} tokens of context), and `),
        el('b', { 'data-stat': 'roofline.prefill_ms', 'data-value': String(rf.prefill_ms), text: ms(rf.prefill_ms) }),
        document.createTextNode(` to prefill one ${fmt(rf.context)}-token prompt.`)),
      use,
      el('p', { class: 'muted', 'data-stat': 'roofline.serve_defaults', text: `It runs with ${knobs}: ${sd.rule} (vllm/engine/arg_utils.py).` }),
      el('p', { class: 'what' }, document.createTextNode('The model: weights and KV over HBM bandwidth, FLOPs over peak, all-reduces over the interconnect, fixed overheads; efficiencies and overheads from the fit '),
        el('b', { 'data-stat': 'roofline.fit', 'data-value': rf.fit, text: rf.fit }),
        document.createTextNode(` (${FIT_WORDS[rf.fit] ?? ''}; choose it above, "Fitted to"; python -m py_engine validate). It leaves out ${rf.leaves_out}. Calibrate it with your own numbers below.`)));
  } else if (rf?.error) {
    deployment = el('p', { class: 'error', text: rf.error });
  }
  container.replaceChildren(
    el('p', {}, el('span', { class: 'kv-big', 'data-stat': 'kv.bytes_per_token', 'data-value': String(res.bytes_per_token), text: `${fmt(kib)} KiB` }), document.createTextNode(' of KV cache per token')),
    res.fits
      ? el('p', {}, el('span', { class: 'kv-big', 'data-stat': 'kv.tokens', 'data-value': String(res.tokens), text: fmt(res.tokens) }),
        document.createTextNode(' tokens fit → '),
        el('span', { class: 'kv-big', 'data-stat': 'kv.sequences', 'data-value': String(res.sequences), text: fmt(res.sequences) }),
        document.createTextNode(` concurrent ${fmt(res.context_len)}-token sequences. That is your real max batch.`))
      : el('p', { class: 'error', text: 'The weights alone do not fit in this memory: no room for a KV cache.' }),
    btn,
    ...(deployment ? [deployment] : []),
  );
}

// ------------------------------------------------------------------ self-check
/** res: the engine's check answer {passed, failed, checks: [{name, ok, detail}]}. */
export function renderCheck(summary, list, res) {
  const total = res.passed + res.failed;
  summary.textContent = `${res.passed} of ${total} passed`;
  summary.dataset.passed = String(res.passed);
  summary.dataset.total = String(total);
  summary.className = `check-summary ${res.failed === 0 && total > 0 ? 'pass' : 'fail'}`;
  list.replaceChildren(...res.checks.map((c) => el('li', { class: c.ok ? 'pass' : 'fail', text: `${c.ok ? '✓' : '✗'} ${c.name}${c.detail && !c.ok ? ` — ${c.detail}` : ''}` })));
}

// ------------------------------------------------------------------ calibration
/** The fit's answer: its coefficients, how well they fit, and a button that uses them — only when
 * the engine says the fit is usable (else why not). onUse(cost) returns the KV budget it kept
 * (when the budget was "auto", which a fitted cost cannot size), or null. */
export function renderFit(container, res, onUse) {
  const c = res.cost;
  const pct = (v) => `${(100 * v).toFixed(1)}%`;
  const said = el('p', { class: 'what', id: 'calibrate-note', role: 'status' });
  const use = res.usable
    ? el('button', { type: 'button', id: 'calibrate-use', text: 'Use the fitted cost model' })
    : el('p', { class: 'bad', id: 'calibrate-problem', role: 'alert', text: `Not usable: ${res.problem}.` });
  if (res.usable) {
    use.addEventListener('click', () => {
      const pool = onUse(c);
      said.textContent = pool == null ? 'Using the fitted cost model.'
        : `Using the fitted cost model; the KV budget stays at ${fmt(pool)} tokens, the pool "auto" had sized on the deployment.`;
    });
  }
  const merged = res.merged?.length ? ` ${res.merged.join(', ')} kept at 0: these measurements cannot tell it apart from the other terms, which take its share.` : '';
  container.replaceChildren(
    el('p', {}, document.createTextNode('pass ms = '),
      el('b', { 'data-stat': 'fit.fixed_ms', 'data-value': String(c.fixed_ms), text: String(c.fixed_ms) }),
      document.createTextNode(' + '), el('b', { 'data-stat': 'fit.per_row_ms', 'data-value': String(c.per_row_ms), text: String(c.per_row_ms) }),
      document.createTextNode(' × rows + '), el('b', { 'data-stat': 'fit.per_prefill_token_ms', 'data-value': String(c.per_prefill_token_ms), text: String(c.per_prefill_token_ms) }),
      document.createTextNode(' × prefill tokens + '), el('b', { 'data-stat': 'fit.per_context_token_ms', 'data-value': String(c.per_context_token_ms), text: String(c.per_context_token_ms) }),
      document.createTextNode(' × context tokens')),
    el('p', { class: 'what' }, document.createTextNode(`${res.points} measurements: median error `),
      el('b', { 'data-stat': 'fit.median_ape', 'data-value': String(res.error.median_ape), text: pct(res.error.median_ape) }),
      document.createTextNode(`, worst ${pct(res.error.worst_ape)}${res.error.r2 == null ? '' : `, R² ${res.error.r2.toFixed(4)}`}${res.dropped.length ? `; ${res.dropped.join(', ')} kept at 0 (the data would make it negative or says nothing of it)` : ''}.${merged}`)),
    use, said);
}