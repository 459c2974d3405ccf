// The engine's record layouts (py_engine/sim/records.py, shipped in schema()) and the tables the page
// reads results through. setRecords() is called once at boot with schema.records.
//
// A table is {$table: n, columns: {name: Float64Array | Uint8Array}}: the worker delivers a
// result's requests, segments and passes log so (py_engine/analysis/results.py); the build-time snapshot's
// JSON rows are turned into the same tables (asTables), so every reader sees one shape.

export const LAYOUTS = { request: [], segment: [], passes_log: [], phases: [] };
export const PHASE = {};             // phase name -> its code in a segments table

export function setRecords(records) {
  Object.assign(LAYOUTS, records);
  records.phases.forEach((p, i) => { PHASE[p] = i; });
}

const names = (layout) => layout.map((f) => f.name);

/** Request rows -> a table: the layout's columns, and a fleet's own (results.py columns():
 *  `replica`, and each part of a dict such as `ttft_parts` as "ttft_parts.<part>"). */
function fromObjects(rows, cols) {
  const columns = Object.fromEntries(cols.map((c) => [c, new Float64Array(rows.length)]));
  rows.forEach((r, i) => { for (const c of cols) columns[c][i] = r[c]; });
  const extra = Object.keys(rows[0] ?? {}).filter((k) => !(k in columns));
  for (const k of extra) {
    if (rows[0][k] && typeof rows[0][k] === 'object') {
      for (const part of Object.keys(rows[0][k])) columns[`${k}.${part}`] = Float64Array.from(rows, (r) => r[k][part]);
    } else {
      columns[k] = Float64Array.from(rows, (r) => r[k]);
    }
  }
  return { $table: rows.length, columns };
}

function fromSegments(rows) {
  const cols = names(LAYOUTS.segment);
  const columns = Object.fromEntries(cols.map((c) => [c, c === 'phase' ? new Uint8Array(rows.length) : new Float64Array(rows.length)]));
  rows.forEach((r, i) => cols.forEach((c, j) => { columns[c][i] = c === 'phase' ? PHASE[r[j]] : r[j]; }));
  return { $table: rows.length, columns };
}

function fromColumns(obj) {
  const cols = names(LAYOUTS.passes_log);
  const n = obj[cols[0]].length;
  return { $table: n, columns: Object.fromEntries(cols.map((c) => [c, Float64Array.from(obj[c])])) };
}

const isResult = (x) => x && typeof x === 'object' && 'segments' in x && 'requests' in x && 'passes_log' in x;

/** A result (or a compare of results) in JSON row form → the same with tables; tables pass through. */
export function asTables(doc) {
  if (isResult(doc)) {
    if (!Array.isArray(doc.requests)) return doc;
    const out = { ...doc, requests: fromObjects(doc.requests, names(LAYOUTS.request)),
      segments: fromSegments(doc.segments), passes_log: fromColumns(doc.passes_log) };
    if (doc.replicas) out.replicas = doc.replicas.map((r) => ({ ...r, passes_log: fromColumns(r.passes_log) }));   // a fleet's
    return out;
  }
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    return Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, isResult(v) ? asTables(v) : v]));
  }
  return doc;
}

export const count = (table) => table?.$table ?? 0;

/** Row i of a table as an object (a phase code becomes its name). */
export function rowOf(table, i) {
  const out = {};
  for (const [k, col] of Object.entries(table.columns)) out[k] = k === 'phase' ? LAYOUTS.phases[col[i]] : col[i];
  return out;
}

/** A request row with a fleet's "k.part" columns nested again as {k: {part}} (fromObjects). */
function nested(row) {
  for (const key of Object.keys(row)) {
    const dot = key.indexOf('.');
    if (dot < 0) continue;
    (row[key.slice(0, dot)] ??= {})[key.slice(dot + 1)] = row[key];
    delete row[key];
  }
  return row;
}

const logRows = (log) => Object.fromEntries(Object.entries(log.columns).map(([k, v]) => [k, Array.from(v)]));

/** A result with tables → the JSON row form the engine's native API returns (for exports). */
export function toRows(doc) {
  if (isResult(doc)) {
    if (Array.isArray(doc.requests)) return doc;
    const seg = names(LAYOUTS.segment);
    const out = { ...doc,
      requests: Array.from({ length: count(doc.requests) }, (_, i) => nested(rowOf(doc.requests, i))),
      segments: Array.from({ length: count(doc.segments) }, (_, i) => { const r = rowOf(doc.segments, i); return seg.map((c) => r[c]); }),
      passes_log: logRows(doc.passes_log) };
    if (doc.replicas) out.replicas = doc.replicas.map((r) => ({ ...r, passes_log: logRows(r.passes_log) }));   // a fleet's
    return out;
  }
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    return Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, isResult(v) ? toRows(v) : v]));
  }
  return doc;
}

/** The KV pool (tokens, "auto" resolved) a comparison ran with, from any lane's metrics, or null. */
export function poolOf(cmp) {
  const runs = cmp ? Object.values(cmp).filter((r) => r && r.metrics) : [];
  return runs.map((r) => r.metrics.kv_pool_tokens).find((t) => t != null) ?? null;
}
