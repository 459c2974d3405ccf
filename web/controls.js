// Controls for every scenario field, built from the engine's schema. Text boxes accept anything;
// a value that does not parse or is out of range gets a message beside the control naming the
// field and its allowed range, and the page keeps showing the last good result.

import { parseField, fieldVisible, groupTitle } from './state.js';

// Sliders for the fields people play with; their range is a comfortable UI range, the text box
// beside them accepts the schema's full range.
const SLIDERS = {
  skew: { min: 0, max: 0.95, step: 0.05 },
  slots: { min: 1, max: 64, step: 1 },
  requests: { min: 1, max: 512, step: 1 },
  output_mean: { min: 1, max: 1000, step: 1 },
  chunk: { min: 16, max: 4096, step: 16 },
};

// One-line hints for the fields whose meaning is not obvious from the label (the schema's full
// description is the label's tooltip).
const HINTS = {
  skew: '0 = every request the same length; higher = long tail.',
  slots: 'Sequences that share one forward pass.',
  chunk: 'Prompt tokens a sequence prefills per pass.',
  arrival: 'burst = all at t = 0; poisson = random, at the rate below; gap = evenly spaced.',
  kv_tokens: 'Empty = unlimited.',
};

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids) if (kid) e.append(kid);
  return e;
}
export { el };

function display(v) { return v === null ? '' : String(v); }

export function buildControls(container, fields, { onValue }) {
  container.replaceChildren();
  const rows = new Map();
  const groups = new Map();
  for (const f of fields) {
    if (!groups.has(f.group)) {
      const fs = el('fieldset', { class: `group-${f.group}` }, el('legend', { text: groupTitle(f.group) }));
      groups.set(f.group, fs);
      container.append(fs);
    }
    const id = `ctl-${f.name}`;
    const row = el('div', { class: 'field', 'data-field': f.name });
    const showUnit = f.unit && f.type !== 'choice' && f.type !== 'cost' && !['requests', 'sequences'].includes(f.unit);
    const unit = showUnit ? el('span', { class: 'unit', text: ` ${f.unit}` }) : null;
    row.append(el('label', { for: id, title: f.description }, document.createTextNode(f.label), unit));
    let input;
    if (f.type === 'choice' || f.type === 'cost') {
      input = el('select', { id, name: f.name, 'aria-describedby': `${id}-err ${id}-hint` });
      for (const c of f.choices || []) input.append(el('option', { value: c, text: c }));
    } else {
      input = el('input', {
        id, name: f.name, type: 'text', inputmode: f.type === 'float' ? 'decimal' : 'numeric',
        autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-err ${id}-hint`,
        placeholder: f.type === 'int_or_null' ? 'unlimited' : null,
      });
    }
    row.append(input);
    let slider = null;
    if (SLIDERS[f.name]) {
      const s = SLIDERS[f.name];
      slider = el('input', { type: 'range', min: s.min, max: s.max, step: s.step, 'aria-label': `${f.label} slider`, tabindex: '-1' });
      row.append(slider);
    }
    row.append(el('p', { class: 'hint', id: `${id}-hint`, text: HINTS[f.name] || '' }));
    const err = el('p', { class: 'error', id: `${id}-err`, role: 'alert', 'data-error-for': f.name });
    row.append(err);
    groups.get(f.group).append(row);
    rows.set(f.name, { f, row, input, slider, err });

    let timer = null;
    const commit = (immediate) => {
      clearTimeout(timer);
      const r = parseField(f, input.value);
      if ('error' in r) { setError(f.name, r.error); return; }
      setError(f.name, '');
      if (slider && r.value != null) slider.value = String(r.value);
      const go = () => onValue(f.name, r.value);
      if (immediate) go(); else timer = setTimeout(go, 250);
    };
    if (input.tagName === 'SELECT') input.addEventListener('change', () => commit(true));
    else {
      input.addEventListener('input', () => commit(false));
      input.addEventListener('change', () => commit(true));
      input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); commit(true); } });
    }
    slider?.addEventListener('input', () => { input.value = slider.value; commit(true); });
  }

  function setError(name, msg, source = 'client') {
    const r = rows.get(name);
    if (!r) return false;
    r.source = msg ? source : null;
    r.err.textContent = msg || '';
    r.row.classList.toggle('invalid', !!msg);
    r.input.setAttribute('aria-invalid', msg ? 'true' : 'false');
    if (msg) r.row.hidden = false;
    return true;
  }

  return {
    rows,
    setValues(values, view) {
      for (const { f, input, slider, row } of rows.values()) {
        if (document.activeElement !== input || input.tagName === 'SELECT') input.value = display(values[f.name]);
        if (slider && values[f.name] != null) slider.value = String(values[f.name]);
        row.hidden = !fieldVisible(f, values, view) && !row.classList.contains('invalid');
      }
    },
    setError,
    clearErrors() { for (const name of rows.keys()) setError(name, ''); },
    /** After a successful run, messages the engine gave for an earlier attempt no longer apply. */
    clearEngineErrors() { for (const [name, r] of rows) if (r.source === 'engine') setError(name, ''); },
    /** Put an engine ScenarioError beside the control its dotted field path belongs to. */
    showEngineError(detail) {
      const path = detail?.field || '';
      // The field itself or the control that owns it (server.cost.fixed_ms → cost); a message about
      // a whole section ("workload") has no one control and goes to the form message.
      const match = fields.filter((f) => path === f.path || path.startsWith(`${f.path}.`))
        .sort((a, b) => b.path.length - a.path.length)[0];
      if (match && setError(match.name, detail.message, 'engine')) return match.name;
      return null;
    },
  };
}
