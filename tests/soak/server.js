// SPDX-License-Identifier: MIT
// Soak target: an HTTP server on 127.0.0.1 that does a little real work per
// request (a file read, a small JSON body) and reports its port on stdout.
'use strict';
const http = require('http');
const fs = require('fs');
let served = 0;
const server = http.createServer((req, res) => {
  fs.readFile('/proc/self/stat', (err, data) => {
    served++;
    const body = JSON.stringify({ served, bytes: err ? 0 : data.length, url: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(`port=${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => { console.log(`served=${served}`); process.exit(0); }));
