// SPDX-License-Identifier: MIT
// Bounded load generator: CONCURRENCY keep-alive connections, each sending
// its next request when the previous answer arrived, for SECONDS seconds.
// Prints requests=N errors=N at the end.
'use strict';
const http = require('http');
const [port, seconds, concurrency] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const end = Date.now() + seconds * 1000;
let requests = 0, errors = 0, running = 0;
function one() {
  if (Date.now() >= end) {
    if (--running === 0) { console.log(`requests=${requests} errors=${errors}`); agent.destroy(); }
    return;
  }
  http.get({ host: '127.0.0.1', port, path: `/r${requests}`, agent }, (res) => {
    res.resume();
    res.on('end', () => { if (res.statusCode === 200) requests++; else errors++; one(); });
  }).on('error', () => { errors++; setTimeout(one, 10); });
}
for (let i = 0; i < concurrency; i++) { running++; one(); }
