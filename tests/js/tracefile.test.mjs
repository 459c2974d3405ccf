// The page's side of a reader's trace file: the engine's messages about an item turned back into
// the file's line. (The file is parsed by the engine: tests/engine/test_tracefile.py.)
import test from 'node:test';
import assert from 'node:assert/strict';
import { lineOf } from '../../web/state/tracefile.js';

test("the engine's item index becomes the file's line", () => {
  const msg = 'workload.items[1].prompt = 0: must be an integer from 1 to 10,000,000';
  assert.equal(lineOf(msg, 't.csv', [2, 4]), 't.csv line 4: prompt = 0: must be an integer from 1 to 10,000,000');
});

