// Story mode: the article's argument in steps (the engine's story(): each step's title, text,
// scenario and lanes, the figure it highlights and the part of it it points at). A step sets its
// scenario like a preset does; this module owns the story card, its buttons, the highlight and
// the scroll to the highlighted figure. S toggles it, PageDown / PageUp step (ui/chrome.js keys).

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

  /** Go to step n: its scenario and lanes, its card, what it highlights. */
  function go(n) {
    const step = steps[n - 1];
    if (!step) return false;
    apply(step, storyView(steps, n));
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
    view.set(storyView(steps, null));
    render();
    left();
  }

  /** A change away from the step's own scenario leaves the story (the reader explores on). */
  function follow(values) {
    const step = storyStep(page, view.get());
    if (step && !sameValues(page.fields, values, valuesFromScenario(page.fields, step.scenario || {}))) {
      view.set(storyView(steps, null));
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

  /** The part of the highlighted figure the step points at: a lane, or the vllm lane's block view. */
  function markFocus() {
    for (const e of document.querySelectorAll('.story-focus')) e.classList.remove('story-focus');
    const focus = view.get().story ? view.get().storyFocus : null;
    if (!focus) return;
    const target = focus === 'blocks' ? document.querySelector('canvas.blockview:not([hidden])')
      : document.querySelector(`.lane[data-lane="${focus}"]`);
    target?.classList.add('story-focus');
  }

  function showFigure() {
    const v = view.get();
    if (v.embed) return;
    const fig = document.querySelector(`[data-figure="${v.storyFigure}"]`);
    const card = $('fig-story');
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    requestAnimationFrame(() => {
      if (v.storyFigure === 'timeline') window.scrollTo({ top: 0, behavior: smooth ? 'smooth' : 'auto' });
      else (card || fig)?.scrollIntoView({ block: 'start', behavior: smooth ? 'smooth' : 'auto' });
    });
  }

  $('btn-story').addEventListener('click', toggle);
  $('story-prev').addEventListener('click', () => stepBy(-1));
  $('story-next').addEventListener('click', () => stepBy(1));
  $('story-exit').addEventListener('click', toggle);
  render();
  return { toggle, stepBy, follow, render, markFocus };
}
