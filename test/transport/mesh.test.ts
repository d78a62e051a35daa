// Real processes and sockets: the test process is rank 0 and spawns peers (peer.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomFillSync } from 'node:crypto';
import * as net from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import { encodeFrame } from '../../src/runtime/transport/frame.js';
import { Worker } from 'node:worker_threads';
import { startNode } from '../../src/runtime/launch/cluster.js';
import { spawnLocalNodes } from '../../src/runtime/launch/spawn.js';
import { createTcpTransport } from '../../src/runtime/transport/tcp.js';
import { envRendezvous, formatHostPort, launcherRendezvous } from '../../src/runtime/transport/rendezvous.js';
import { newSecret } from '../../src/runtime/transport/auth.js';
import { runMesh, TAG_LOST, TAG_QUIT, TAG_REPORT, TAG_STAMP, type MeshReport } from './fixture.js';
import { alive, cleanEnv, PEER, run, sleep } from './helpers.js';

const quitAll = (t: { size: number; send: (to: number, tag: number, b: Uint8Array) => void }) => {
  for (let r = 1; r < t.size; r++) t.send(r, TAG_QUIT, new Uint8Array(0));
};

test('3 processes form a mesh and exchange messages all-to-all in order; clean close is not a loss', async () => {
  const logs: string[] = [];
  const { transport: t, children } = await startNode({ nodes: 3, argv: [PEER, 'mesh', '500'], env: cleanEnv(), log: (m) => logs.push(m) });
  const lost: number[] = [];
  t.onPeerLost((r) => lost.push(r));
  const reports: MeshReport[] = [];
  let allReports!: () => void;
  const gotAll = new Promise<void>((r) => (allReports = r));
  reports.push(
    await runMesh(t, 500, (_from, tag, body) => {
      if (tag === TAG_REPORT) reports.push(JSON.parse(Buffer.from(body).toString()) as MeshReport);
      if (reports.length === 3) allReports();
    }),
  );
  if (reports.length === 3) allReports();
  await gotAll;
  for (const r of reports) {
    assert.deepEqual(r.errors, [], `rank ${r.rank}`);
    assert.deepEqual(r.received, [500, 500, 500], `rank ${r.rank}`);
    // one machine: every link is a Unix socket
    assert.equal(r.localLinks, 2, `rank ${r.rank}`);
  }
  const exits: [number, number | null][] = [];
  children!.on('exit', (rank: number, code: number | null) => exits.push([rank, code]));
  quitAll(t);
  await children!.exited();
  assert.deepEqual(exits.sort(), [[1, 0], [2, 0]]);
  await sleep(50);
  assert.deepEqual(lost, [], 'peers that said goodbye are not reported lost');
  await t.close();
  assert.deepEqual(logs, []);
});

test('ranks link over TCP with LUNA_LOCAL_SOCKETS=0, and when the local socket cannot be reached', async () => {
  // the peers told not to use local sockets connect to this rank over TCP
  const off = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv({ LUNA_LOCAL_SOCKETS: '0' }) });
  const echoedOff = new Promise<number>((resolve) => off.transport.onMessage((_f, _t, body) => resolve(body[0]!)));
  off.transport.send(1, 5, new Uint8Array([7]));
  assert.equal(await echoedOff, 7);
  assert.equal(off.transport.stats().localLinks, 0);
  quitAll(off.transport);
  await off.children!.exited();
  await off.transport.close();
  // a socket path on this machine that does not exist: the peer falls back to TCP
  const secret = newSecret();
  let children: ReturnType<typeof spawnLocalNodes> | undefined;
  const rendezvous = launcherRendezvous((addr) => {
    assert.ok(addr.local, 'rank 0 listens on a local socket');
    const bogus = JSON.stringify({ machine: addr.local.machine, path: path.join(tmpdir(), `luna-missing-${process.pid}.sock`) });
    children = spawnLocalNodes(2, { argv: [PEER, 'echo'], env: cleanEnv(), secret, rendezvousAddr: formatHostPort(addr), rendezvousLocal: bogus });
  });
  const t = await createTcpTransport({ rank: 0, size: 2, secret, rendezvous });
  const echoed = new Promise<number>((resolve) => t.onMessage((_f, _t, body) => resolve(body[0]!)));
  t.send(1, 5, new Uint8Array([42]));
  assert.equal(await echoed, 42);
  assert.equal(t.stats().localLinks, 0);
  quitAll(t);
  await children!.exited();
  await t.close();
});

