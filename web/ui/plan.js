// The planner figure (figures.plan; app/plan.py, `python -m py_engine plan`): a GPU budget, every
// candidate (colocated replicas × TP, or prefill : decode replicas with a TP each) simulated one
// at a time through the side work (engine/requests.js planRequests: plan_candidates, a
// plan_point per candidate, plan_verdict), so progress shows and Cancel stops it between
// candidates; then the engine's ranking by goodput per GPU, meets-SLO marks, the recommendation
// and its reason in words, and a button per candidate that sets it in the scenario.
// Hooks: data-metric "plan.<rank>.goodput_per_gpu" / ".meets_slo" / ".slo_attainment" /
// ".ttft_p95" / ".tpot_p95" (the p95s every other figure shows),
// the engine's reason in #plan-reason-text; each row's data-candidate is the candidate as JSON.

import { el, $ } from './dom.js';
import { fmt, fmtPctColumn, fmtTimeColumn, maxOf } from '../draw/format.js';
import { canonical } from '../engine/requests.js';

const WAITING = 'computing… (the engine answers as soon as it has loaded)';

/** A candidate in words: "4 × TP 2" or "2 prefill (TP 1) : 6 decode (TP 1)". */
export function candidateWords(c) {
  if (c.kind === 'colocated') return `${c.replicas} × TP ${c.tp}`;
  return `${c.prefill.replicas} prefill (TP ${c.prefill.tp}) : ${c.decode.replicas} decode (TP ${c.decode.tp})`;
}

/** Goodput per GPU with three decimals down the column, as the reason says it ("0.620", not "0.62"
 *  under "0.621"). */
const gpg = (x) => (x == null ? '–' : x.toFixed(3));

/** The candidate's own keys (what plan_point takes), without its row's numbers. */
function candidateOf(row) {
  return row.kind === 'colocated' ? { kind: row.kind, replicas: row.replicas, tp: row.tp }
    : { kind: row.kind, prefill: row.prefill, decode: row.decode };
}

/**
 * ctx: {source, schema, fields, onApply(patch), start() (the side work again), cancel() (the side
 * work's), values() (the current values), embedded() (is this the embedded figure), view() (the
 * page's view: the link's gpus and capacity), onView(patch) (the budget or the box changed)}.
 * Returns {active(), gpus(), capacity(), run(token, reqs), exported(), cancelled()}.
 */
