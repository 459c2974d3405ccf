// The smaller panels: the prefill-stall cost panel, the KV-cache calculator and the self-check.
// Every number they show comes from an engine call; this module only builds requests and DOM.

import { el } from './controls.js';
import { fmt, fmtTime } from './canvas-kit.js';

// ------------------------------------------------------------------ prefill stall
// The article's example as a real trace: 15 streams decoding, then one 4,000-token prompt arrives
// and joins a 16-row batch. Run it unchunked and with the page's chunk size; the worst pass is
// the worst gap between tokens every other stream sees.
export const STALL_PROMPT = 4000;
export const NO_CHUNK = 65536;

export function stallScenario(chunk, cost) {
  const items = [];
  for (let i = 0; i < 15; i++) items.push({ arrive: 0, prompt: 16, out: 400 });
  items.push({ arrive: 100, prompt: STALL_PROMPT, out: 20 });
  const sc = { workload: { items }, server: { slots: 16, chunk } };
  if (cost !== undefined) sc.server.cost = cost;
  return sc;
}

export function stallRequests(chunk, cost) {
  // The unit cost model makes every pass cost 1: the stall needs a cost that grows with tokens.
  const c = cost === 'unit' ? undefined : cost;
  return [
    { method: 'simulate', params: { scenario: stallScenario(NO_CHUNK, c) } },
    { method: 'simulate', params: { scenario: stallScenario(Math.min(chunk, STALL_PROMPT), c) } },
  ];
}

/** Longest pass, and the cost of a plain 16-row decode pass, from the run-length passes_log. */
function passStats(res) {
  const log = res.passes_log;
  let worst = 0, decode16 = null;
  for (let i = 0; i < log.cost.length; i++) {
    worst = Math.max(worst, log.cost[i]);
    if (log.rows[i] === 16 && log.prefill_tokens[i] === 0 && decode16 == null) decode16 = log.cost[i];
  }
  let chunkPasses = 0;
  for (let i = 0; i < log.cost.length; i++) if (log.rows[i] === 16 && log.prefill_tokens[i] > 0) chunkPasses += log.count[i];
  return { worst, decode16, chunkPasses };
}

export function renderStall(container, [unchunked, chunked], chunk, costWasUnit) {
  const a = passStats(unchunked), b = passStats(chunked);
  const big = (r) => r.requests[r.requests.length - 1];
  const max = Math.max(a.worst, b.worst, a.decode16 || 0);
  const bar = (v, hot) => { const i = el('div', { class: `bar${hot ? ' hot' : ''}` }); i.style.width = `${(100 * v) / max}%`; return i; };
  const row = (label, v, hot, stat) => [el('span', { class: 'lbl', text: label }), el('div', {}, bar(v, hot)), el('span', { class: 'num', 'data-stat': stat, 'data-value': String(v), text: fmtTime(v) })];
  const c = Math.min(chunk, STALL_PROMPT);
  container.replaceChildren(
    el('p', { class: 'caption', text: `Sixteen users share a batch. A plain decode pass costs ${fmtTime(a.decode16)}. When one user pastes a ${fmt(STALL_PROMPT)}-token document, its prefill lands in a decode pass and every other stream freezes for that pass.` }),
    el('div', { class: 'stall' },
      ...row('decode pass, 16 rows', a.decode16, false, 'stall.decode'),
      ...row(`with the ${fmt(STALL_PROMPT)}-token prefill`, a.worst, true, 'stall.unchunked'),
      ...row(`chunked (${fmt(c)} tokens)`, b.worst, false, 'stall.chunked')),
    el('p', {}, document.createTextNode('Worst time between tokens for the other 15 streams: '),
      el('b', { text: fmtTime(a.worst) }), document.createTextNode(' unchunked → '), el('b', { text: fmtTime(b.worst) }),
      document.createTextNode(` with ${fmt(c)}-token chunks (${fmt(b.chunkPasses)} prefill passes). The price: the long prompt's own first token comes after `),
      el('b', { text: fmtTime(big(chunked).ttft) }), document.createTextNode(` instead of ${fmtTime(big(unchunked).ttft)}.`)),
    costWasUnit ? el('p', { class: 'muted', text: 'The unit cost model makes every pass cost 1, so this panel uses the article\'s cost model.' }) : '',
  );
}

// ------------------------------------------------------------------ KV calculator
const KV_DEFAULT = { model: 'llama-3-8b', gpu: 'h100-80gb', dtype: 'bf16', gpus: 1, gpu_mem_utilization: 0.92, weight_gb: 16, context_len: 2048 };