test('a 64 MiB payload crosses intact, and coalescing keeps many small sends in order', async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  const big = new Uint8Array(64 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 65536) randomFillSync(big, i, 65536);
  const sum = createHash('sha256').update(big).digest('hex');
  const N = 20_000;
  let next = 0;
  const errors: string[] = [];
  const done = new Promise<Uint8Array>((resolve) => {
    t.onMessage((_from, tag, body, payload) => {
      if (tag === 2) return resolve(payload!);
      const seq = new Decoder(body).u32();
      if (seq !== next) errors.push(`got ${seq}, expected ${next}`);
      next++;
    });
  });
  const before = t.stats().socketWrites;
  const enc = new Encoder();
  for (let i = 0; i < N; i++) t.send(1, 1, enc.reset().u32(i).finish());
  t.send(1, 2, new Uint8Array([9]), big);
  await Promise.resolve(); // let the per-tick flush run
  const writes = t.stats().socketWrites - before;
  assert.equal(writes, 1, `${N} small messages and one payload should leave in one write, took ${writes}`);
  const back = await done;
  assert.equal(next, N);
  assert.deepEqual(errors, []);
  assert.equal(back.length, big.length);
  assert.equal(createHash('sha256').update(back).digest('hex'), sum);
  quitAll(t);
  await children!.exited();
  await t.close();
});

test('a frame another thread writes to a link\'s socket itself arrives whole among the transport\'s; refused while the transport holds unsent bytes', async () => {
  // (with a ring the link has no direct writers: ring.test.ts)
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv({ LUNA_RING: '0' }) });
  const got: number[] = [];
  let want = 0, resolve: () => void = () => {};
  t.onMessage((_from, tag, body) => { if (tag === 5) { got.push(new Decoder(body).u32()); if (got.length === want) resolve(); } });
  const link = t.directLink(1)!;
  assert.ok(link && link.fd >= 0, 'a link to rank 1');
  const words = new Int32Array(link.words);
  // from a worker thread, as an SPMD rank writes: the lock taken, one write(2) of the whole frame
  const worker = new Worker(`
    const { workerData, parentPort } = require('node:worker_threads');
    const { writeSync } = require('node:fs');
    const w = new Int32Array(workerData.words);
    parentPort.on('message', (frame) => {
      while (Atomics.compareExchange(w, 0, 0, 1) !== 0);
      const ok = Atomics.load(w, 1) === 0;
      if (ok) writeSync(workerData.fd, frame);
      Atomics.store(w, 0, 0);
      parentPort.postMessage(ok);
    });`, { eval: true, workerData: link });
  const direct = (seq: number): Promise<boolean> => new Promise((res) => { worker.once('message', res); worker.postMessage(encodeFrame(5, new Encoder().u32(seq).finish())); });
  const enc = new Encoder();
  const back = new Promise<void>((r) => { resolve = r; });
  want = 300;
  for (let i = 0; i < 300; i += 3) {
    t.send(1, 5, enc.reset().u32(i).finish());
    t.flush();
    assert.equal(await direct(i + 1), true, 'the transport holds nothing: the thread writes');
    t.send(1, 5, enc.reset().u32(i + 2).finish());
  }
  await back;
  // the peer echoed each frame whole and in the order they reached the socket
  assert.deepEqual(got, [...Array(300).keys()]);
  // bytes the kernel did not take yet stay with the transport: a direct frame would cut into them
  t.send(1, 5, new Uint8Array(8), new Uint8Array(64 * 1024 * 1024));
  t.flush();
  assert.equal(Atomics.load(words, 1), 1, 'a 64 MiB payload is still being written');
  assert.equal(await direct(-1 >>> 0), false);
  await worker.terminate();
  quitAll(t);
  await children!.exited();
  await t.close();
  // closed: its descriptor may name another file soon, nobody writes it again
  assert.equal(Atomics.load(words, 1), 2);
});

