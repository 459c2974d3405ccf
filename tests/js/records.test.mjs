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

test("a fleet's JSON rows (the build-time snapshot's) read as the worker's tables", () => {
  // the worker's answer (protocol Job: typed columns) and the snapshot's (handle: JSON rows) of
  // the same fleets, one behind a router and one of prefill/decode pools
  const code = `
import json
from array import array
from py_engine.app.protocol import Job, handle
def cols(x, bufs):
    if isinstance(x, dict):
        if "$buf" in x:
            a = array("B" if x["type"] == "u8" else "d"); a.frombytes(bufs[x["$buf"]]); return list(a)
        return {k: cols(v, bufs) for k, v in x.items()}
    return [cols(v, bufs) for v in x] if isinstance(x, list) else x
out = []
for cluster in ({"replicas": 3, "router": "llm_d"}, {"prefill": {"replicas": 1}, "decode": {"replicas": 2}}):
    req = {"method": "simulate", "params": {"scenario": {"workload": {"requests": 24}, "cluster": cluster}}}
    job = Job(json.dumps(req))
    while (done := job.step()) is None:
        pass
    text, bufs = done
    out.append([handle(req)["result"], cols(json.loads(text)["result"], bufs)])
print(json.dumps(out))`;
  const p = spawnSync(process.env.PYTHON || path.join(root, '.venv/bin/python'), ['-c', code], { cwd: root, encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  const plain = (t) => ({ n: t.$table, columns: Object.fromEntries(Object.entries(t.columns).map(([k, v]) => [k, Array.from(v)])) });
  for (const [rows, worker] of JSON.parse(p.stdout)) {
    const tables = asTables(rows);
    assert.deepEqual(plain(tables.requests), plain(worker.requests));
    assert.ok('replica' in tables.requests.columns);
    assert.equal(tables.replicas.length, worker.replicas.length);
    tables.replicas.forEach((r, i) => assert.deepEqual(plain(r.passes_log), plain(worker.replicas[i].passes_log)));
    assert.deepEqual(toRows(asTables(rows)), rows);     // and back (Download JSON of a fleet)
    assert.deepEqual(toRows(worker), rows);
  }
});
