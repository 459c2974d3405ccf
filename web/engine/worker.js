// The engine in a dedicated Web Worker (browsers without SharedWorker, or where one is refused:
// a partitioned cross-site frame): one page, one Python.
// A CSP violation inside a worker reaches no page listener: report it loudly from here.
import { createHost } from './host.js';
import './boot.js';    // fetched beside host.js, not after it
import './fetch.js';

self.addEventListener('securitypolicyviolation', (e) =>
  console.error(`CSP violation in the engine worker: ${e.violatedDirective} blocked ${e.blockedURI}`));

const host = createHost();
host.addPort(self);
host.start();