test('self-send is asynchronous and ordered', async () => {
  const { transport: t } = await startNode({ nodes: 1, env: cleanEnv() });
  const got: number[] = [];
  let inSend = false;
  const done = new Promise<void>((resolve) =>
    t.onMessage((from, _tag, body) => {
      assert.equal(from, 0);
      assert.equal(inSend, false, 'delivered re-entrantly');
      got.push(body[0]!);
      if (got.length === 100) resolve();
    }),
  );
  const body = new Uint8Array(1);
  inSend = true;
  for (let i = 0; i < 100; i++) {
    body[0] = i; // reused buffer: the transport must have copied it
    t.send(0, 1, body);
  }
  inSend = false;
  await done;
  assert.deepEqual(got, [...Array(100).keys()]);
  await t.close();
});

test('a payload the socket writes as it is goes back to its sender once written; one it copies does not', async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  const released: Uint8Array[] = [];
  const release = (p: Uint8Array): void => { released.push(p); };
  const echoed = new Map<number, Uint8Array>();
  let echo: () => void = () => {};
  t.onMessage((_from, tag, _body, payload) => { echoed.set(tag, payload!); echo(); });
  // (8 MiB: more than a same-host ring takes, so the socket's)
  const big = new Uint8Array(8 * 1024 * 1024).fill(5), small = new Uint8Array(1000).fill(6);
  assert.equal(t.send(1, 3, new Uint8Array(0), small, release), true, 'under 16 KiB: copied');
  assert.equal(t.send(1, 2, new Uint8Array(0), big, release), false, 'held until written');
  assert.deepEqual(released, [], 'never within send');
  await new Promise<void>((resolve) => { echo = () => { if (echoed.size === 2) resolve(); }; echo(); });
  // the peer had it all, so the write was done; its callback may come on a later turn than the echo
  for (let i = 0; i < 3000 && released.length === 0; i++) await sleep(10);
  assert.equal(released.length, 1, 'released once');
  assert.equal(released[0], big, 'the payload itself');
  assert.ok(echoed.get(2)!.every((x) => x === 5) && echoed.get(3)!.every((x) => x === 6));
  quitAll(t);
  await children!.exited();
  await t.close();
});

test('flush writes what is queued at once; otherwise it leaves at the end of the tick', async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  let stamped: (at: number) => void = () => {};
  t.onMessage((_from, tag, body) => { if (tag === TAG_STAMP) stamped(new Decoder(body).f64()); });
  /** When the peer got a message sent before this thread blocked for 400 ms (flushed or not). */
  const arrival = async (flush: boolean): Promise<{ at: number; blockedFrom: number; blockedTo: number }> => {
    const got = new Promise<number>((resolve) => { stamped = resolve; });
    t.send(1, TAG_STAMP, new Uint8Array(0));
    if (flush) t.flush();
    const blockedFrom = Date.now();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400); // a long computation here
    const blockedTo = Date.now();
    return { at: await got, blockedFrom, blockedTo };
  };
  const flushed = await arrival(true);
  assert.ok(flushed.at < flushed.blockedTo, `flushed: the peer got it at ${flushed.at}, this thread was blocked ${flushed.blockedFrom}..${flushed.blockedTo}`);
  const queued = await arrival(false);
  assert.ok(queued.at >= queued.blockedTo, `queued: the peer got it at ${queued.at}, before this thread was free at ${queued.blockedTo}`);
  quitAll(t);
  await children!.exited();
  await t.close();
});

