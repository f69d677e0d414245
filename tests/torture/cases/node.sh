# SPDX-License-Identifier: MIT
# node: worker_threads (messages, a SharedArrayBuffer with Atomics.wait and
# notify), child_process (spawn, execFile, exec through a shell, fork with
# IPC, spawnSync), a net server and 12 clients on 127.0.0.1 echoing 256 KiB
# each, an http server and client, fs promises, zlib and crypto in libuv's
# thread pool. Loopback only, ephemeral ports, everything bounded.
# torture: quick timeout=180
. "$TORTURE_CASES/lib.sh"
cat > child.js <<'EOF'
process.on('message', (m) => {
	if (m === 'bye') { process.disconnect(); return; }
	process.send({ doubled: m * 2 });
});
EOF
cat > main.js <<'EOF'
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
if (!isMainThread) {
	const { n, shared } = workerData;
	let s = 0;
	for (let i = 1; i <= n * 100000; i++) s += i % 7;
	const a = new Int32Array(shared);
	Atomics.add(a, 0, n);
	Atomics.notify(a, 1);
	parentPort.postMessage({ n, s });
	return;
}
const cp = require('child_process');
const net = require('net');
const http = require('http');
const fs = require('fs/promises');
const zlib = require('zlib');
const crypto = require('crypto');
const { promisify } = require('util');

async function workers() {
	const shared = new SharedArrayBuffer(8);
	const results = await Promise.all([1, 2, 3, 4].map((n) => new Promise((res, rej) => {
		const w = new Worker(__filename, { workerData: { n, shared } });
		w.on('message', res);
		w.on('error', rej);
	})));
	const a = new Int32Array(shared);
	console.log('workers', JSON.stringify(results), 'shared', Atomics.load(a, 0));
}

async function children() {
	const spawned = await new Promise((res) => {
		const c = cp.spawn('sh', ['-c', 'echo from sh; read x; echo "read $x"; exit 3']);
		let out = '';
		c.stdout.on('data', (d) => { out += d; });
		c.stdin.end('line\n');
		c.on('close', (code) => res([out.trim().split('\n').join('|'), code]));
	});
	console.log('spawn', JSON.stringify(spawned));
	const { stdout } = await promisify(cp.execFile)(process.execPath, ['-e', 'console.log(6 * 7)']);
	console.log('execFile', stdout.trim());
	const ex = await promisify(cp.exec)('seq 1 1000 | sort -rn | head -n 1');
	console.log('exec', ex.stdout.trim());
	const sync = cp.spawnSync('sh', ['-c', 'echo sync; exit 5'], { encoding: 'utf8' });
	console.log('spawnSync', sync.stdout.trim(), sync.status);
	const forked = await new Promise((res) => {
		const c = cp.fork('./child.js');
		const got = [];
		c.on('message', (m) => {
			got.push(m.doubled);
			if (got.length === 20) c.send('bye');
		});
		c.on('exit', (code) => res([got.reduce((x, y) => x + y, 0), code]));
		for (let i = 1; i <= 20; i++) c.send(i);
	});
	console.log('fork', JSON.stringify(forked));
}

async function sockets() {
	const server = net.createServer((s) => s.pipe(s));
	await new Promise((res) => server.listen(0, '127.0.0.1', res));
	const port = server.address().port;
	const payload = Buffer.alloc(256 * 1024, 'abcdefgh');
	const one = () => new Promise((res, rej) => {
		const c = net.connect(port, '127.0.0.1');
		let n = 0;
		const h = crypto.createHash('sha256');
		c.on('data', (d) => {
			n += d.length;
			h.update(d);
			if (n === payload.length) c.end();
		});
		c.on('end', () => res(`${n}:${h.digest('hex').slice(0, 12)}`));
		c.on('error', rej);
		c.write(payload);
	});
	const got = await Promise.all(Array.from({ length: 12 }, one));
	console.log('net', got.length, new Set(got).size, got[0]);
	server.close();

	const hs = http.createServer((req, res) => {
		res.setHeader('content-type', 'text/plain');
		res.end(`you asked ${req.method} ${req.url}\n`);
	});
	await new Promise((res) => hs.listen(0, '127.0.0.1', res));
	const get = (path) => new Promise((res, rej) => {
		http.get({ host: '127.0.0.1', port: hs.address().port, path, agent: false }, (r) => {
			let body = '';
			r.on('data', (d) => { body += d; });
			r.on('end', () => res(`${r.statusCode} ${body.trim()}`));
		}).on('error', rej);
	});
	for (const p of ['/a', '/b?x=1']) console.log('http', await get(p));
	hs.close();
}

async function files() {
	await fs.mkdir('d/e', { recursive: true });
	const data = Buffer.from(Array.from({ length: 20000 }, (_, i) => `row ${i}\n`).join(''));
	await Promise.all(Array.from({ length: 16 }, (_, i) => fs.writeFile(`d/e/f${i}`, data)));
	const back = await Promise.all(Array.from({ length: 16 }, (_, i) => fs.readFile(`d/e/f${i}`)));
	console.log('files', back.every((b) => b.equals(data)), (await fs.readdir('d/e')).length);
	const gz = await promisify(zlib.gzip)(data);
	const un = await promisify(zlib.gunzip)(gz);
	console.log('zlib', un.equals(data));
	const key = await promisify(crypto.pbkdf2)('pw', 'salt', 20000, 16, 'sha256');
	console.log('pbkdf2', key.toString('hex'));
}

(async () => {
	await workers();
	await children();
	await sockets();
	await files();
	await new Promise((res) => setTimeout(res, 50));
	console.log('done');
	process.exitCode = 4;
})().catch((e) => { console.log('error', e && e.stack); process.exitCode = 1; });
EOF
status "node" node main.js
