// SPDX-License-Identifier: MIT
// A small Node host workload for kprof: what a host runtime does on behalf
// of its guests. Synchronous and asynchronous file I/O, a pipe to a child
// process, a worker thread. Output is deterministic (byte-identical from run
// to run) so a test can compare it with and without the profiler.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn } = require('child_process');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

function digest(buf) {
	return crypto.createHash('sha256').update(buf).digest('hex').slice(0, 16);
}

if (!isMainThread) {
	// Worker: sum a shared array and read a file, then answer.
	const data = fs.readFileSync(workerData.file);
	parentPort.postMessage({ bytes: data.length, digest: digest(data) });
	return;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kprof-node-'));
const rounds = Number(process.env.KPROF_NODE_ROUNDS || 200);

// Synchronous file I/O: write, append, read back, stat.
const file = path.join(dir, 'sync.bin');
const block = Buffer.alloc(4096, 0x61);
fs.writeFileSync(file, '');
const fd = fs.openSync(file, 'a');
for (let i = 0; i < rounds; i++) fs.writeSync(fd, block);
fs.closeSync(fd);
const syncData = fs.readFileSync(file);
console.log(`sync: wrote ${rounds} blocks, read ${syncData.length} bytes, size ${fs.statSync(file).size}, ${digest(syncData)}`);

async function asyncIo() {
	const afile = path.join(dir, 'async.txt');
	const handle = await fs.promises.open(afile, 'w');
	for (let i = 0; i < rounds; i++) await handle.write(`line ${i}\n`);
	await handle.close();
	const text = await fs.promises.readFile(afile, 'utf8');
	const names = await fs.promises.readdir(dir);
	console.log(`async: ${text.split('\n').length - 1} lines, ${names.length} files, ${digest(text)}`);
}

function childPipe() {
	// A child process fed through a pipe: it echoes what it reads.
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ['-e', 'process.stdin.pipe(process.stdout)'],
			{ stdio: ['pipe', 'pipe', 'inherit'] });
		const chunks = [];
		child.stdout.on('data', (c) => chunks.push(c));
		child.on('error', reject);
		child.on('close', (code) => {
			const out = Buffer.concat(chunks);
			console.log(`child: exit ${code}, echoed ${out.length} bytes, ${digest(out)}`);
			resolve();
		});
		for (let i = 0; i < rounds; i++) child.stdin.write(`message ${i}\n`);
		child.stdin.end();
	});
}

function worker() {
	return new Promise((resolve, reject) => {
		const w = new Worker(__filename, { workerData: { file } });
		w.on('message', (m) => console.log(`worker: read ${m.bytes} bytes, ${m.digest}`));
		w.on('error', reject);
		w.on('exit', (code) => { console.log(`worker: exit ${code}`); resolve(); });
	});
}

(async () => {
	await asyncIo();
	await childPipe();
	await worker();
	fs.rmSync(dir, { recursive: true });
	console.log('done');
})().catch((e) => { console.error(e); process.exit(1); });
