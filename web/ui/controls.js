// Controls for every scenario field, built from the engine's schema, plus a checkbox per optional
// scheduler lane. Text boxes accept anything; a value that does not parse or is out of range gets
// a message beside the control naming the field and its allowed range, and the page keeps showing
// the last good result. Controls are identified by the field's URL name (id="ctl-<url>").

import { parseField, isVisible, groupTitle, valueText, hintOf } from '../state/schema.js';
import { sliderScale } from '../state/slider.js';
import { el } from './dom.js';

const COMMIT_MS = 250;   // typing pauses this long before a value is used (Enter: at once)

const display = valueText;

/** The thumb at a value (a log slider: the nearest stop, and the value itself read out). */
function setSlider(slider, scale, value) {
  slider.value = String(scale.toPos(value));
  if (scale.log) slider.setAttribute('aria-valuetext', String(value));
}

/** A label's text with its vLLM flag name, "(gpu_memory_utilization)", kept whole on a line of its
 *  own where it fits (an inline block), else broken after its underscores: not mid-word. */
export function labelNodes(text) {
  const m = /^(.*?)(\([a-z0-9]+(?:_[a-z0-9]+)+\))(.*)$/.exec(text);
  if (!m) return [document.createTextNode(text)];
  const parts = m[2].split(/(?<=_)/).flatMap((part, i) => (i ? [el('wbr'), document.createTextNode(part)] : [document.createTextNode(part)]));
  return [document.createTextNode(m[1]), el('span', { class: 'flag-name' }, ...parts), document.createTextNode(m[3])];
}

