// The policy lab (figures.lab, SPEC §10): the reader's own scheduler in Python, in a real editor,
// run beside the built-in ones. Opening it sets scheduler = custom, so the lab's lane joins the
// timelines, the cards (custom.<metric>), the sweeps and the link; its runs go to the lab's own
// engine (engine/lab.js). A challenge puts a lecturer's fixed trace and SLO beside: the built-in
// policies' scores (the shared engine) and the reader's (the lab's engine).

import { LAB_SCHEDULER } from '../engine/lab.js';
import { latest } from '../engine/latest.js';
import { createEditor } from './editor.js';
import { toBase64url, LINK_TEXT_MAX } from '../state/url.js';
import { schedulerLabel } from '../state/context.js';
import { getPath } from '../state/schema.js';
import { fmtPct, fmtTime, fmtTimeColumn } from '../draw/format.js';
import { $, el } from './dom.js';

const LINE = /^custom\.code line (\d+):/;
// a challenge's metric as its column says it (the cards' words)
const METRIC_LABELS = { 'ttft.p95': 'TTFT p95', slo_attainment: 'within the SLO' };

/**
 * ctx: {source, page (state/context.js), values: () => the page's values, view: () => the view,
 *       onValues(patch): set fields and run, onView(patch): set the view and write the URL}.
 * Returns {sync()}: call after every change of values or view.
 */
