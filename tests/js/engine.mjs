// The engine's schema, presets and story for the JS unit tests, from the native engine itself (so the
// page's modules are tested against the real field table). PYTHON: the venv's interpreter
// (build.py test sets it); defaults to .venv/bin/python.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const python = process.env.PYTHON || path.join(root, '.venv/bin/python');

export function engine() {
  const code = 'import json, py_engine; print(json.dumps({"schema": py_engine.schema(), "presets": py_engine.presets(), "story": py_engine.story()}))';
  const p = spawnSync(python, ['-c', code], { cwd: root, encoding: 'utf8' });
  if (p.status !== 0) throw new Error(`${python}: ${p.stderr}`);
  return JSON.parse(p.stdout);
}
