// "Latest call wins": each start() supersedes the previous one; a superseded task sees
// token.stale and stops, and the engine calls it made with token.signal are cancelled in the
// engine too. One helper for every stream of work the page can restart (the main run, the side
// figures, the KV calculator, playback).

export function latest() {
  let gen = 0;
  let controller = null;
  return {
    /** Begin a new task; every earlier token becomes stale and its engine calls are cancelled. */
    start() {
      controller?.abort();
      controller = new AbortController();
      const my = ++gen;
      const { signal } = controller;
      return { get stale() { return my !== gen; }, signal };
    },
    /** Make every outstanding token stale. */
    cancel() { gen++; controller?.abort(); controller = null; },
  };
}

/**
 * Serialise an async job so one runs at a time; calls that arrive meanwhile collapse into one
 * more run with the latest inputs (a dragged slider becomes two runs, not twenty).
 */
export function coalesce(job, { onBusy = () => {}, onIdle = () => {} } = {}) {
  let loop = null;
  let again = false;
  return function run() {
    if (loop) { again = true; return loop; }
    onBusy();
    loop = (async () => {
      try { do { again = false; await job(); } while (again); } finally { loop = null; onIdle(); }
    })();
    return loop;
  };
}
