// SPDX-License-Identifier: MIT
// A worker thread and the main thread hand a token back and forth ROUNDS
// times (argv[2], default 500) with Atomics.wait/Atomics.notify on shared
// memory: the futex traffic of a runtime whose threads wait for each other.
// Then, with FILES (argv[3]) given, reads this file FILES times at once
// through libuv's thread pool. Prints rounds=N (files=M) when done.
'use strict';
const { Worker, isMainThread, workerData } = require('worker_threads');

if (isMainThread) {
	const rounds = Number(process.argv[2] || 500);
	const shared = new Int32Array(new SharedArrayBuffer(8));
	const worker = new Worker(__filename, { workerData: { shared, rounds } });
	for (let i = 0; i < rounds; i++) {
		// wait for the worker's turn to end (slot 0 back to 0), then pass
		while (Atomics.load(shared, 0) !== 0)
			Atomics.wait(shared, 0, 1);
		Atomics.store(shared, 0, 1);
		Atomics.notify(shared, 0);
	}
	while (Atomics.load(shared, 0) !== 0)
		Atomics.wait(shared, 0, 1);
	const files = Number(process.argv[3] || 0);
	worker.on('exit', async (code) => {
		if (files) {
			const fs = require('fs');
			const reads = [];
			for (let i = 0; i < files; i++)
				reads.push(fs.promises.readFile(__filename));
			await Promise.all(reads);
			console.log(`rounds=${rounds} files=${files}`);
		} else {
			console.log(`rounds=${rounds}`);
		}
		process.exitCode = code;
	});
} else {
	const { shared, rounds } = workerData;
	for (let i = 0; i < rounds; i++) {
		while (Atomics.load(shared, 0) !== 1)
			Atomics.wait(shared, 0, 0);
		Atomics.store(shared, 0, 0);
		Atomics.notify(shared, 0);
	}
}
