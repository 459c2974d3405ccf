// The view state's one owner: theme, lecture mode, embedded figure and the lanes on screen live
// here, and the DOM (html attributes, classes, the buttons that show them) is set from it, never
// the other way round.

export const PLAY_SECONDS = [4, 8, 20, 60];   // a whole run plays in one of these (the speed control)
export const DEFAULT_PLAY_SECONDS = 8;

export function createView(root, doc = document) {
  // story: the story step shown (1-based) or null; storyFigure / storyFocus: what the step
  // highlights (a figure; a lane's scheduler or "blocks"), set with it by main.js
  const view = { embed: null, lecture: false, theme: null, lanes: [], speed: DEFAULT_PLAY_SECONDS,
    story: null, storyFigure: null, storyFocus: null, challenge: null };   // challenge: the lab's (figures.lab)
  const $ = (id) => doc.getElementById(id);

  function prefersDark() { return window.matchMedia('(prefers-color-scheme: dark)').matches; }
  function isDark() { return view.theme ? view.theme === 'dark' : prefersDark(); }

  function apply() {
    if (view.theme) root.dataset.theme = view.theme; else delete root.dataset.theme;
    root.classList.toggle('lecture', view.lecture);
    $('btn-lecture')?.setAttribute('aria-pressed', String(view.lecture));
    const dark = isDark();
    const themeBtn = $('btn-theme');
    if (themeBtn) {
      themeBtn.textContent = dark ? 'Light' : 'Dark';
      themeBtn.setAttribute('aria-label', dark ? 'Switch to light mode' : 'Switch to dark mode');
    }
    if (view.embed) root.dataset.embed = view.embed; else delete root.dataset.embed;
    if (view.story) root.dataset.story = String(view.story); else delete root.dataset.story;
    $('btn-story')?.setAttribute('aria-pressed', String(!!view.story));
    const shown = view.embed === 'story' ? view.storyFigure : view.embed;
    for (const s of doc.querySelectorAll('[data-figure]')) {
      s.classList.toggle('embedded', s.dataset.figure === shown || (view.embed === 'story' && s.dataset.figure === 'story'));
      s.classList.toggle('story-shown', !!view.story && s.dataset.figure === view.storyFigure);
    }
    const open = $('embed-open');
    if (open) open.hidden = !view.embed;
  }

  return {
    get: () => ({ ...view, lanes: [...view.lanes] }),
    /** Merge a patch into the view and update the DOM. */
    set(patch) { Object.assign(view, patch); apply(); },
    toggleTheme() { view.theme = isDark() ? 'light' : 'dark'; apply(); },
    toggleLecture() { view.lecture = !view.lecture; apply(); },
    isDark,
  };
}
