// Each request's TTFT in its parts, as a disaggregated fleet's result carries them (requests
// columns `ttft_parts.<part>`, fleet/result.py), folded for drawing: one bar per request in
// arrival order, or, with more requests than pixel columns, each column the request with the
// longest TTFT among those it covers (the worst stays visible). Pure functions.

/** The parts' columns [Float64Array per part] in the order of `parts` ([[name, label]]), or
 *  null when the result has none (a colocated fleet). */
export function partColumns(res, parts) {
  const cols = parts.map(([name]) => res.requests.columns[`ttft_parts.${name}`]);
  return cols.every(Boolean) ? cols : null;
}

/** The bars for `width` pixel columns: {ids: the request each bar shows, bar: its width in px}. */
export function foldBars(ttft, width) {
  const n = ttft.length, w = Math.max(1, Math.floor(width));
  if (n <= w) return { ids: Int32Array.from({ length: n }, (_, i) => i), bar: n ? w / n : w };
  const ids = new Int32Array(w);
  for (let c = 0; c < w; c++) {
    const a = Math.floor((c * n) / w), b = Math.max(a + 1, Math.floor(((c + 1) * n) / w));
    let best = a;
    for (let i = a + 1; i < b; i++) if (ttft[i] > ttft[best]) best = i;
    ids[c] = best;
  }
  return { ids, bar: 1 };
}

/** The request whose bar is under x (CSS px), or -1. */
export function barAt(fold, x) {
  const k = Math.floor(x / fold.bar);
  return k >= 0 && k < fold.ids.length ? fold.ids[k] : -1;
}
