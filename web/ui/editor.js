// The policy lab's code editor: CodeMirror 6 (vendor/codemirror.js, bundled and verified at build
// time by tools/editor.py), loaded only when the lab opens. Python highlighting, the engine's
// error marked at its line (a lint diagnostic), Ctrl/Cmd-Enter runs.
// The editor lives in a shadow root: there CodeMirror's style-mod adopts constructed stylesheets,
// which the page's strict CSP allows (style-src 'self'); in the document itself it would add a
// <style> element, which that CSP blocks. The page's CSS variables still reach in (inherited).

/**
 * createEditor(parent, {doc, onRun, label}) -> Promise<{text(), setText(t), markError(line, msg),
 * clearError()}>. parent gets data-error-line while a line is marked (a test hook).
 */
export async function createEditor(parent, { doc, onRun, label }) {
  const cm = await import('../vendor/codemirror.js');
  const run = () => { onRun(); return true; };
  const theme = cm.EditorView.theme({
    '&': { color: 'var(--ink)', backgroundColor: 'var(--panel)', fontSize: '13px', height: '100%' },
    '.cm-scroller': { fontFamily: 'var(--mono)' },
    '.cm-content': { caretColor: 'var(--ink)' },
    '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--faint)' },
    // the lint marks without their data: images (the CSP allows no data: image)
    '.cm-lintRange-error': { backgroundImage: 'none', textDecoration: 'underline wavy var(--bad)', textUnderlineOffset: '3px' },
    '.cm-lint-marker-error': { content: 'none', width: '.7em', height: '.7em', borderRadius: '50%', backgroundColor: 'var(--bad)', margin: '.25em auto 0' },
    '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 8%, transparent)' },
  });
  // Typing over a selection: Chrome's own editing would first wrap the new text in a span with an
  // inline style (to keep the deleted highlighting's colour), which the CSP blocks (a console
  // error, nothing else); the editor makes that edit itself instead.
  const typeOver = cm.EditorView.domEventHandlers({
    beforeinput(e, view) {
      if (e.inputType !== 'insertText' || e.data == null || view.state.selection.main.empty) return false;
      e.preventDefault();
      view.dispatch(view.state.replaceSelection(e.data), { scrollIntoView: true, userEvent: 'input.type' });
      return true;
    },
  });
  const root = parent.shadowRoot ?? parent.attachShadow({ mode: 'open' });
  const view = new cm.EditorView({
    doc, parent: root, root,
    extensions: [cm.basicSetup, cm.python(), cm.lintGutter(), theme, typeOver,
      cm.Prec.highest(cm.keymap.of([{ key: 'Mod-Enter', run }])),
      cm.EditorView.contentAttributes.of({ 'aria-label': label })],
  });
  const text = () => view.state.doc.toString();
  return {
    text,
    setText(t) {
      if (t === text()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: t } });
    },
    markError(line, message) {
      const doc = view.state.doc;
      const l = doc.line(Math.min(Math.max(1, line), doc.lines));
      view.dispatch(cm.setDiagnostics(view.state, [{ from: l.from, to: l.to, severity: 'error', message }]));
      parent.dataset.errorLine = String(l.number);
    },
    clearError() {
      view.dispatch(cm.setDiagnostics(view.state, []));
      delete parent.dataset.errorLine;
    },
  };
}
