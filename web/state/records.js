// The engine's record layouts (py_engine/records.py, shipped in schema()): readers look a field
// up by its declared name. setRecords() is called once at boot with schema.records.

const index = (layout) => Object.fromEntries(layout.map((f, i) => [f.name, i]));

/** SEG.slot, SEG.request, ...: positions in a segment row, by the declared names. */
export const SEG = {};
export const LAYOUTS = { request: [], segment: [], passes_log: [], phases: [] };

export function setRecords(records) {
  Object.assign(LAYOUTS, records);
  Object.assign(SEG, index(records.segment));
}
