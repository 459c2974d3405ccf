// The reader's own trace file (CSV with a header, or JSONL: one object a line) -> the engine's
// workload.items. Parsed here, in the page; nothing is sent anywhere. A line that is not a record
// gets a message naming it; the engine then checks every value (its message names the item, and
// `lineOf` turns the item back into the file's line).

const KEYS = ['arrive', 'prompt', 'out', 'prefix_id', 'prefix_len', 'priority'];
export const MAX_TRACE_BYTES = 20_000_000;

function cell(text) {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) && Number.isFinite(n) ? n : t;
}

/** text -> {items, format, lines: item index -> file line} or {error}. More than maxItems
 *  requests stop the parse at the first one too many (a million lines once took 97 s and 4 GB). */
export function parseTrace(name, text, maxItems = Infinity) {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);   // a byte-order mark is not a column
  const items = [], where = [];
  const tooMany = (i) => ({ error: `${name} line ${i + 1}: more than ${maxItems.toLocaleString('en-US')} requests, the page's limit (the engine takes more natively: python -m py_engine run --trace ${name})` });
  const jsonl = /\.jsonl?$/i.test(name) || lines.find((l) => l.trim())?.trim().startsWith('{');
  if (jsonl) {
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].trim()) continue;
      if (items.length >= maxItems) return tooMany(i);
      let obj;
      try { obj = JSON.parse(lines[i]); } catch { return { error: `${name} line ${i + 1}: not a JSON object` }; }
      if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return { error: `${name} line ${i + 1}: not a JSON object` };
      items.push(obj); where.push(i + 1);
    }
  } else {
    const head = (lines[0] || '').split(',').map((h) => h.trim().toLowerCase());
    const missing = ['arrive', 'prompt', 'out'].filter((k) => !head.includes(k));
    if (missing.length) return { error: `${name} line 1: the header needs ${missing.join(', ')} (and may have ${KEYS.slice(3).join(', ')})` };
    const unknown = head.filter((h) => h && !KEYS.includes(h));
    if (unknown.length) return { error: `${name} line 1: unknown column ${unknown[0]} (known: ${KEYS.join(', ')})` };
    for (let i = 1; i < lines.length; i++) {
      if (!lines[i].trim()) continue;
      if (items.length >= maxItems) return tooMany(i);
      const cells = lines[i].split(',');
      if (cells.length !== head.length) return { error: `${name} line ${i + 1}: ${cells.length} values, the header has ${head.length}` };
      const obj = {};
      head.forEach((h, j) => { const v = cell(cells[j]); if (v !== undefined) obj[h] = v; });
      items.push(obj); where.push(i + 1);
    }
  }
  if (!items.length) return { error: `${name}: no requests in it` };
  return { items, format: jsonl ? 'JSONL' : 'CSV', lines: where };
}

/** An engine message about workload.items[i]... -> the same about the file's line. */
export function lineOf(message, name, lines) {
  return message.replace(/workload\.items\[(\d+)\]\.?(\w*)/, (_, i, key) =>
    `${name} line ${lines[Number(i)] ?? '?'}${key ? `: ${key}` : ''}`);
}