test('wrong secret and garbage are refused and logged with the remote address; the mesh is unaffected', async () => {
  const logs: string[] = [];
  const secret = newSecret();
  let children: ReturnType<typeof spawnLocalNodes> | undefined;
  const impostors: Promise<unknown>[] = [];
  const rendezvous = launcherRendezvous(async (addr) => {
    // 1. A transport with the wrong secret claiming rank 1.
    impostors.push(
      createTcpTransport({ rank: 1, size: 2, secret: 'not-the-secret', rendezvous: envRendezvous({ LUNA_RENDEZVOUS: formatHostPort(addr) }), log: () => {} }).then(
        () => assert.fail('impostor joined the mesh'),
        (e: Error) => assert.match(e.message, /refused our authentication/),
      ),
    );
    // 2. Something that is not luna at all.
    impostors.push(
      new Promise<void>((resolve) => {
        const s = net.connect(addr.port, addr.host, () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
        s.resume(); // read, or the refusal (EOF) would never be seen
        s.on('error', () => {});
        s.on('close', () => resolve());
      }),
    );
    await Promise.all(impostors);
    // Then the real node.
    children = spawnLocalNodes(2, { argv: [PEER, 'echo'], env: cleanEnv(), secret, rendezvousAddr: formatHostPort(addr) });
  });
  const t = await createTcpTransport({ rank: 0, size: 2, secret, rendezvous, log: (m) => logs.push(m) });
  await Promise.all(impostors);
  const refused = logs.filter((l) => /^refused connection from 127\.0\.0\.1:\d+: /.test(l));
  assert.equal(refused.length, 2, logs.join('\n'));
  assert.ok(refused.some((l) => l.endsWith('wrong or missing secret')), logs.join('\n'));
  const echoed = new Promise<number>((resolve) => t.onMessage((_f, _t, body) => resolve(body[0]!)));
  t.send(1, 5, new Uint8Array([42]));
  assert.equal(await echoed, 42);
  quitAll(t);
  await children!.exited();
  await t.close();
});

test('a peer killed with SIGKILL is reported lost on every other rank within 5 s', async () => {
  const { transport: t, children } = await startNode({ nodes: 3, argv: [PEER, 'idle'], env: cleanEnv() });
  const start = Date.now();
  const lostHere = new Promise<[number, string]>((resolve) => t.onPeerLost((r, why) => resolve([r, why])));
  const lostAtOne = new Promise<number>((resolve) =>
    t.onMessage((from, tag, body) => {
      if (tag === TAG_LOST && from === 1) resolve(new Decoder(body).u32());
    }),
  );
  children!.children.get(2)!.kill('SIGKILL');
  const [rank, why] = await lostHere;
  assert.equal(rank, 2);
  assert.match(why, /rank 2/);
  assert.equal(await lostAtOne, 2);
  assert.ok(Date.now() - start < 5000);
  quitAll(t);
  await children!.exited();
  await t.close();
});

test('spawned nodes die with their launcher, even when it is SIGKILLed', async () => {
  const launcher = spawn(process.execPath, [PEER, 'launch', '3'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => {
    let out = '';
    launcher.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
  });
  const { pids } = JSON.parse(line) as { pids: number[] };
  assert.equal(pids.length, 2);
  assert.ok(pids.every(alive));
  launcher.kill('SIGKILL');
  const deadline = Date.now() + 5000;
  while (pids.some(alive) && Date.now() < deadline) await sleep(50);
  assert.deepEqual(pids.filter(alive), [], 'orphaned nodes');
});

test('file rendezvous: two processes started as mpirun would start them form a mesh', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'luna-rv-'));
  const env = (rank: number) =>
    cleanEnv({ OMPI_COMM_WORLD_RANK: String(rank), OMPI_COMM_WORLD_SIZE: '2', LUNA_JOB_ID: `test-${process.pid}`, LUNA_RENDEZVOUS_DIR: dir });
  // Rank 1 first: it must wait for rank 0's file.
  const one = run(process.execPath, [PEER, 'mesh', '100'], env(1));
  await sleep(300);
  const zero = await run(process.execPath, [PEER, 'mesh', '100'], env(0));
  const r1 = await one;
  assert.equal(zero.code, 0, zero.stderr);
  assert.equal(r1.code, 0, r1.stderr);
  const m = /MESH-OK (.*)/.exec(zero.stdout);
  assert.ok(m, zero.stdout);
  for (const rep of JSON.parse(m[1]!) as MeshReport[]) assert.deepEqual(rep.received, [100, 100]);
  await rm(dir, { recursive: true, force: true });
});
