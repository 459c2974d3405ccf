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

export function fmtPct(x) { return x == null ? '–' : `${(100 * x).toFixed(pctDigits(x))}%`; }
/** A share's decimals: one near 100% and below 10% (99.6% is not all, 2.4% not 2%), else none. */
const pctDigits = (x) => (x >= 0.995 || x < 0.1 ? 1 : 0);

/** A column of shares with one number of decimals, the most any of them needs: "100.0%" stood
 *  over "98%". Returns the column's formatter. */
export function fmtPctColumn(values) {
  const digits = values.some((x) => x != null && !Number.isNaN(x) && pctDigits(x)) ? 1 : 0;
  return (x) => (x == null ? '–' : `${(100 * x).toFixed(digits)}%`);
}

/** Time in the cost unit: ms (or passes under the unit cost model). */
export function fmtTime(ms, unit = 'ms') {
  if (ms == null) return '–';
  if (unit !== 'ms') return `${fmt(ms)} ${unit}`;
  if (Math.abs(ms) >= 1000) return `${fmt(ms / 1000)} s`;
  return `${fmt(ms)} ms`;
}

/** A column of times in one unit, chosen once for the whole column: fmtTime picks each value's
 *  own, and a column of them wrote "8.05 s" over "177.5 ms". Seconds when the largest reaches a
 *  second and the smallest reads well in seconds (from 100 ms: "0.178 s"), or when the largest
 *  reaches 10 s (153,800 ms reads worse than 153.8 s); else ms ("2,140 ms" over "70.5 ms", not
 *  "2.14 s" over "0.0705 s"). Returns the column's formatter. */
export function fmtTimeColumn(values, unit = 'ms') {
  if (unit !== 'ms') return (ms) => fmtTime(ms, unit);
  const xs = values.filter((x) => x != null && !Number.isNaN(x)).map(Math.abs);
  const most = maxOf(xs, 0), least = minOf(xs, most);
  const secs = most >= 10000 || (most >= 1000 && least >= 100);
  return (ms) => (ms == null ? '–' : secs ? `${fmt(ms / 1000)} s` : `${fmt(ms)} ms`);
}
