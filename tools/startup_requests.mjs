// Prints, as JSON, every engine request the page makes before its engine is live, for each page
// state given: the page's own request builders (web/engine/requests.js) run here in Node, so the
// build-time snapshot is computed from the one definition the page uses.
//
//   node tools/startup_requests.mjs < {schema, presets, story, figures, searches}  -> [{key, request, first}, ...]
//
// first: the default view's first picture needs it, and who preloads its answer: "boot" (every
// page's boot asks it: index.html) or "main" (the default view's main run: engine/start.js, only
// there); null otherwise. See firstDrawRequests.
//
// key is the request's canonical JSON as the page computes it (the snapshot index is keyed by it).

import { startupRequests, firstDrawRequests, canonical } from '../web/engine/requests.js';
import { makeContext } from '../web/state/context.js';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { schema, presets, story, figures, searches } = JSON.parse(input);
const ctx = makeContext(schema, presets, figures, story);
const first = new Map(Object.entries(firstDrawRequests(ctx))
  .flatMap(([group, requests]) => requests.map((r) => [canonical(r), group])));
process.stdout.write(JSON.stringify(startupRequests(ctx, searches).map((request) => {
  const key = canonical(request);
  return { key, request, first: first.get(key) ?? null };
})));
