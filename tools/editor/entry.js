// The policy lab's editor: what the page takes from CodeMirror 6, bundled into one ESM file
// (web/vendor/codemirror.js in the built site) by tools/editor.py. Nothing else of npm ships.
export { EditorView, basicSetup } from 'codemirror';
export { keymap } from '@codemirror/view';
export { python } from '@codemirror/lang-python';
export { setDiagnostics, lintGutter } from '@codemirror/lint';
export { Prec } from '@codemirror/state';
