// The engine's memory snapshot: Pyodide booted in Node with py_engine installed, every module of it
// imported and its common calls warmed, then the whole interpreter state saved
// (pyodide.makeMemorySnapshot). The page restores it instead of booting Python (web/engine/worker.js).
//
//   node tools/memsnap.mjs PYODIDE_DIR ENGINE_WHEEL OUT   -> OUT (raw bytes); prints a JSON summary
//
// numpy is never imported here: Pyodide 0.27 cannot snapshot it ("Unexpected hiwire entry"), and
// the page loads it only on demand.

import fs from 'node:fs';
import path from 'node:path';

const [pyodideDir, wheelPath, out] = process.argv.slice(2);
const { loadPyodide } = await import(path.resolve(pyodideDir, 'pyodide.mjs'));
const t0 = performance.now();
const py = await loadPyodide({ indexURL: path.resolve(pyodideDir) + '/', _makeSnapshot: true, stdout: () => {}, stderr: (s) => process.stderr.write(`${s}\n`) });
const sitePackages = py.runPython("import sysconfig; sysconfig.get_path('purelib')");
py.unpackArchive(new Uint8Array(fs.readFileSync(wheelPath)), 'wheel', { extractDir: sitePackages });
let warm;
try {
  warm = py.runPython(`
import importlib, pkgutil, json, sys
import py_engine
mods = sorted(m.name for m in pkgutil.walk_packages(py_engine.__path__, "py_engine.")
              if ".bench" not in m.name and not m.name.endswith("__main__"))
for name in mods:
    importlib.import_module(name)
from py_engine.app.protocol import handle_json
for req in ({"method": "schema"}, {"method": "presets"}, {"method": "compare", "params": {"scenario": {"workload": {"requests": 8}}, "schedulers": ["static", "continuous", "vllm"]}},
            {"method": "sweep", "params": {"param": "slots", "values": [2], "schedulers": ["continuous"]}},
            {"method": "stall", "params": {}}, {"method": "kv", "params": {}}, {"method": "examples"}):
    assert json.loads(handle_json(json.dumps(req)))["ok"], req
assert "numpy" not in sys.modules, "numpy was imported: it cannot be in a memory snapshot"
json.dumps({"modules": len(mods)})
`);
} catch (e) {
  process.stderr.write(`tools/memsnap.mjs: warming the engine failed:\n${e.message}\n`);
  process.exit(1);
}
const snap = py.makeMemorySnapshot();
fs.writeFileSync(out, snap);
process.stdout.write(JSON.stringify({ ...JSON.parse(warm), bytes: snap.length, ms: Math.round(performance.now() - t0) }));
