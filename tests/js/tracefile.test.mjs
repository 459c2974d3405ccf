// The reader's own trace file: CSV and JSONL parsed in the page, bad lines named, and the engine's
// messages about an item turned back into the file's line.
import test from 'node:test';
import assert from 'node:assert/strict';
import { parseTrace, lineOf } from '../../web/state/tracefile.js';

test('CSV with optional columns, blank lines skipped', () => {
  const r = parseTrace('t.csv', 'arrive,prompt,out,prefix_id\n0,10,3,1\n\n2.5,20,4,\n');
  assert.deepEqual(r.items, [{ arrive: 0, prompt: 10, out: 3, prefix_id: 1 }, { arrive: 2.5, prompt: 20, out: 4 }]);
  assert.deepEqual(r.lines, [2, 4]);
  assert.equal(r.format, 'CSV');
});

test('JSONL, one object a line', () => {
  const r = parseTrace('t.jsonl', '{"arrive":0,"prompt":5,"out":2}\n{"arrive":1,"prompt":6,"out":1,"priority":2}\n');
  assert.equal(r.items.length, 2);
  assert.equal(r.items[1].priority, 2);
  assert.match(parseTrace('t.jsonl', '{"arrive":0}\nnope\n').error, /t\.jsonl line 2: not a JSON object/);
});

test('bad files get the line and what is wrong', () => {
  assert.match(parseTrace('t.csv', 'arrive,prompt\n0,1\n').error, /line 1: the header needs out/);
  assert.match(parseTrace('t.csv', 'arrive,prompt,out,colour\n0,1,1,red\n').error, /unknown column colour/);
  assert.match(parseTrace('t.csv', 'arrive,prompt,out\n0,1\n').error, /line 2: 2 values, the header has 3/);
  assert.match(parseTrace('t.csv', 'arrive,prompt,out\n').error, /no requests/);
});

test("the engine's item index becomes the file's line", () => {
  const msg = 'workload.items[1].prompt = 0: must be an integer from 1 to 10,000,000';
  assert.equal(lineOf(msg, 't.csv', [2, 4]), 't.csv line 4: prompt = 0: must be an integer from 1 to 10,000,000');
});

test('a byte-order mark (Excel writes one) is not part of the first column; extra fields are refused', () => {
  const r = parseTrace('t.csv', '\uFEFFarrive,prompt,out\n0,10,3\n');
  assert.deepEqual(r.items, [{ arrive: 0, prompt: 10, out: 3 }]);
  assert.match(parseTrace('t.csv', 'arrive,prompt,out\n0,10,3,9\n').error, /line 2: 4 values, the header has 3/);
  assert.match(parseTrace('t.csv', 'arrive,prompt,out\n0,10\n').error, /line 2: 2 values, the header has 3/);
});

test('a file beyond the page\'s limit is refused at the first request too many, naming the limit', () => {
  const csv = 'arrive,prompt,out\n' + Array.from({ length: 30 }, (_, i) => `${i},10,2`).join('\n');
  const r = parseTrace('big.csv', csv, 25);
  assert.match(r.error, /^big\.csv line 27: more than 25 requests, the page's limit/);
  const jsonl = Array.from({ length: 30 }, (_, i) => JSON.stringify({ arrive: i, prompt: 5, out: 1 })).join('\n');
  assert.match(parseTrace('big.jsonl', jsonl, 30).format, /JSONL/);     // exactly at the limit: fine
  assert.match(parseTrace('big.jsonl', jsonl + '\n{"arrive":99,"prompt":5,"out":1}', 30).error, /line 31: more than 30/);
});
