// The reader's own trace file: the page's limit on its size, and the engine's messages about one
// of its requests turned back into the file's line. The engine parses the file (protocol
// parse_trace, py_engine/scenario/tracefile.py: the CLI's parser too).

export const MAX_TRACE_BYTES = 20_000_000;

/** An engine message about workload.items[i]... -> the same about the file's line. */
export function lineOf(message, name, lines) {
  return message.replace(/workload\.items\[(\d+)\]\.?(\w*)/, (_, i, key) =>
    `${name} line ${lines[Number(i)] ?? '?'}${key ? `: ${key}` : ''}`);
}
