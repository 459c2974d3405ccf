// What each runtime file must look like, checked after its sha256 and before anything uses it.
// The hash proves the file is the one the build shipped; these prove the build shipped a usable
// one (a garbage .wasm once failed only after a 60 s stall, a truncated zip as "exit(1)").
// Each returns null, or what is wrong in words (the caller names the file).

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];   // "\0asm", version 1
const EOCD = 0x06054b50;          // a zip's end-of-central-directory record
const EOCD_MIN = 22;

export function wasmProblem(bytes) {
  if (bytes.length < 8 || WASM_MAGIC.some((b, i) => bytes[i] !== b)) return 'not a WebAssembly module (no \\0asm header)';
  return null;
}

/** Names in a zip's central directory, or a problem text. */
export function zipNames(bytes) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = -1;
  for (let i = bytes.length - EOCD_MIN; i >= Math.max(0, bytes.length - EOCD_MIN - 65535); i--) {
    if (v.getUint32(i, true) === EOCD) { end = i; break; }
  }
  if (end < 0) return { problem: 'not a complete zip archive (no end-of-central-directory record: truncated?)' };
  const count = v.getUint16(end + 10, true), size = v.getUint32(end + 12, true), at = v.getUint32(end + 16, true);
  if (at + size > end) return { problem: 'not a complete zip archive (its directory lies outside the file)' };
  const names = [];
  const text = new TextDecoder();
  for (let p = at, i = 0; i < count; i++) {
    if (p + 46 > end || v.getUint32(p, true) !== 0x02014b50) return { problem: `a damaged zip archive (entry ${i + 1} of ${count})` };
    const n = v.getUint16(p + 28, true), extra = v.getUint16(p + 30, true), note = v.getUint16(p + 32, true);
    names.push(text.decode(bytes.subarray(p + 46, p + 46 + n)));
    p += 46 + n + extra + note;
  }
  return { names };
}

export function zipProblem(bytes, mustHold = []) {
  const r = zipNames(bytes);
  if (r.problem) return r.problem;
  const missing = mustHold.filter((n) => !r.names.includes(n));
  return missing.length ? `does not hold ${missing.join(', ')}` : null;
}

export function jsonProblem(bytes) {
  try { JSON.parse(new TextDecoder().decode(bytes)); return null; } catch (e) { return `not JSON (${e.message})`; }
}

/** The check for a runtime file by its name (null: no shape to check, e.g. a script). */
export function shapeCheck(name) {
  if (name.endsWith('.wasm')) return wasmProblem;
  if (name.endsWith('.zip')) return (b) => zipProblem(b);
  if (name.endsWith('.json')) return jsonProblem;
  return null;
}

// The runtime files the engine cannot start without (a manifest that lists fewer is refused).
export const RUNTIME_FILES = ['pyodide.mjs', 'pyodide.asm.js', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'];
export const ENGINE_MODULE = 'py_engine/__init__.py';
