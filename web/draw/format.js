// Number formatting for display (data-value always carries the exact String(n)).

const nf = new Intl.NumberFormat('en-US');
/** Human formatting for display only; data-value always carries String(n). */
/** The largest / smallest of xs and `init` by a loop: spreading a data-sized array into
 * Math.max overflows the call stack at ~125,000 values (tests/js/spread.test.mjs forbids it). */
export function maxOf(xs, init = -Infinity) {
  let m = init;
  for (const x of xs) if (x > m) m = x;
  return m;
}
export function minOf(xs, init = Infinity) {
  let m = init;
  for (const x of xs) if (x < m) m = x;
  return m;
}

export function fmt(n, digits = 3) {
  if (n == null || Number.isNaN(n)) return '–';
  if (typeof n !== 'number') return String(n);
  if (Number.isInteger(n)) return nf.format(n);
  const a = Math.abs(n);
  if (a >= 1000) return nf.format(Math.round(n));
  if (a >= 100) return n.toFixed(1);
  if (a >= 10) return n.toFixed(Math.max(1, digits - 2));
  if (a >= 1) return n.toFixed(Math.max(2, digits - 1));
  if (a === 0) return '0';
  return String(Number(n.toPrecision(digits)));   // 0.05 (a link's latency as set), not 0.0500
}

export function fmtPct(x) { return x == null ? '–' : `${(100 * x).toFixed(x >= 0.995 || x < 0.1 ? 1 : 0)}%`; }

/** Time in the cost unit: ms (or passes under the unit cost model). */
export function fmtTime(ms, unit = 'ms') {
  if (ms == null) return '–';
  if (unit !== 'ms') return `${fmt(ms)} ${unit}`;
  if (Math.abs(ms) >= 1000) return `${fmt(ms / 1000)} s`;
  return `${fmt(ms)} ms`;
}

/** A column of times in one unit, chosen once from its largest value (s when it reaches a second,
 *  else ms): fmtTime picks each value's own, and a column of them wrote "8.05 s" over "177.5 ms".
 *  Returns the column's formatter. */
export function fmtTimeColumn(values, unit = 'ms') {
  if (unit !== 'ms') return (ms) => fmtTime(ms, unit);
  const secs = maxOf(values.map((x) => Math.abs(x ?? 0)), 0) >= 1000;
  return (ms) => (ms == null ? '–' : secs ? `${fmt(ms / 1000)} s` : `${fmt(ms)} ms`);
}