export function buildControls(container, schedList, laneBox, schema, fields, { onValue, onLane }) {
  container.replaceChildren();
  // path -> {f, row, input, slider, err, source, refused}; refused: {message, source} the engine
  // gave for the value in effect (it stays refused until a run succeeds or the values are replaced)
  const rows = new Map();
  let inEffect = {};               // the values last set (setValues), i.e. last sent to the engine,
                                   // refused ones included (the page's own object, not a copy)
  const groups = new Map();
  for (const f of fields) {
    if (!f.control) continue;        // set by a figure of its own (the policy lab)
    if (!groups.has(f.group)) {
      const fs = el('fieldset', { class: `group-${f.group}` }, el('legend', { text: groupTitle(schema, f.group) }));
      groups.set(f.group, fs);
      container.append(fs);
    }
    const id = `ctl-${f.url}`;
    const row = el('div', { class: 'field', 'data-field': f.url });
    const showUnit = f.unit && !['choice', 'cost', 'bool'].includes(f.type) && !['requests', 'sequences', 'replicas'].includes(f.unit);
    row.append(el('label', { for: id, title: f.description }, ...labelNodes(f.label),
      showUnit ? el('span', { class: 'unit', text: ` ${f.unit}` }) : null));
    let input;
    if (f.type === 'choice' || f.type === 'cost') {
      input = el('select', { id, name: f.url, 'aria-describedby': `${id}-err ${id}-hint` });
      for (const c of f.choices || []) input.append(el('option', { value: c, text: c }));
    } else if (f.type === 'bool') {
      input = el('input', { id, name: f.url, type: 'checkbox', 'aria-describedby': `${id}-err ${id}-hint` });
      row.classList.add('field-bool');
    } else {
      input = el('input', {
        id, name: f.url, type: 'text', inputmode: { float: 'decimal', int: 'numeric' }[f.type] || 'text',
        autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-err ${id}-hint`,
        placeholder: f.nullable ? f.empty : null,   // what empty means: unlimited, fitted
      });
    }
    row.append(input);
    let slider = null;
    const scale = f.slider ? sliderScale(f.slider) : null;
    if (scale) {
      const { min, max, step } = scale;
      slider = el('input', { type: 'range', min, max, step, 'aria-label': `${f.label} slider`, tabindex: '-1' });
      row.append(slider);
    }
    const hint = el('p', { class: 'hint', id: `${id}-hint`, text: f.hint || '' });
    row.append(hint);
    const err = el('p', { class: 'error', id: `${id}-err`, role: 'alert', 'data-error-for': f.url });
    row.append(err);
    groups.get(f.group).append(row);
    rows.set(f.path, { f, row, input, slider, scale, err, hint });

    let timer = null;
    const commit = (immediate) => {
      clearTimeout(timer);
      const r = parseField(f, input.type === 'checkbox' ? String(input.checked) : input.value);
      if ('error' in r) { setError(f.url, r.error); return; }
      // Back at the value in effect (Enter after the pause already sent it, or typed back): no new
      // run will answer, so the engine's message for it comes back; any other value clears it.
      const refused = r.value === inEffect[f.path] ? rows.get(f.path).refused : null;
      setError(f.url, refused?.message || '', refused?.source || 'client');
      if (slider && r.value != null) setSlider(slider, scale, r.value);
      const go = () => onValue(f.path, r.value);
      if (immediate) go(); else timer = setTimeout(go, COMMIT_MS);
    };
    if (input.tagName === 'SELECT' || input.type === 'checkbox') input.addEventListener('change', () => commit(true));
    else {
      input.addEventListener('input', () => commit(false));
      input.addEventListener('change', () => commit(true));
      input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); commit(true); } });
    }
    slider?.addEventListener('input', () => {
      input.value = String(scale.toValue(slider.value));
      commit(true);      // (sets the thumb's aria-valuetext: setSlider)
    });
  }

  // The compared schedulers, then one checkbox per scheduler a reader may add as a lane.
  schedList.replaceChildren(...schema.schedulers.filter((s) => s.base).map((s) =>
    el('span', {}, el('i', { class: `sched-dot sched-${s.name}`, 'aria-hidden': 'true' }), document.createTextNode(s.name))));
  laneBox.replaceChildren();
  const laneInputs = new Map();
  for (const s of schema.schedulers.filter((x) => !x.base && !x.lab)) {   // the lab opens its own lane
    const box = el('input', { type: 'checkbox', id: `ctl-${s.name}`, name: s.name });
    box.addEventListener('change', () => onLane(s.name, box.checked));
    laneInputs.set(s.name, box);
    laneBox.append(el('label', { class: 'check' }, box, document.createTextNode(` add ${s.label} (${s.summary})`)));
  }

  const byUrl = new Map([...rows.values()].map((r) => [r.f.url, r]));
  function setError(url, msg, source = 'client') {
    const r = byUrl.get(url);
    if (!r) return false;
    r.source = msg ? source : null;
    r.err.textContent = msg || '';
    r.row.classList.toggle('invalid', !!msg);
    r.input.setAttribute('aria-invalid', msg ? 'true' : 'false');
    if (msg) r.row.hidden = false;
    return true;
  }

  return {
    setValues(values, lanes) {
      inEffect = values;
      for (const r of rows.values()) {
        const { f, input, slider, scale, row, hint } = r;
        const rewritten = input.type === 'checkbox' || document.activeElement !== input || input.tagName === 'SELECT';
        if (input.type === 'checkbox') input.checked = values[f.path] === true;
        else if (rewritten) input.value = display(values[f.path]);
        // the box shows the value in effect again: a message about the text it held (typed, or
        // from the link) no longer describes it (the engine's, about the value in effect, stays)
        if (rewritten && r.source === 'client') setError(f.url, '');
        if (slider && values[f.path] != null) setSlider(slider, scale, values[f.path]);
        hint.textContent = hintOf(f, values);
        row.hidden = !isVisible(f, values, fields, lanes) && !row.classList.contains('invalid');
      }
      for (const [name, box] of laneInputs) box.checked = lanes.includes(name);
    },
    setError,
    clearErrors() { for (const r of rows.values()) { r.refused = null; setError(r.f.url, ''); } },
    /** A run of `source` ('engine': the main run; 'fleet': the fleet figure's, which alone runs
     *  the cluster's fields) was answered, or refused anew: the messages it gave for an earlier
     *  attempt no longer apply. */
    clearEngineErrors(source = 'engine') {
      for (const r of rows.values()) {
        if (r.refused?.source === source) r.refused = null;
        if (r.source === source) setError(r.f.url, '');
      }
    },
    /** Put an engine ScenarioError (of a run of `source`) beside the control its dotted field
     *  path belongs to; a message about a whole section ("workload") has no one control (returns
     *  false). */
    showEngineError(detail, source = 'engine') {
      const path = detail?.field || '';
      const match = fields.filter((f) => rows.has(f.path) && (path === f.path || path.startsWith(`${f.path}.`)))
        .sort((a, b) => b.path.length - a.path.length)[0];
      if (!match) return false;
      rows.get(match.path).refused = { message: detail.message, source };
      return setError(match.url, detail.message, source);
    },
  };
}
