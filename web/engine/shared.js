// The engine in a SharedWorker: one Python for every page of this site open in the browser (three
// embedded figures on a blog post boot it once). Its console is forwarded to the pages.
import { createHost } from './host.js';
import './boot.js';    // fetched beside host.js, not after it
import './fetch.js';

const host = createHost({ forwardConsole: true });
self.addEventListener('securitypolicyviolation', (e) =>
  console.error(`CSP violation in the engine worker: ${e.violatedDirective} blocked ${e.blockedURI}`));
self.onconnect = (e) => host.addPort(e.ports[0]);
host.start();