export function createPlanner(ctx) {
  const { source, schema } = ctx;
  const fig = schema.figures.plan;
  const pools = schema.figures.fleet.pools;
  const replicasPath = schema.figures.fleet.replicas;
  let on = false;              // asked for (the Plan button, or the embed): it follows every change
  let doneKey = null;          // the plan shown is the answer to these requests
  let shown = null;            // ... {request, result}: its candidates' request and the engine's verdict
  // the budget and the capacity box come from the link (gpus=, capacity=1) and go back to it
  let budget = ctx.view?.().gpus ?? fig.gpus;
  let atCapacity = !!ctx.view?.().capacity;  // rank at each candidate's capacity (plan --capacity), not at the scenario's load
  const input = $('plan-gpus');
  input.value = String(budget);
  $('plan-capacity').checked = atCapacity;

  function status(text, bad = false) {
    const s = $('plan-status');
    s.textContent = text || '';
    s.hidden = !text;
    s.classList.toggle('bad', bad);
    fitEmbedded();                 // the line above the table came or went
  }

  function progress(done, total) {
    $('plan-progress').value = total ? done / total : 1;
    $('plan-run-status').textContent = done < total ? `${done} of ${total} candidates` : '';
    $('plan-cancel').hidden = done >= total;
    // no empty bar when nothing runs; its line stays (an embed keeps its height: no jump)
    $('plan-bar').classList.toggle('idle', done >= total);
  }

  /** The budget typed: an integer from 1 to max_gpus, else a message beside it. */
  function readBudget() {
    const raw = input.value.trim();
    const n = Number(raw);
    const ok = /^\d+$/.test(raw) && n >= 1 && n <= fig.max_gpus;
    $('plan-gpus-err').textContent = ok ? '' : `gpus = ${raw.slice(0, 20) || '(empty)'}: must be an integer from 1 to ${fig.max_gpus}`;
    input.setAttribute('aria-invalid', ok ? 'false' : 'true');
    if (ok && n !== budget) { budget = n; ctx.onView?.({ gpus: n }); }
    return ok;
  }
  const go = () => { if (readBudget()) { on = true; doneKey = null; ctx.start(); } };
  $('plan-run').addEventListener('click', go);
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); go(); } });
  $('plan-cancel').addEventListener('click', () => ctx.cancel());
  $('plan-capacity').addEventListener('change', (e) => { atCapacity = e.target.checked; ctx.onView?.({ capacity: atCapacity }); if (on) go(); });
  $('plan-roofline').addEventListener('click', () => ctx.onApply({ [fig.cost]: fig.open_cost }));

  async function run(token, reqs) {
    if (!on && ctx.embedded()) on = true;
    if (!on || token.stale) return;
    $('plan-roofline').hidden = true;
    const key = `${canonical(reqs.candidates)}|${atCapacity}`;
    if (key === doneKey) { mark(); return; }
    if (!source.live) { status(WAITING); return; }
    $('fig-plan').classList.add('stale');
    shown = null;
    const deployed = ctx.values();   // the deployment planned (a plan needs a roofline one: model × GPU)
    $('plan-what').textContent = `${budget} GPUs (${deployed[`${fig.cost}.gpu`]}) for ${deployed[`${fig.cost}.model`]}${atCapacity ? ', at capacity' : ''}`;
    let cands;
    try {
      cands = (await source.call(reqs.candidates.method, reqs.candidates.params, { signal: token.signal })).candidates;
    } catch (err) {
      if (token.stale) return;
      refused(err.detail || { message: err.message });
      return;
    }
    if (token.stale) return;
    const rows = [];
    status(atCapacity ? `searching each of ${cands.length} candidates' highest load within the SLO…` : `simulating ${cands.length} candidates on the same trace…`);
    progress(0, cands.length);
    for (const c of cands) {
      const req = reqs.point(c);
      let row;
      try {
        row = await source.call(req.method, req.params, { signal: token.signal });
      } catch (err) {
        if (token.stale) return;
        status(`Not planned: ${candidateWords(c)}: ${err.detail?.message || err.message}`, true);
        progress(0, 0);
        return;
      }
      if (token.stale) return;
      rows.push(row);
      progress(rows.length, cands.length);
      render({ candidates: rows }, false);
      await new Promise((r) => setTimeout(r, 0));   // the page stays responsive between candidates
    }
    const v = reqs.verdict(rows);
    try {
      const doc = await source.call(v.method, v.params, { signal: token.signal });
      if (token.stale) return;
      render(doc, true);
      doneKey = key;
      shown = { request: reqs.candidates, result: doc };
      status('');
      $('fig-plan').classList.remove('stale');
    } catch (err) {
      if (!token.stale) status(`Not planned: ${err.detail?.message || err.message}`, true);
    }
  }

  /** The engine refused the plan: beside the budget, or with the way to a roofline deployment
   *  (in the page's words: the engine's name the command line's flags, --model and --gpu). */
  function refused(d) {
    progress(0, 0);
    $('plan-table').replaceChildren();
    $('plan-reason').replaceChildren();
    $('plan-what').textContent = 'a GPU budget';   // nothing planned: no deployment claimed
    if (d.field === 'gpus') { $('plan-gpus-err').textContent = d.message; status(''); return; }
    if (d.field !== fig.cost) {
      status(atCapacity ? `At capacity: ${d.message} (or rank at the scenario's load: clear "at capacity")` : d.message, true);
      return;
    }
    const label = (path) => schema.fields.find((f) => f.path === path)?.label || path;
    const cost = label(fig.cost);
    const how = `set ${cost} to ${fig.open_cost} and choose its ${label(`${fig.cost}.model`)} and ${label(`${fig.cost}.gpu`)}`;
    // an embed has neither the controls nor the button (it shows a scenario): the explorer has them
    status(`${cost} is ${d.value}: a plan is about real GPUs, so it needs a roofline deployment. `
      + (ctx.embedded() ? `Open the explorer (the link below) and ${how}.`
        : `${how[0].toUpperCase()}${how.slice(1)}, or press "${$('plan-roofline').textContent}".`), true);
    $('plan-roofline').hidden = !!ctx.embedded();
  }

  /** The candidates' table: as they come (candidate order), then ranked (`ranked`, the engine's). */
  function render(doc, ranked) {
    const rows = doc.candidates;
    const most = maxOf(rows.map((r) => r.goodput_per_gpu), 0);
    const best = ranked ? canonical(candidateOf(doc.recommended)) : null;
    const searched = rows.some((r) => 'capacity_rps' in r);    // at capacity: the load found, in req/s
    const ttft = fmtTimeColumn(rows.map((r) => r.ttft_p95)), tpot = fmtTimeColumn(rows.map((r) => r.tpot_p95));   // a unit a column
    const within = fmtPctColumn(rows.map((r) => r.slo_attainment));    // and its decimals
    const head = el('tr', {}, ...['#', 'candidate', 'GPUs', 'goodput / GPU', searched ? 'at req/s' : null, 'within SLO', 'meets', 'TTFT p95', 'TPOT p95', '']
      .filter((t) => t !== null).map((t, i, all) => el('th', { class: i >= all.length - 3 && i < all.length - 1 ? 'opt' : null, text: t })));
    const body = rows.map((r, i) => {
      const key = canonical(candidateOf(r));
      const rank = ranked ? String(i + 1) : null;
      const hook = (name, value, text, cls) => el('td', { class: cls || null, ...(rank ? { 'data-metric': `plan.${rank}.${name}`, 'data-value': value == null ? '' : String(value) } : {}), text });
      const bar = el('i', { class: 'fleet-bar' });
      bar.style.width = `${most ? (100 * r.goodput_per_gpu) / most : 0}%`;
      const gp = el('td', { class: 'with-bar' }, el('div', { class: 'barred' }, el('span', { class: 'track', 'aria-hidden': 'true' }, bar),
        el('span', rank ? { 'data-metric': `plan.${rank}.goodput_per_gpu`, 'data-value': String(r.goodput_per_gpu), text: gpg(r.goodput_per_gpu) } : { text: gpg(r.goodput_per_gpu) })));
      const apply = el('button', { type: 'button', class: 'plan-apply', title: 'set this in the scenario', text: 'Apply' });
      apply.addEventListener('click', () => ctx.onApply(patchOf(r)));
      return el('tr', { 'data-candidate': key, class: [key === best ? 'recommended' : '', r.meets_slo ? 'meets' : 'fails'].join(' ').trim() },
        el('td', { text: rank || '…' }), el('th', { text: `${r.kind === 'colocated' ? 'colocated' : 'P/D'} ${candidateWords(r)}` }),
        el('td', { text: fmt(r.gpus) }), gp, searched ? hook('capacity_rps', r.capacity_rps, fmt(r.capacity_rps)) : null,
        hook('slo_attainment', r.slo_attainment, within(r.slo_attainment)),
        hook('meets_slo', r.meets_slo, r.meets_slo ? '✓' : '✗', r.meets_slo ? 'good' : 'bad'),
        hook('ttft_p95', r.ttft_p95, ttft(r.ttft_p95), 'opt'), hook('tpot_p95', r.tpot_p95, tpot(r.tpot_p95), 'opt'), el('td', {}, apply));
    });
    $('plan-table').replaceChildren(el('table', { class: 'plan-candidates' }, el('thead', {}, head), el('tbody', {}, ...body)));
    if (ranked) {
      $('plan-reason').replaceChildren(el('b', { text: 'Recommended: ' }), el('span', { id: 'plan-reason-text', text: doc.reason }));
    } else {
      $('plan-reason').replaceChildren();
    }
    mark();
    fitEmbedded();
  }

  /** In an embed the table scrolls within the height the snippet reserves: it takes the room
   *  left under it, in whole rows (the stylesheet's height, set for a four-line reason, cut a
   *  row in half above a blank when the reason was shorter). Never smaller than the stylesheet's. */
  function fitEmbedded() {
    if (!ctx.embedded()) return;
    const box = $('plan-table'), bar = document.querySelector('.embed-bar');
    if (!bar) return;
    box.style.maxHeight = '';                      // the stylesheet's, to measure from
    const row = box.querySelector('tbody tr');
    if (!row || box.scrollHeight <= box.clientHeight) return;
    const spare = bar.getBoundingClientRect().top - box.closest('main').getBoundingClientRect().bottom;
    if (spare < 0) return;                         // taller than reserved (a narrow frame): as is
    const head = box.querySelector('thead').getBoundingClientRect().height;
    const rowH = row.getBoundingClientRect().height;
    const rows = Math.floor((box.clientHeight + spare - head) / rowH);
    box.style.maxHeight = `${Math.ceil(head + Math.max(rows, 1) * rowH)}px`;
  }
  window.addEventListener('resize', fitEmbedded);

  /** The values a candidate sets (as the planner's own scenario_of does). */
  function patchOf(r) {
    if (r.kind === 'colocated') {
      return { [replicasPath]: r.replicas, [fig.tp]: r.tp, [pools.prefill]: 0, [pools.decode]: 0,
        [pools.prefill_server]: null, [pools.decode_server]: null };
    }
    return { [replicasPath]: 1, [pools.prefill]: r.prefill.replicas, [pools.decode]: r.decode.replicas,
      [pools.prefill_server]: { cost: { tp: r.prefill.tp } }, [pools.decode_server]: { cost: { tp: r.decode.tp } } };
  }

  /** The row the scenario is set to now, marked. */
  function mark() {
    const v = ctx.values();
    const tpOf = (over) => over?.cost?.tp ?? v[fig.tp];
    const now = v[pools.prefill] > 0
      ? { kind: 'disaggregated', prefill: { replicas: v[pools.prefill], tp: tpOf(v[pools.prefill_server]) },
        decode: { replicas: v[pools.decode], tp: tpOf(v[pools.decode_server]) } }
      : { kind: 'colocated', replicas: v[replicasPath], tp: v[fig.tp] };
    const key = canonical(now);
    for (const tr of $('plan-table').querySelectorAll('tr[data-candidate]')) tr.classList.toggle('current', tr.dataset.candidate === key);
  }

  return {
    active: () => on || ctx.embedded(),
    gpus: () => budget,
    capacity: () => atCapacity,
    run,
    /** The plan shown, for Download JSON: {request (its candidates' request: the scenario, the
     *  budget), result (the engine's ranking, as `plan --json`)}, or null while none is. */
    exported: () => shown,
    /** The side work was cancelled: the candidates not run yet stay out. */
    cancelled() {
      if ($('plan-cancel').hidden) return;
      $('plan-run-status').textContent = 'cancelled';
      $('plan-cancel').hidden = true;
      $('plan-bar').classList.remove('idle');
      status('Cancelled: Plan runs it again.');
    },
  };
}