export function buildKV(form, presets, onChange) {
  const models = presets?.models || {}, gpus = presets?.gpus || {}, dtypes = presets?.dtypes || { bf16: 2 };
  const st = { ...KV_DEFAULT };
  const m0 = models[st.model];
  Object.assign(st, { layers: m0?.layers ?? 32, kv_heads: m0?.kv_heads ?? 8, head_dim: m0?.head_dim ?? 128, gpu_gb: (gpus[st.gpu]?.gpu_bytes ?? 80e9) / 1e9 });
  const inputs = {};
  const select = (name, label, options) => {
    const s = el('select', { id: `kv-${name}`, name });
    for (const [v, t] of options) s.append(el('option', { value: v, text: t }));
    s.value = st[name];
    inputs[name] = s;
    return el('div', { class: 'field' }, el('label', { for: `kv-${name}`, text: label }), s);
  };
  const num = (name, label, unit) => {
    const i = el('input', { id: `kv-${name}`, name, type: 'text', inputmode: 'decimal', autocomplete: 'off' });
    i.value = String(st[name]);
    inputs[name] = i;
    return el('div', { class: 'field', 'data-field': `kv-${name}` }, el('label', { for: `kv-${name}` }, document.createTextNode(label), unit ? el('span', { class: 'unit', text: ` ${unit}` }) : null), i,
      el('p', { class: 'error', 'data-error-for': `kv-${name}` }));
  };
  form.replaceChildren(
    el('div', { class: 'presetrow' },
      select('model', 'Model', [...Object.entries(models).map(([k, m]) => [k, m.label]), ['custom', 'custom shape']]),
      select('gpu', 'GPU', [...Object.entries(gpus).map(([k, g]) => [k, g.label]), ['custom', 'custom']]),
      select('dtype', 'dtype', Object.keys(dtypes).map((k) => [k, k]))),
    num('layers', 'Layers'), num('kv_heads', 'KV heads'), num('head_dim', 'Head dim'),
    num('gpu_gb', 'GPU memory', 'GB'), num('gpus', 'GPUs'), num('gpu_mem_utilization', 'Memory use', '0–1'),
    num('weight_gb', 'Weights', 'GB'), num('context_len', 'Context', 'tokens'),
  );
  const fire = () => onChange(params());
  inputs.model.addEventListener('change', () => {
    const m = models[inputs.model.value];
    if (m) {
      inputs.layers.value = m.layers; inputs.kv_heads.value = m.kv_heads; inputs.head_dim.value = m.head_dim;
      const bytes = presets?.dtypes?.[inputs.dtype.value] ?? 2;
      inputs.weight_gb.value = String(+((m.params * bytes) / 1e9).toFixed(3));
    }
    fire();
  });
  inputs.gpu.addEventListener('change', () => { const g = gpus[inputs.gpu.value]; if (g) inputs.gpu_gb.value = String(g.gpu_bytes / 1e9); fire(); });
  inputs.dtype.addEventListener('change', () => inputs.model.dispatchEvent(new Event('change')));
  for (const k of ['layers', 'kv_heads', 'head_dim', 'gpu_gb', 'gpus', 'gpu_mem_utilization', 'weight_gb', 'context_len']) {
    inputs[k].addEventListener('change', () => {
      if (['layers', 'kv_heads', 'head_dim', 'weight_gb'].includes(k)) inputs.model.value = 'custom';
      if (k === 'gpu_gb') inputs.gpu.value = 'custom';
      fire();
    });
  }
  /** The protocol params: explicit numbers (they win over presets in the engine). */
  function params() {
    const n = (k) => { const t = inputs[k].value.trim(); const v = Number(t); return t === '' || !Number.isFinite(v) ? t : v; };
    const p = {
      layers: n('layers'), kv_heads: n('kv_heads'), head_dim: n('head_dim'), dtype: inputs.dtype.value,
      gpus: n('gpus'), gpu_mem_utilization: n('gpu_mem_utilization'), context_len: n('context_len'),
    };
    const gb = n('gpu_gb'), wg = n('weight_gb');
    p.gpu_bytes = typeof gb === 'number' ? Math.round(gb * 1e9) : gb;
    p.weight_bytes = typeof wg === 'number' ? Math.round(wg * 1e9) : wg;
    return p;
  }
  return { params, inputs };
}

export function renderKV(container, res, onUse) {
  const kib = res.bytes_per_token / 1024;
  const btn = el('button', { type: 'button', id: 'btn-kv-use', text: `Use ${fmt(res.tokens)} tokens as the vLLM KV budget` });
  btn.addEventListener('click', () => onUse(res.tokens));
  btn.disabled = !res.fits || !(res.tokens >= 1);
  container.replaceChildren(
    el('p', {}, el('span', { class: 'kv-big', 'data-stat': 'kv.bytes_per_token', 'data-value': String(res.bytes_per_token), text: `${fmt(kib)} KiB` }), document.createTextNode(' of KV cache per token')),
    res.fits
      ? el('p', {}, el('span', { class: 'kv-big', 'data-stat': 'kv.tokens', 'data-value': String(res.tokens), text: fmt(res.tokens) }),
        document.createTextNode(' tokens fit → '),
        el('span', { class: 'kv-big', 'data-stat': 'kv.sequences', 'data-value': String(res.sequences), text: fmt(res.sequences) }),
        document.createTextNode(` concurrent ${fmt(res.context_len)}-token sequences. That is your real max batch.`))
      : el('p', { class: 'error', text: 'The weights alone do not fit in this memory: no room for a KV cache.' }),
    btn,
  );
}

// ------------------------------------------------------------------ self-check
/** Accepts the check result in a few shapes: {checks: [{name, ok, detail}]}, or a list. */
export function renderCheck(summary, list, res) {
  const checks = Array.isArray(res) ? res : res.checks || res.results || [];
  const ok = (c) => c.ok ?? c.passed ?? c.pass ?? false;
  const passed = res.passed ?? checks.filter(ok).length;
  const total = res.total ?? checks.length;
  summary.textContent = `${passed} of ${total} passed`;
  summary.dataset.passed = String(passed);
  summary.dataset.total = String(total);
  summary.className = `check-summary ${passed === total && total > 0 ? 'pass' : 'fail'}`;
  list.replaceChildren(...checks.map((c) => el('li', { class: ok(c) ? 'pass' : 'fail', text: `${ok(c) ? '✓' : '✗'} ${c.name || c.id || ''}${c.detail && !ok(c) ? ` — ${c.detail}` : ''}` })));
}
