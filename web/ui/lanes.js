// The timeline lanes: one canvas per scheduler on screen (plus the block view of the paged KV pool
// under a lane whose scheduler has one), their readouts, the hover / keyboard tooltip. Drawing is
// draw/timeline.js and draw/blocks.js; this module owns the DOM around them, the pointer and
// keyboard on them, and in lecture mode the height each lane gets so that all fit the screen.

import { draw, hitTest, segmentAt, indexSegments, laneGeometry, axisSpace, NORMAL_ROWS } from '../draw/timeline.js';
import { drawBlocks, blockHit, describeBlocks, blockViewHeight, blockLegend } from '../draw/blocks.js';
import { colorFor } from '../draw/canvas-kit.js';
import { fmt, fmtPct, fmtTime } from '../draw/format.js';
import { el } from './dom.js';
import { getPath } from '../state/schema.js';

const MIN_ROWS = 96;                        // px: fitting the screen never makes rows thinner (8 slots of 12 px)
const PHONE = '(max-width: 860px)';         // style.css's phone layout (the controls in a drawer)

/**
 * ctx: {container, tooltip, figure, schema, state: () => ({cmp, lanes, pass, lecture, compact}),
 *       onPick(pass)}. Returns {render(), frame(), passMax()}.
 */
export function createLanes(ctx) {
  const meta = Object.fromEntries(ctx.schema.schedulers.map((s) => [s.name, s]));
  const { rows: rowsPath, kv_budget: budgetPath } = ctx.schema.figures.timeline;
  // A lane gets the KV strip when the KV budget is one of its scheduler's knobs.
  const budgetField = ctx.schema.fields.find((f) => f.path === budgetPath);
  const hasKV = (s) => !!budgetField?.applies_to?.includes(s);
  const lanes = new Map();
  let hover = null;                  // {rid}: outlined in every lane, so its fate lines up
  let focus = null;                  // {s, slot}: keyboard inspection
  let fitted = { key: null, rowsPx: null };   // the rows' height per lane that fits the screen (fit)

  const slotsOf = (res) => getPath(res.scenario, rowsPath) ?? 1;

  function passMax() {
    const { cmp, lanes: names } = ctx.state();
    let m = 1;
    for (const s of names) if (cmp?.[s]) m = Math.max(m, cmp[s].metrics.passes);
    return m;
  }

  function laneView(s) {
    const st = ctx.state();
    const res = st.cmp[s];
    const pm = passMax();
    return { slots: slotsOf(res), passMax: pm, playhead: st.pass ?? pm, hoverId: hover?.rid ?? null,
      focus: focus?.s === s ? focus : null, lecture: st.lecture, compact: st.compact,
      rowsPx: fitted.rowsPx, kvBudget: getPath(res.scenario, budgetPath) ?? null, axis: hasAxis(s) };
  }

  /** Lecture mode draws the lanes' one pass axis under the last lane only: the rows get its room. */
  function hasAxis(s) {
    const names = ctx.state().lanes;
    return !ctx.state().lecture || s === names[names.length - 1];
  }

  /**
   * The comparison fits the screen. What the lanes' rows may use is the viewport's height less
   * everything else that stays on screen, shared equally: in lecture mode and on a desktop, from the
   * page's top (the header over the lanes) to the legend and player under them, so Play is above the
   * fold; on a phone from the figure's headline to the legend, above the bar (the reader scrolls to
   * the figure: headline and lanes on one screen); in an embed to its link out. Outside lecture mode
   * and embeds the rows only ever get shorter than their usual height (NORMAL_ROWS), down to
   * MIN_ROWS.
   */
  function fit() {
    const st = ctx.state();
    const phone = !st.lecture && !st.compact && matchMedia(PHONE).matches;
    // a phone's height changes as its address bar hides: fit to steps of it, not to every pixel
    const tall = phone ? Math.round(innerHeight / 80) : innerHeight;
    const key = `${st.lecture}|${st.compact}|${innerWidth}x${tall}|${ctx.container.dataset.lanes}`;
    if (fitted.key === key) return;
    fitted = { key, rowsPx: null };
    if (!lanes.size) return;
    const box = ctx.container.getBoundingClientRect();
    const fig = ctx.figure.getBoundingClientRect();
    const top = phone ? box.top - fig.top : box.top + (document.scrollingElement?.scrollTop || 0);
    // under the lanes: the legend and player (a phone: the legend; an embed: to its link out)
    const legend = ctx.figure.querySelector('.legend');
    const bar = st.compact ? document.querySelector('.embed-bar') : null;
    const below = phone ? (legend?.getBoundingClientRect().bottom ?? box.bottom) - box.bottom
      : st.compact ? ctx.figure.closest('main').getBoundingClientRect().bottom - box.bottom + (bar?.offsetHeight || 0)
        : fig.bottom - box.bottom;
    const reach = phone ? innerHeight - (document.querySelector('.phone-bar')?.offsetHeight || 0) : innerHeight;
    let fixed = 0;
    for (const lane of lanes.values()) {
      // the block view at the height it will be drawn, its legend and margins as they are now
      const kv = lane.kv && !lane.kv.hidden ? blockViewHeight({ lecture: st.lecture, compact: st.compact })
        + lane.kvView.getBoundingClientRect().height - lane.kv.offsetHeight + parseFloat(getComputedStyle(lane.kvView).marginTop) : 0;
      fixed += lane.head.offsetHeight + axisSpace({ axis: hasAxis(lane.s) }) + kv;
    }
    const gaps = parseFloat(getComputedStyle(ctx.container).rowGap) || 0;
    const avail = Math.floor((reach - top - below - fixed - gaps * (lanes.size - 1) - 12) / lanes.size);   // 12: rounding
    fitted.rowsPx = st.lecture || st.compact ? Math.max(st.compact ? 12 : 24, avail)
      : Math.min(NORMAL_ROWS, Math.max(MIN_ROWS, avail));
  }

  function ensure() {
    const want = `${ctx.state().lanes.join(',')}|${ctx.state().policyName}`;   // a lab lane is titled by its policy's name
    if (ctx.container.dataset.lanes === want) return;
    ctx.container.dataset.lanes = want;
    lanes.clear();
    const nodes = [];
    for (const s of ctx.state().lanes) {
      const { label, summary: builtIn, lab } = meta[s];
      const summary = lab ? `your own code: ${ctx.state().policyName || 'unnamed'}` : builtIn;
      const stats = el('div', { class: 'lane-stats' });
      const canvas = el('canvas', { class: 'timeline', tabindex: '0', role: 'img', 'data-lane': s,
        'aria-label': `${label} timeline: one row per slot, one column per forward pass. Arrow keys up and down inspect a slot at the playhead.` });
      const head = el('div', { class: 'lane-head' }, el('div', { class: 'lane-title' }, document.createTextNode(`${label} `), el('small', { text: `— ${summary}` })), stats);
      const lane = { s, title: label, canvas, stats, head, kv: null, kvView: null, kvLegend: null };
      const wrap = el('div', { class: 'lane', 'data-lane': s }, head, canvas);
      if (hasKV(s)) {   // the block view and its own legend (its marks are not the lanes')
        lane.kv = el('canvas', { class: 'blockview', role: 'img', tabindex: '-1', 'data-blocks': s,
          'aria-label': 'The paged KV pool over the run: each running request\'s blocks by slot, free blocks holding a cached prefix, preemptions and prefix-cache hits' });
        lane.kvLegend = el('div', { class: 'legend kv-legend', 'aria-label': 'Legend of the KV block view', 'data-legend': 'blocks' });
        lane.kvView = el('div', { class: 'kv-view' }, lane.kv, lane.kvLegend);
        wrap.append(lane.kvView);
      }
      wire(lane);
      lanes.set(s, lane);
      nodes.push(wrap);
    }
    ctx.container.replaceChildren(...nodes);
  }

  /** Once per result: lane rows, their readouts and accessible descriptions. */
  function render() {
    ensure();
    fitted.key = null;          // the header over the lanes may have changed height
    const { cmp } = ctx.state();
    for (const lane of lanes.values()) {
      const res = cmp[lane.s];
      if (!res) continue;
      const m = res.metrics;
      if (lane.kv) {
        lane.kv.hidden = lane.kvView.hidden = !res.kv_blocks;
        if (res.kv_blocks) {
          lane.kvLegend.replaceChildren(...blockLegend(res).map(({ key, text }) =>
            el('span', {}, el('i', { class: `key key-${key}`, 'aria-hidden': 'true' }), document.createTextNode(text))));
        }
      }
      lane.canvas.setAttribute('aria-label', `${lane.title} timeline: ${slotsOf(res)} slots, ${fmt(m.passes)} passes, `
        + `${fmtPct(m.utilization)} of slot-steps emit a token, ${fmtPct(m.shares.padding)} padding, ${fmtPct(m.shares.idle)} idle. `
        + 'Up and down arrows inspect a slot at the playhead.');
      // each stat on one line (a phone's narrow head wrapped "99.9 s" between the number and its unit)
      lane.stats.replaceChildren(el('span', { class: 'stat' }, el('b', { text: fmt(m.passes) }), document.createTextNode(' passes')),
        document.createTextNode(' · '), el('span', { class: 'stat' }, el('b', { text: fmtPct(m.utilization) }), document.createTextNode(' useful')),
        document.createTextNode(' · '), el('span', { class: 'stat' }, fmtTime(m.makespan, res.unit)),
        res.truncated?.segments ? el('span', { class: 'trunc', text: ' · drawing cut at the engine\'s segment cap' }) : '');
    }
  }

  /** Every frame (playhead, hover, resize): the canvases only. */
  function frame() {
    const { cmp } = ctx.state();
    if (!cmp) return;
    fit();
    for (const lane of lanes.values()) {
      const res = cmp[lane.s];
      if (!res) continue;
      const view = laneView(lane.s);
      draw(lane.canvas, res, view);
      if (lane.kv && res.kv_blocks) drawBlocks(lane.kv, res, view);
    }
  }

  function place(canvas, x, y) {
    const box = ctx.tooltip;
    box.hidden = false;
    const fig = ctx.figure.getBoundingClientRect();
    const c = canvas.getBoundingClientRect();
    let left = c.left - fig.left + x + 14;
    const top = c.top - fig.top + y + 14;
    if (left + box.offsetWidth > fig.width - 8) left = c.left - fig.left + x - box.offsetWidth - 14;
    box.style.left = `${Math.max(4, left)}px`;
    box.style.top = `${top}px`;
  }

  /** The block view's tooltip: the pool at the sample under the pointer, its holders. */
  function blockTip(lane, hit, x, y) {
    const box = ctx.tooltip;
    const d = hit && describeBlocks(ctx.state().cmp[lane.s], hit.pass, hit.rid);
    if (!d) { box.hidden = true; return; }
    const kids = [el('b', { text: `KV blocks · ${lane.title}` }), ...d.lines.map((l) => el('div', { text: l }))];
    const dl = el('dl');
    for (const [rid, slot, blocks] of d.holders) {
      const sw = el('i', { class: 'sw' });
      sw.style.background = colorFor(rid);
      dl.append(el('dt', {}, sw, document.createTextNode(`#${rid} (slot ${slot + 1})`)), el('dd', { text: `${fmt(blocks)} blocks` }));
    }
    if (d.more) dl.append(el('dt', { text: `+ ${fmt(d.more)} more` }), el('dd'));
    kids.push(dl);
    box.replaceChildren(...kids);
    place(lane.kv, x, y);
  }

  function tip(lane, hit, x, y) {
    const box = ctx.tooltip;
    if (!hit || (!hit.request && hit.phase !== 'padding')) { box.hidden = true; return; }
    const res = ctx.state().cmp[lane.s];
    const t = (v) => fmtTime(v, res.unit);
    const what = { prefill: 'prefill chunk', useful: 'emits a token', padding: hit.request ? 'padding: finished, slot held until its batch ends' : 'padding: empty row of a short batch', idle: 'idle' }[hit.phase] || hit.phase;
    const kids = [];
    if (hit.request) {
      const r = hit.request;
      const sw = el('i', { class: 'sw' });
      sw.style.background = colorFor(r.id);
      kids.push(el('b', {}, sw, document.createTextNode(`Request #${r.id} · ${lane.title}`)));
      kids.push(el('div', { text: `slot ${hit.slot + 1}, pass ${fmt(hit.pass)}: ${what}` }));
      const dl = el('dl');
      const row = (k, v) => dl.append(el('dt', { text: k }), el('dd', { text: v }));
      row('prompt / output', `${fmt(r.prompt)} / ${fmt(r.out)} tokens`);
      row('arrived', t(r.arrive));
      row('admitted', t(r.admit));
      row('first token', `${t(r.first_token)} (pass ${fmt(r.first_token_pass)})`);
      row('completed', `${t(r.done)} (pass ${fmt(r.done_pass)})`);
      row('TTFT', t(r.ttft));
      row('end to end', t(r.e2e));
      row('preemptions', fmt(r.preemptions));
      kids.push(dl);
    } else {
      kids.push(el('b', { text: `slot ${hit.slot + 1}, pass ${fmt(hit.pass)}` }), el('div', { text: what }));
    }
    box.replaceChildren(...kids);
    place(lane.canvas, x, y);
  }

  function focusTip() {
    if (!focus) return;
    const lane = lanes.get(focus.s);
    const res = ctx.state().cmp?.[focus.s];
    if (!lane || !res) return;
    const idx = indexSegments(res, slotsOf(res));
    const pass = Math.max(1, Math.min(idx.passes, ctx.state().pass ?? idx.passes));
    const hit = { slot: focus.slot, pass, ...segmentAt(idx, focus.slot, pass) };
    hover = hit.request ? { rid: hit.request.id } : null;
    const g = laneGeometry(lane.canvas.clientWidth, laneView(focus.s), idx.passes);
    tip(lane, hit, g.x(pass), (focus.slot + 1) * g.rowH);
  }

  function setHover(rid) {
    if ((hover?.rid ?? null) !== rid) { hover = rid == null ? null : { rid }; ctx.redraw(); }
  }

  function wire(lane) {
    const at = (e, c = lane.canvas) => { const r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    if (lane.kv) {
      lane.kv.addEventListener('mousemove', (e) => {
        const [x, y] = at(e, lane.kv);
        const hit = blockHit(lane.kv, ctx.state().cmp[lane.s], laneView(lane.s), x, y);
        setHover(hit?.rid ?? null);
        blockTip(lane, hit, x, y);
      });
      lane.kv.addEventListener('mouseleave', () => { ctx.tooltip.hidden = true; setHover(null); });
      lane.kv.addEventListener('click', (e) => {
        const hit = blockHit(lane.kv, ctx.state().cmp[lane.s], laneView(lane.s), ...at(e, lane.kv));
        if (hit) ctx.onPick(hit.pass);
      });
    }
    lane.canvas.addEventListener('mousemove', (e) => {
      const [x, y] = at(e);
      const hit = hitTest(lane.canvas, ctx.state().cmp[lane.s], laneView(lane.s), x, y);
      setHover(hit?.request ? hit.request.id : null);
      tip(lane, hit, x, y);
    });
    lane.canvas.addEventListener('mouseleave', () => { ctx.tooltip.hidden = true; setHover(null); });
    lane.canvas.addEventListener('click', (e) => {
      const hit = hitTest(lane.canvas, ctx.state().cmp[lane.s], laneView(lane.s), ...at(e));
      if (hit) ctx.onPick(hit.pass);
    });
    lane.canvas.addEventListener('focus', () => { focus = { s: lane.s, slot: focus?.s === lane.s ? focus.slot : 0 }; focusTip(); ctx.redraw(); });
    lane.canvas.addEventListener('blur', () => { focus = null; hover = null; ctx.tooltip.hidden = true; ctx.redraw(); });
    lane.canvas.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
      e.preventDefault();
      const slots = slotsOf(ctx.state().cmp[lane.s]);
      focus.slot = Math.max(0, Math.min(slots - 1, focus.slot + (e.key === 'ArrowUp' ? -1 : 1)));
      focusTip();
      ctx.redraw();
    });
  }

  return { render, frame, passMax, focusTip, canvases: () => [...lanes.values()],
    refit() { fitted.key = null; } };
}