export function createLab(ctx) {
  const { source, page } = ctx;
  const fig = page.schema.figures.lab;
  const schedField = page.schema.fields.find((f) => f.path === 'scheduler');
  const label = (s) => schedulerLabel(page.schema.schedulers, s);
  const scores = latest();
  let editor = null, loading = null, examples = null, shownCode = null, scoredKey = null;

  const open = () => ctx.values().scheduler === LAB_SCHEDULER;
  const code = () => ctx.values()[fig.code] || '';
  const challenge = () => fig.challenges.find((c) => c.name === ctx.view().challenge) || null;

  function loadExamples() {
    examples ??= source.call('examples', {}).then((list) => {
      $('lab-example').replaceChildren(el('option', { value: '', text: 'an example…' }),
        ...list.map((e) => el('option', { value: e.name, text: `${e.name}: ${e.summary}` })));
      return list;
    });
    return examples;
  }

  async function ensureEditor() {
    loading ??= createEditor($('lab-editor'), { doc: code(), onRun: run, label: 'Your policy (Python)' })
      .then((ed) => { editor = ed; shownCode = code(); $('lab-editor').dataset.ready = '1'; return ed; });
    return loading;
  }

  function run() {
    if (!editor) return;
    shownCode = editor.text();
    ctx.onValues({ scheduler: LAB_SCHEDULER, [fig.code]: shownCode, [fig.name]: $('lab-name').value.trim() || 'my-policy' });
  }

  async function openLab() {
    const list = await loadExamples();
    const start = code() || list.find((e) => e.name === fig.example)?.code || '';
    ctx.onValues({ scheduler: LAB_SCHEDULER, [fig.code]: start, [fig.name]: ctx.values()[fig.name] || fig.example });
  }

  async function pickExample() {
    const ex = (await loadExamples()).find((e) => e.name === $('lab-example').value);
    if (!ex) return;
    await ensureEditor();
    editor.setText(ex.code);
    $('lab-name').value = ex.name;
    run();
  }

  function showError(detail) {
    if (detail?.type === 'Cancelled') return;
    const mine = !!detail && (detail.field?.startsWith('custom') || detail.field === 'scheduler');
    $('lab-error').textContent = mine ? detail.message : '';
    const m = mine ? LINE.exec(detail.message || '') : null;
    if (editor) { if (m) editor.markError(Number(m[1]), detail.message); else editor.clearError(); }
  }

  // ---------------------------------------------------------------- scores
  const metricText = (c, v, unit) => (c.format === 'share' ? fmtPct(v) : fmtTime(v, unit));

  /** A table: one row per policy, the challenge's metric (or TTFT p95) and the share within the SLO
   *  (once: a challenge on that share has no second column of it). */
  function renderScores(c, rows, unit) {
    const metric = c?.metric || 'ttft.p95';
    const share = metric === 'slo_attainment';
    const times = fmtTimeColumn(rows.map(([, m]) => getPath(m, metric)), unit);
    const head = el('tr', {}, el('th', { text: 'policy' }), el('th', { text: METRIC_LABELS[metric] || metric }),
      share ? null : el('th', { text: 'within the SLO' }));
    const body = rows.map(([s, m]) => el('tr', { class: s === LAB_SCHEDULER ? 'lab-yours' : '' },
      el('td', { text: s === LAB_SCHEDULER ? `${label(s)}: ${$('lab-name').value.trim() || 'my-policy'}` : label(s) }),
      el('td', { 'data-lab-metric': `${s}.${metric}`, 'data-value': String(getPath(m, metric)), text: share ? fmtPct(getPath(m, metric)) : times(getPath(m, metric)) }),
      share ? null : el('td', { 'data-lab-metric': `${s}.slo_attainment`, 'data-value': String(m.slo_attainment), text: fmtPct(m.slo_attainment) })));
    $('lab-scores').replaceChildren(el('table', {}, el('thead', {}, head), el('tbody', {}, ...body)));
  }

  function verdict(c, theirs, yours, unit) {
    const a = getPath(yours, c.metric), b = getPath(theirs, c.metric);
    const wins = c.better === 'lower' ? a < b : a > b;
    const words = `${metricText(c, a, unit)} against ${label(c.beat)}'s ${metricText(c, b, unit)}`;
    $('lab-verdict').dataset.verdict = wins ? 'beats' : 'not-yet';
    $('lab-verdict').textContent = wins ? `You beat ${label(c.beat)}: ${words}.` : `Not yet: ${words}.`;
  }

  async function score() {
    const c = challenge();
    const key = c ? `${c.name}|${code()}` : null;
    if (!c || !open()) { scoredKey = null; $('lab-challenge-text').textContent = ''; $('lab-verdict').textContent = ''; return; }
    if (key === scoredKey) return;
    scoredKey = key;
    const token = scores.start();
    $('lab-challenge-text').textContent = c.text;
    $('lab-verdict').textContent = 'scoring…';
    delete $('lab-verdict').dataset.verdict;
    try {
      const built = await source.call('compare', { scenario: c.scenario, schedulers: c.rivals }, { signal: token.signal });
      const mine = { ...c.scenario, scheduler: LAB_SCHEDULER, custom: { name: $('lab-name').value || 'my-policy', code: code() } };
      const yours = await source.call('compare', { scenario: mine, schedulers: [LAB_SCHEDULER] }, { signal: token.signal });
      if (token.stale) return;
      const unit = yours[LAB_SCHEDULER].unit;
      renderScores(c, [...c.rivals.map((s) => [s, built[s].metrics]), [LAB_SCHEDULER, yours[LAB_SCHEDULER].metrics]], unit);
      verdict(c, built[c.beat].metrics, yours[LAB_SCHEDULER].metrics, unit);
    } catch (e) {
      if (token.stale) return;
      scoredKey = null;
      $('lab-verdict').textContent = `Not scored: ${e.detail?.message || e.message}`;
    }
  }

  // ---------------------------------------------------------------- wiring
  source.lab.onAnswer(({ method, params, error, result }) => {
    if (method !== 'compare' || params.scenario?.scheduler !== LAB_SCHEDULER) return;
    showError(error);
    // the main comparison (not a challenge's run): its lanes' scores in the lab
    if (!error && !challenge() && params.schedulers.length > 1) {
      renderScores(null, params.schedulers.filter((s) => result[s]).map((s) => [s, result[s].metrics]), result[LAB_SCHEDULER]?.unit);
    }
  });
  $('lab-open').addEventListener('click', openLab);
  $('lab-close').addEventListener('click', () => ctx.onValues({ scheduler: schedField.default }));
  $('lab-run').addEventListener('click', run);
  $('lab-example').addEventListener('change', pickExample);
  $('lab-download').addEventListener('click', () => {
    const a = el('a', { href: URL.createObjectURL(new Blob([editor?.text() ?? code()], { type: 'text/x-python' })), download: `${$('lab-name').value || 'my-policy'}.py` });
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 0);
  });
  const pick = $('lab-challenge');
  pick.replaceChildren(el('option', { value: '', text: 'none: your scenario' }), ...fig.challenges.map((c) => el('option', { value: c.name, text: c.title })));
  pick.addEventListener('change', () => { ctx.onView({ challenge: pick.value || null }); sync(); });

  let started = false;     // a link that names the lab (scheduler=custom) but no code: FCFS, once
  function sync() {
    const on = open();
    $('lab-closed').hidden = on;
    $('lab-body').hidden = !on;
    $('fig-lab').classList.toggle('lab-on', on);
    pick.value = challenge()?.name || '';
    if (!on) return;
    // a hand-written link (`?scheduler=custom&challenge=ttft_p95`, `?embed=lab&scheduler=custom`)
    // opens on the example to start from, as the opener does, not on an empty editor refused
    if (!started && !code()) { started = true; openLab(); return; }
    started = true;
    loadExamples();
    const name = ctx.values()[fig.name];
    if (name && document.activeElement !== $('lab-name')) $('lab-name').value = name;
    const long = toBase64url(code()).length > LINK_TEXT_MAX;
    $('lab-note').textContent = long ? 'This code is too long for a link: it travels in the exports (Download .py, or Download JSON under Share and export).' : '';
    ensureEditor().then(() => {
      if (code() !== shownCode) { editor.setText(code()); shownCode = code(); }   // a link or a preset, not typing
      score();
    });
  }

  return { sync };
}
