// The view state's one owner: theme, lecture mode, embedded figure and the lanes on screen live
// here, and the DOM (html attributes, classes, the buttons that show them) is set from it, never
// the other way round.

export function createView(root, doc = document) {
  const view = { embed: null, lecture: false, theme: null, lanes: [] };
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
    for (const s of doc.querySelectorAll('[data-figure]')) s.classList.toggle('embedded', s.dataset.figure === view.embed);
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
