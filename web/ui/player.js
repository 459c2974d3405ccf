// The playhead: play / pause, step, scrub, and the readout under the timelines. The pass shown is
// owned here; the lanes draw it, the URL records it (null = the end of the run).

import { doneBy, timeAt } from '../draw/timeline.js';
import { fmt, fmtTime } from '../draw/format.js';
import { latest } from '../engine/latest.js';
import { $ } from './dom.js';
import { count } from '../state/records.js';
import { PLAY_SECONDS, DEFAULT_PLAY_SECONDS } from '../state/view.js';

const REDUCED_STEP_MS = 700;       // reduced motion: a tenth of the run per step, this often

/**
 * ctx: {passMax(), results(): [[scheduler, result], ...], onFrame(), onSettle(), seconds (the
 * link's playback length), onSpeed(seconds)}: onFrame redraws the lanes; onSettle is called when
 * the playhead rests (write it to the URL).
 */
export function createPlayer(ctx) {
  const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');
  const playback = latest();
  let pass = null;
  let playing = null;
  const speed = $('play-speed');
  speed.replaceChildren(...PLAY_SECONDS.map((s) => {
    const o = document.createElement('option');
    o.value = String(s); o.textContent = s < 60 ? `${s} s` : `${s / 60} min`;
    return o;
  }));
  speed.value = String(ctx.seconds ?? DEFAULT_PLAY_SECONDS);
  speed.addEventListener('change', () => ctx.onSpeed?.(Number(speed.value)));

  function readout() {
    const pm = ctx.passMax();
    const p = pass ?? pm;
    const scrub = $('scrub');
    scrub.max = String(pm);
    scrub.value = String(p);
    // "8 of 64 done at t = 23.0 s": the clock at the playhead, not a finish time
    const parts = [`pass ${fmt(p)} of ${fmt(pm)}`];
    for (const [s, r] of ctx.results()) {
      const t = timeAt(r, Math.min(p, r.metrics.passes));
      parts.push(`${s}: ${fmt(doneBy(r, p))} of ${fmt(count(r.requests))} done${t == null ? '' : ` at t = ${fmtTime(t, r.unit)}`}`);
    }
    $('playhead-readout').textContent = parts.join(' · ');
    $('btn-play').textContent = playing ? '❚❚ Pause' : '▶ Play';
    $('btn-play').setAttribute('aria-label', playing ? 'Pause (space)' : 'Play (space)');
  }

  function set(p, { settle = true } = {}) {
    const pm = ctx.passMax();
    pass = Math.max(0, Math.min(pm, Math.round(p)));
    $('scrub').value = String(pass ?? pm);   // at once: the next key reads it; the frame may lag
    if (pass === pm) pass = null;
    ctx.onFrame();
    if (settle) ctx.onSettle();
  }

  function stop() {
    if (!playing) return;   // steps and scrubs call this; only a running play has state to end
    playback.cancel();
    playing = null;
    readout();
    ctx.onSettle();
  }

  function play() {
    if (playing) { stop(); return; }
    const pm = ctx.passMax();
    if ((pass ?? pm) >= pm) pass = 0;
    const token = playback.start();
    playing = token;
    let last = performance.now();
    let acc = pass ?? 0;
    const tick = (now) => {
      if (token.stale) return;
      if (reducedMotion.matches) {
        acc += pm / 10;
        set(Math.min(pm, acc), { settle: false });
        if (acc >= pm) { stop(); return; }
        setTimeout(() => tick(performance.now()), REDUCED_STEP_MS);
        return;
      }
      acc += ((now - last) / 1000) * (pm / (Number(speed.value) || DEFAULT_PLAY_SECONDS));
      last = now;
      set(Math.min(pm, acc), { settle: false });
      if (acc >= pm) { stop(); return; }
      requestAnimationFrame(tick);
    };
    pass = pass ?? 0;
    readout();
    if (reducedMotion.matches) setTimeout(() => tick(performance.now()), 300); else requestAnimationFrame(tick);
  }

  function step(delta) {
    stop();
    const pm = ctx.passMax();
    set((pass ?? pm) + delta);
  }

  $('btn-play').addEventListener('click', play);
  $('btn-back').addEventListener('click', () => step(-1));
  $('btn-fwd').addEventListener('click', () => step(1));
  $('scrub').addEventListener('input', (e) => { stop(); set(Number(e.target.value)); });

  return {
    get pass() { return pass; },
    /** A new result or a link's pass: put the playhead there without playing. */
    reset(p = null) { stop(); pass = p; },
    play, stop, step, readout,
    get playing() { return !!playing; },
    home() { stop(); set(0); },
    end() { stop(); set(ctx.passMax()); },
    goto(p) { stop(); set(p); },
  };
}
