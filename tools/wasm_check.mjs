// The engine's self-check under Pyodide in Node: the page's interpreter (wasm32, a 32-bit
// Py_ssize_t) without a browser, so a failure that only 32 bits show (e.g. len() of more than
// 2**31 - 1) is caught in seconds rather than by the browser suite.
//
//   node tools/wasm_check.mjs PYODIDE_DIR ENGINE_WHEEL [quick|full]  -> the self-check's JSON
//
// PYODIDE_DIR holds the runtime as the site ships it (dist/pyodide; pyodide.asm.wasm may be gzipped).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const [pyodideDir, wheelPath, depth = 'full'] = process.argv.slice(2);
// a copy of the runtime with the wasm inflated (the site serves it gzipped for the browser)
const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'cbx-wasm-'));
for (const name of fs.readdirSync(pyodideDir)) {
  const from = path.join(pyodideDir, name);
  if (name.endsWith('.gz')) fs.writeFileSync(path.join(runtime, name.slice(0, -3)), zlib.gunzipSync(fs.readFileSync(from)));
  else fs.copyFileSync(from, path.join(runtime, name));
}
try {
  const { loadPyodide } = await import(path.join(runtime, 'pyodide.mjs'));
  const py = await loadPyodide({ indexURL: runtime + '/', stdout: () => {}, stderr: (s) => process.stderr.write(`${s}\n`) });
  const sitePackages = py.runPython("import sysconfig; sysconfig.get_path('purelib')");
  py.unpackArchive(new Uint8Array(fs.readFileSync(wheelPath)), 'wheel', { extractDir: sitePackages });
  const out = py.runPython(`
import json, sys
from py_engine.verify.check import run
res = run(quick=${depth === 'quick' ? 'True' : 'False'})
json.dumps({"maxsize": sys.maxsize, **res})
`);
  process.stdout.write(out);
} finally {
  fs.rmSync(runtime, { recursive: true, force: true });
}
