// SPDX-License-Identifier: MIT
// The Node workload of krunner's overhead suite: a child process, then a
// loop of file I/O with a known syscall count through libuv's synchronous
// fs calls: each iteration is one read() of 1 byte from /dev/zero
// (position null: read, not pread) and one pwrite64() of 1 byte at offset 0
// of a scratch file. Prints calls=N and ns_per_call=X (loop wall time /
// calls; a warm-up of calls/10 runs first).
// Usage: node overhead_node.js --calls=N --dir=SCRATCH
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

let calls = 20000;
let dir = require('os').tmpdir();
for (const arg of process.argv.slice(2)) {
	if (arg.startsWith('--calls=')) calls = Number(arg.slice(8));
	else if (arg.startsWith('--dir=')) dir = arg.slice(6);
	else { console.error(`overhead_node: unknown argument ${arg}`); process.exit(2); }
}
if (!(calls >= 2)) { console.error('overhead_node: --calls must be >= 2'); process.exit(2); }

const child = spawnSync('/bin/true');
if (child.status !== 0) { console.error('overhead_node: /bin/true failed'); process.exit(1); }

const zero = fs.openSync('/dev/zero', 'r');
const file = fs.openSync(path.join(dir, `overhead-node-${process.pid}`), 'w');
const buf = Buffer.alloc(1);
function loop(n) {
	for (let i = 0; i < n; i++) {
		if (fs.readSync(zero, buf, 0, 1, null) !== 1) throw new Error('short read');
		if (fs.writeSync(file, buf, 0, 1, 0) !== 1) throw new Error('short write');
	}
}
const iterations = Math.floor(calls / 2);
loop(Math.max(50, Math.floor(iterations / 10)));
const t0 = process.hrtime.bigint();
loop(iterations);
const t1 = process.hrtime.bigint();
fs.closeSync(zero);
fs.closeSync(file);
fs.unlinkSync(path.join(dir, `overhead-node-${process.pid}`));
console.log(`calls=${iterations * 2}`);
console.log(`ns_per_call=${(Number(t1 - t0) / (iterations * 2)).toFixed(2)}`);
