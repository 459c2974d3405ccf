// The reader's own trace file (CSV / JSONL): the file input, its status line, its clear button and
// its errors. The engine parses it (protocol parse_trace: the CLI's parser too,
// py_engine/scenario/tracefile.py); the file never leaves the browser. Its requests replace the
// generator's and the production trace's (workload.items).

import { lineOf, MAX_TRACE_BYTES } from '../state/tracefile.js';
import { $ } from './dom.js';

const requests = (n) => `${n.toLocaleString('en-US')} request${n === 1 ? '' : 's'}`;

/**
 * onChange(): a file was loaded or cleared (run again); maxRequests: the page's limit on a run's
 * requests (workload.requests' page_max); call(method, params): the live engine's door. Returns
 * {items(): the file's requests, or undefined without one; describe(): its name and size, or null;
 * showError(detail): an engine error
 * about them shown beside the input, at the file's own line (true when it was about them)}.
 */
export function createTraceInput(onChange, maxRequests, call) {
  const input = $('trace-file'), status = $('trace-file-status'), error = $('trace-file-error'), clear = $('trace-file-clear');
  let trace = null;     // {name, items, lines, format}

  async function load(file) {
    error.textContent = '';
    if (!file) return;
    if (file.size > MAX_TRACE_BYTES) { error.textContent = `${file.name}: larger than ${MAX_TRACE_BYTES / 1e6} MB`; return; }
    let r;
    status.textContent = `${file.name}: reading…`;
    try {
      r = await call('parse_trace', { name: file.name, text: await file.text(), max_items: maxRequests ?? null });
    } catch (err) {
      status.textContent = '';
      error.textContent = err.detail?.message || err.message;
      return;
    }
    trace = { name: file.name, ...r };
    status.textContent = `${file.name}: ${requests(r.items.length)} (${r.format}); the generator's and the production trace's fields are not used.`;
    clear.hidden = false;
    onChange();
  }

  function reset() {
    trace = null;
    input.value = '';
    status.textContent = '';
    error.textContent = '';
    clear.hidden = true;
    onChange();
  }

  input.addEventListener('change', (e) => load(e.target.files?.[0]));
  clear.addEventListener('click', reset);
  return {
    items: () => trace?.items,
    /** "mine.csv (120 requests)", or null without a file. */
    describe: () => (trace ? `${trace.name} (${requests(trace.items.length)})` : null),
    showError(d) {
      if (!trace || !/^workload\.items/.test(d.field || '')) return false;
      error.textContent = lineOf(d.message, trace.name, trace.lines);
      // read, but refused by the engine: not a file that runs (its status said it was loaded)
      status.textContent = `${trace.name}: ${requests(trace.items.length)} read, not run: the engine refuses the line below.`;
      return true;
    },
  };
}
