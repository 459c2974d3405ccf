// The papers figure (SPEC §11): published numbers of the field, each recomputed by the engine in
// this page (protocol method "papers", one check a call, in schema.figures.papers.checks' order).
// The summary is a tile per check (data-paper = its id, data-pass = the engine's verdict,
// data-source = "build" | "page": who computed it); a tile opens its detail: source, workload,
// published, ours, tolerance, and why when it fails. Until the page recomputes them it shows the
// native engine's answers from the build-time snapshot (engine/requests.js PAPERS), said so. It
// recomputes on the reader's click, or at once when it is the embedded figure, each check's answer
// replacing the build's as it comes.

import { $, el } from './dom.js';
import { PAPERS } from '../engine/requests.js';

const FIELDS = [['source', 'Source'], ['workload', 'Workload'], ['claim', 'Claim'], ['published', 'Published'],
  ['ours', 'Ours'], ['tolerance', 'Tolerance'], ['detail', 'How'], ['why', 'Why it fails']];

/** ctx: {source, schema}. Returns {begin(embed), run()}. */
export function createPapers({ source, schema }) {
  const fig = schema.figures.papers;
  const grid = $('papers-grid'), detail = $('papers-detail'), summary = $('papers-summary'), btn = $('papers-run');
  if (!fig || !grid) return { begin() {}, run() {} };
  const rows = {};
  const fresh = new Set();       // the checks computed in this page (the others: the build's)
  let selected = fig.checks[0];
  let running = false;

  // a tile's words: the paper's short name and the check's title (the schema has them before any
  // run; its id, the engine's, only where it does not)
  const name = (id, paper, title) => (paper ? [el('b', { text: paper.split(' (')[0] }), document.createTextNode(` ${title}`)] : [id]);
  const named = (id) => name(id, ...(fig.names?.[id] || []));
  const tiles = Object.fromEntries(fig.checks.map((id) => {
    const b = el('button', { type: 'button', class: 'paper-tile', 'data-paper': id, 'aria-pressed': 'false' },
      el('span', { class: 'paper-mark', 'aria-hidden': 'true', text: '·' }),
      el('span', { class: 'paper-name' }, ...named(id)));
    b.addEventListener('click', () => { selected = id; show(); });
    return [id, b];
  }));
  grid.replaceChildren(...Object.values(tiles));

  function show() {
    for (const [id, b] of Object.entries(tiles)) {
      const r = rows[id];
      b.setAttribute('aria-pressed', String(id === selected));
      if (!r) continue;
      b.dataset.pass = String(r.pass);
      b.dataset.source = fresh.has(id) ? 'page' : 'build';
      b.className = `paper-tile ${r.pass ? 'pass' : 'fail'}`;
      b.querySelector('.paper-mark').textContent = r.pass ? '✓' : '✗';
      b.querySelector('.paper-name').replaceChildren(...name(id, r.paper, r.title));
      b.title = `${r.paper}: ${r.claim}${fresh.has(id) ? '' : ' (the native engine, at build time)'}`;
    }
    const r = rows[selected];
    if (!r) {
      const [paper, title] = fig.names?.[selected] || [selected, ''];
      detail.replaceChildren(el('p', { class: 'muted', text: `${paper}${title ? `: ${title}` : ''}: ${running ? 'computing…' : 'not computed yet (Recompute in this page)'}` }));
      return;
    }
    detail.dataset.paper = r.id;
    detail.replaceChildren(
      el('h4', {}, el('span', { class: r.pass ? 'good' : 'bad', text: r.pass ? '✓ pass ' : '✗ fail ' }), document.createTextNode(`${r.paper}: ${r.title}`)),
      el('dl', {}, ...FIELDS.filter(([k]) => r[k]).flatMap(([k, label]) => [el('dt', { text: label }), el('dd', { class: `paper-${k}`, text: r[k] })])));
  }

  /** The summary: data-done counts the checks computed in this page, data-passed those that pass
   *  of every check shown (the build's until recomputed). */
  function tally() {
    const shown = Object.values(rows);
    const passed = shown.filter((r) => r.pass).length;
    const total = fig.checks.length;
    summary.dataset.total = String(total);
    summary.dataset.done = String(fresh.size);
    summary.dataset.passed = String(passed);
    summary.className = `check-summary ${shown.length < total ? '' : passed === shown.length ? 'pass' : 'fail'}`;
    if (!fresh.size) summary.textContent = `${passed} of ${shown.length} pass: the native engine's, at build time`;
    else if (fresh.size < total) summary.textContent = `${passed} of ${shown.length} pass (${fresh.size} of ${total} computed in this page…)`;
    else summary.textContent = `${passed} of ${total} pass, computed in this page`;
  }

  let stop = null;        // the running recompute's AbortController (its button cancels it)

  async function run() {
    if (running) return;
    running = true;
    stop = new AbortController();
    btn.textContent = 'Cancel';
    fresh.clear();       // the build's answers (if any) stay shown until each is recomputed
    summary.textContent = source.live ? 'computing in the page…' : 'waiting for the engine to load…';
    summary.className = 'check-summary';      // (no verdict's colour on words that are none)
    delete grid.dataset.done;
    try {
      await source.readyPromise;
      for (const id of fig.checks) {
        tiles[id].classList.add('busy');
        const [row] = await source.call('papers', { ids: [id] }, { signal: stop.signal });
        rows[id] = row;
        fresh.add(id);
        tally();
        show();
        await new Promise((r) => setTimeout(r, 0));   // the page stays responsive between checks
      }
      grid.dataset.done = 'true';
    } catch (err) {
      if (err.detail?.type === 'Cancelled') {
        for (const b of Object.values(tiles)) b.classList.remove('busy');
        summary.textContent = `cancelled: ${fresh.size} of ${fig.checks.length} computed in this page`;
        summary.className = 'check-summary';
      } else {
        summary.textContent = `could not run: ${err.detail?.message || err.message}`;
        summary.className = 'check-summary fail';
      }
    } finally {
      running = false;
      stop = null;
      btn.textContent = LABEL;
      show();
    }
  }

  // one button: it recomputes, and while that runs (about fig.seconds s) it cancels (SPEC 7)
  const LABEL = btn.textContent;
  btn.addEventListener('click', () => (running ? stop?.abort() : run()));
  summary.textContent = `${fig.checks.length} checks, about ${fig.seconds} s in the page`;
  show();

  /** The build-time snapshot's answers, while the page has computed none (a page whose engine
   *  is live already, or that has no snapshot, waits for Recompute). */
  async function built() {
    if (source.live || !source.hasSnapshot(PAPERS.method, PAPERS.params)) return;
    let all;
    try { all = await source.call(PAPERS.method, PAPERS.params); } catch { return; }
    if (running || fresh.size) return;
    for (const r of all) rows[r.id] = r;
    tally();
    show();
  }
  return { run, begin(embed) { built().then(() => { if (embed === 'papers') run(); }); } };
}
