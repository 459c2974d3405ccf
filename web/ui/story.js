// Story mode: the article's argument in steps (the engine's story(): each step's title, text,
// scenario and lanes, the figure it highlights and the part of it it points at). A step sets its
// scenario like a preset does; this module owns the story card, its buttons, the highlight and
// the scroll that shows it: the part a step points at (a lane, the block view) is brought into
// view under the card (sticky on a large screen, style.css) once its step's run is drawn, since
// where it lands depends on the lanes' heights. S toggles it, PageDown / PageUp step (ui/chrome.js).

import { storyStep } from '../state/url.js';
import { valuesFromScenario, sameValues } from '../state/schema.js';
import { $ } from './dom.js';

/** The view patch for step n (1-based) of the story's steps, or for leaving the story (null). */
export function storyView(steps, n) {
  const step = n ? steps?.[n - 1] : null;
  return { story: step ? n : null, storyFigure: step?.highlight ?? null, storyFocus: step?.focus ?? null };
}

/**
 * page: the page's context (state/context.js); view: the view state (state/view.js);
 * apply(step, viewPatch): set a step's scenario and lanes with the view patch, then run it;
 * left(): the reader left the story (the URL and the lanes follow).
 * Returns {toggle(), stepBy(delta), follow(values), render(), markFocus()}.
 */
export function createStory({ page, view, apply, left }) {
  const steps = page.story;
  let reveal = !!view.get().story;   // show the step's figure once drawn (a story link's too)

  /** Go to step n: its scenario and lanes, its card, what it highlights. */
  function go(n) {
    const step = steps[n - 1];
    if (!step) return false;
    apply(step, storyView(steps, n));
    reveal = true;
    showFigure();
    return true;
  }

  /** PageDown / PageUp: the next or previous step; false when not in story mode. */
  function stepBy(delta) {
    const n = view.get().story;
    if (!n) return false;
    go(Math.max(1, Math.min(steps.length, n + delta)));
    return true;
  }

  function toggle() {
    if (!view.get().story) { go(1); return; }
    reveal = false;
    view.set(storyView(steps, null));
    render();
    left();
  }

  /** A change away from the step's own scenario leaves the story (the reader explores on). */
  function follow(values) {
    const step = storyStep(page, view.get());
    if (step && !sameValues(page.fields, values, valuesFromScenario(page.fields, step.scenario || {}))) {
      view.set(storyView(steps, null));
      reveal = false;
    }
  }

  function render() {
    const v = view.get();
    const step = storyStep(page, v);
    if (step) {
      $('story-count').textContent = `Step ${v.story} of ${steps.length}`;
      $('story-title').textContent = step.title;
      $('story-text').textContent = step.text;
      $('story-prev').disabled = v.story <= 1;
      $('story-next').disabled = v.story >= steps.length;
    }
    markFocus();
  }

  /** The part of the highlighted figure the step points at: a lane, the vllm lane's block view
   *  (with its legend), or the fleet's router comparison. Called when a result is drawn: the
   *  step's figure is shown again. */
  function markFocus() {
    for (const e of document.querySelectorAll('.story-focus')) e.classList.remove('story-focus');
    focusTarget()?.classList.add('story-focus');
    if (reveal && view.get().story) showFigure();
  }

  function focusTarget() {
    const focus = view.get().story ? view.get().storyFocus : null;
    if (!focus) return null;
    if (focus === 'blocks') return document.querySelector('.kv-view:not([hidden])');
    if (focus === 'routers') return document.querySelector('#fig-fleet .fleet-right');
    return document.querySelector(`.lane[data-lane="${focus}"]`);
  }

  function showFigure() {
    const v = view.get();
    if (v.embed) return;
    const behavior = window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth';
    requestAnimationFrame(() => {
      const target = focusTarget() || document.querySelector(`[data-figure="${v.storyFigure}"]`);
      if (target) intoView(target, behavior);
    });
  }

  /** Scroll the least that shows all of `target` under the story card (which sticks to the top on
   *  a large screen, so scrolling the card itself into view would not move what is under it), its
   *  top first when it is taller than what is left; where the card scrolls with the page (a
   *  phone), the card at the top. */
  function intoView(target, behavior) {
    const m = 8, box = $('fig-story'), card = box.getBoundingClientRect(), r = target.getBoundingClientRect();
    const sticky = getComputedStyle(box).position === 'sticky';
    if (!sticky) {
      // a phone: the card does not stay on top, so the step's text comes first (the step's figure,
      // the only other one shown, follows it; its nav bar stays in reach at the bottom)
      const dy = card.top - m;
      if (Math.abs(dy) >= 1) window.scrollBy({ top: dy, behavior });
      return;
    }
    const freeTop = (d) => (sticky ? Math.max(card.height, card.bottom - d) : 0) + m;
    let dy = Math.max(0, r.bottom + m - innerHeight);
    if (r.top - dy < freeTop(dy)) dy = r.top - freeTop(dy);
    if (Math.abs(dy) >= 1) window.scrollBy({ top: dy, behavior });
  }

  $('btn-story').addEventListener('click', toggle);
  $('story-prev').addEventListener('click', () => stepBy(-1));
  $('story-next').addEventListener('click', () => stepBy(1));
  $('story-exit').addEventListener('click', toggle);
  render();
  return { toggle, stepBy, follow, render, markFocus };
}
