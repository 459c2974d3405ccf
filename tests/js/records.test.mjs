// Tables: the JSON rows the native engine returns and the tables the page reads are the same data.
import test from 'node:test';
import assert from 'node:assert/strict';
import { engine } from './engine.mjs';
import { setRecords, asTables, toRows, rowOf, count } from '../../web/state/records.js';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const { schema } = engine();
setRecords(schema.records);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('rows -> tables -> rows is the identity on a real compare', () => {
  const code = 'import json, py_engine; print(json.dumps(py_engine.compare({"scheduler": "vllm", "server": {"kv_tokens": 3000}}, ["static", "continuous", "vllm"])))';
  const p = spawnSync(process.env.PYTHON || path.join(root, '.venv/bin/python'), ['-c', code], { cwd: root, encoding: 'utf8' });
  const native = JSON.parse(p.stdout);
  const tables = asTables(native);
  assert.equal(count(tables.vllm.requests), native.vllm.requests.length);
  assert.deepEqual(rowOf(tables.static.requests, 5), native.static.requests[5]);
  assert.deepEqual(toRows(tables), native);
});
