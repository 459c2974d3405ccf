// The fleet figure's hover (ui/fleet.js wires it): what a tooltip says of a request (where it went
// and why) or of a replica at a time, as elements.

import { el } from './dom.js';
import { fmt, fmtTime } from '../draw/format.js';
import { fleetView, favoured, stateAt, slotsOf } from '../state/fleet.js';

/** Where request `id` went and why: its numbers (a P/D request's TTFT parts, `parts`: [name,
 *  label]), the router's reason and scores for it, a tie and how `router` (schema.routers) broke it. */
export function requestTip(res, id, router, parts) {
  const c = res.requests.columns;
  const k = c.replica[id];
  const reason = fleetView(res).reasons[id];
  const t = (x) => fmtTime(x, res.unit);
  const dl = el('dl');
  const row = (a, b) => dl.append(el('dt', { text: a }), el('dd', { text: b }));
  row('arrived', t(c.arrive[id]));
  row('prompt', `${fmt(c.prompt[id])} tokens, ${fmt(c.cached_tokens[id])} cached`);
  row('TTFT', t(c.ttft[id]));
  const pooled = fleetView(res).pooled;
  for (const [name, label] of pooled ? parts : []) row(`  ${label}`, t(c[`ttft_parts.${name}`][id]));
  const kids = [el('b', { text: pooled ? `Request #${id} → prefill ${c.prefill_replica[id]} → decode ${k}` : `Request #${id} → replica ${k}` }), dl];
  if (reason) kids.push(el('div', { text: `It ${router?.why?.[reason] || reason}.` }));
  const scores = fleetView(res).scores.get(id);
  if (scores && router?.score) {
    // (cache-aware's loads decide only when imbalanced: a match or the smallest tree did here)
    const decisive = !router.decides || router.decides.includes(reason);
    const top = decisive ? favoured(scores, router.best) : [];
    // a tie of best scores: the router's own rule chose among them, so the mark is where it went
    const best = top.includes(k) ? k : top[0] ?? -1;
    const who = pooled ? 'decode' : 'replica';
    kids.push(el('div', { class: 'tip-head', text: decisive ? `scores (${router.best} wins): ${router.score}`
      : `${router.score} (not what decided this request)` }));
    const list = el('dl');
    scores.forEach((s, i) => list.append(el('dt', { text: `${who} ${i}${i === k ? ' ←' : ''}` }),
      el('dd', { class: i === best ? 'tip-best' : null, text: s == null ? 'not asked' : fmt(s) })));
    kids.push(list);
    if (top.length > 1) {
      kids.push(el('div', { class: 'tip-tie', text: `tie: ${who}s ${top.join(', ')} scored ${fmt(scores[best])}; chosen ${router.tie}` }));
    }
  } else if (!scores && res.router.scores.length && id >= res.router.reasons.length) {
    kids.push(el('div', { text: 'scores: kept for the first requests only' }));
  }
  return kids;
}

/** Replica k at time t: its running slots and KV cache (or idle). */
export function stateTip(res, k, t) {
  const r = fleetView(res).replicas[k];
  const s = stateAt(r.log, t);
  const at = `${r.pool ? `${r.pool} ` : ''}replica ${r.replica} at ${fmtTime(Math.max(0, t), res.unit)}`;
  if (!s) return [el('b', { text: at }), el('div', { text: 'idle' })];
  return [el('b', { text: at }), el('div', { text: `${fmt(s.rows)} of ${fmt(slotsOf(res.scenario, r.pool))} slots running` }),
    el('div', { text: `KV cache: ${fmt(s.kv)} tokens` })];
}
