// The SPMD layer's costs measured by rank 0: barrier, 8-byte get/put of another rank's element,
// 1 MiB memget/memput of another rank's part; on one node also the same through raw shared
// memory (an Atomics barrier, typed-array reads and copies of the same buffer) as the baseline.
// Across nodes the baseline is the raw transport between the same two ranks' threads: a round
// trip of a 16-byte message and a fetch of 1 MiB (a 1-byte request, the MiB back) over a socket of
// the kind luna links ranks of one machine with, measured in blocks alternated with the layer's
// gets and memgets (medians of the blocks), so both see the same machine state.
//   luna spmd --threads T [--nodes N] latency.ts OUT.json ITERATIONS local|remote
import { readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { MYTHREAD, THREADS, allAlloc, barrier, waitStats, type SharedArray } from 'luna-ts/spmd';
import { rawConnect, rawListen, type RawAddress } from '../../raw-socket.js';
import * as net from 'node:net';

const MiB = 1 << 20;
/** alternated blocks of the raw transport and the layer (their medians are the figures) */
const ROUNDS = 5;

function rawBarrier(v: Int32Array, threads: number): void {
  const gen = Atomics.load(v, 1);
  if (Atomics.add(v, 0, 1) === threads - 1) {
    Atomics.store(v, 0, 0);
    Atomics.add(v, 1, 1);
    Atomics.notify(v, 1);
    return;
  }
  const until = performance.now() + 0.02;
  while (Atomics.load(v, 1) === gen) if (performance.now() > until) Atomics.wait(v, 1, gen, 1);
}

export default async function main(args: string[]): Promise<void> {
  const [out, itersArg, where] = args;
  const N = Number(itersArg ?? 2000);
  const local = where !== 'remote';
  const other = THREADS - 1;
  const r: Record<string, number> = {};
  const time = (n: number, f: () => void): number => { const t0 = performance.now(); f(); return ((performance.now() - t0) * 1000) / n; };

  for (let i = 0; i < 50; i++) barrier();
  const s0 = waitStats();
  r.barrierUs = time(N, () => { for (let i = 0; i < N; i++) barrier(); });
  // the state a barrier loop runs in: ~0 when the ranks spin through, ~1 when they take turns sleeping
  const s1 = waitStats();
  r.barrierSleepsPerOp = (s1.sleeps - s0.sleeps) / N;
  r.barrierParksPerOp = (s1.parks - s0.parks) / N;
  const sync = allAlloc(2 * THREADS, { type: 'i32', block: 2 });
  if (local) {
    for (let i = 0; i < 50; i++) rawBarrier(sync.view as Int32Array, THREADS);
    r.rawBarrierUs = time(N, () => { for (let i = 0; i < N; i++) rawBarrier(sync.view as Int32Array, THREADS); });
  }
  barrier();

  // 8 bytes: an element of the last rank, read and written by rank 0
  const a = allAlloc(THREADS, { type: 'f64' });
  const big = allAlloc(THREADS * (MiB / 8), { type: 'f64', block: MiB / 8 });
  barrier();
  if (!local) {
    await remoteVsRaw(out!, N, r, a, big, other);
    return;
  }
  if (MYTHREAD === 0) {
    const n = local ? N * 50 : N;
    let s = 0;
    for (let i = 0; i < 100; i++) s += a.get(other);
    const g0 = waitStats().sleeps;
    r.getUs = time(n, () => { for (let i = 0; i < n; i++) s += a.get(other); });
    r.getSleepsPerOp = (waitStats().sleeps - g0) / n;
    r.putUs = time(n, () => { for (let i = 0; i < n; i++) a.put(other, i); });
    const buf = new Float64Array(MiB / 8);
    const reps = local ? 200 : 20;
    big.memget(buf, other * (MiB / 8));
    r.memgetGBps = MiB / 1e3 / time(reps, () => { for (let i = 0; i < reps; i++) big.memget(buf, other * (MiB / 8)); });
    r.memputGBps = MiB / 1e3 / time(reps, () => { for (let i = 0; i < reps; i++) big.memput(other * (MiB / 8), buf); });
    if (local) {
      // the same memory without the layer: where the last rank's element lies in this node's view
      const v = a.view as Float64Array, at = other * a.layout.perRank;
      r.rawGetUs = time(n, () => { for (let i = 0; i < n; i++) s += v[at]!; });
      const bv = big.view as Float64Array, bat = other * big.layout.perRank;
      r.rawCopyGBps = MiB / 1e3 / time(reps, () => { for (let i = 0; i < reps; i++) buf.set(bv.subarray(bat, bat + MiB / 8)); });
    }
    if (s === 42.5) r.never = 1; // keep the reads
    writeFileSync(out!, JSON.stringify(r));
  }
  barrier();
}

const median = (xs: number[]): number => { const v = [...xs].sort((p, q) => p - q); return v.length % 2 ? v[v.length >> 1]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2; };

/** One message of the raw baseline: [u32 length][bytes]. */
function frame(s: Socket, body: Uint8Array): void {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(body.length, 0);
  if (body.length < 16384) s.write(Buffer.concat([head, body]));
  else { s.cork(); s.write(head); s.write(body); s.uncork(); }
}

/** Calls f with each whole message's length as it arrives (its bytes are consumed, not assembled). */
function frames(s: Socket, f: (len: number) => void): void {
  let need = -1, have = 0;
  let head = Buffer.alloc(0);
  s.on('data', (c: Buffer) => {
    let at = 0;
    for (;;) {
      if (need < 0) {
        const take = Math.min(4 - head.length, c.length - at);
        head = Buffer.concat([head, c.subarray(at, at + take)]);
        at += take;
        if (head.length < 4) return;
        need = head.readUInt32LE(0);
        have = 0;
        head = Buffer.alloc(0);
      }
      const take = Math.min(need - have, c.length - at);
      have += take;
      at += take;
      if (have < need) return;
      const n = need;
      need = -1;
      f(n);
      if (at >= c.length) return;
    }
  });
}

/**
 * Rank 0 against the last rank on another node: blocks of the layer's 8-byte gets and 1 MiB
 * memgets alternated with blocks of raw round trips and raw 1 MiB fetches between the same two
 * ranks' threads; the medians of the blocks.
 */
async function remoteVsRaw(out: string, N: number, r: Record<string, number>, a: SharedArray, big: SharedArray, other: number): Promise<void> {
  const addrFile = `${out}.raw-address`;
  let server: net.Server | undefined;
  let peer: Socket | undefined;
  const blob = new Uint8Array(MiB).fill(7);
  let roundOver: (() => void) | undefined;
  if (MYTHREAD === other) {
    server = net.createServer((s) => {
      s.setNoDelay(true);
      // 1 byte: a round trip; 2 bytes: send a MiB back; empty: rank 0's round is over
      frames(s, (len) => { if (len === 0) roundOver?.(); else frame(s, len === 2 ? blob : new Uint8Array(16)); });
    });
    const at = await rawListen(server);
    writeFileSync(addrFile, JSON.stringify(at));
  }
  barrier();
  if (MYTHREAD === 0) {
    peer = rawConnect(JSON.parse(readFileSync(addrFile, 'utf8')) as RawAddress);
    await new Promise((res) => peer!.once('connect', res));
  }
  let waiting: (() => void) | undefined;
  if (peer) frames(peer, () => { const w = waiting; waiting = undefined; w?.(); });
  const ask = (len: number): Promise<void> => new Promise((res) => { waiting = res; frame(peer!, new Uint8Array(len)); });
  const gets: number[] = [], raws: number[] = [], memgets: number[] = [], rawMiB: number[] = [], puts: number[] = [], memputs: number[] = [];
  const reps = 20;
  const buf = new Float64Array(MiB / 8);
  let s = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    // rank `other` serves the raw requests from its event loop meanwhile: it waits here asynchronously
    const over = MYTHREAD === other ? new Promise<void>((res) => { roundOver = res; }) : undefined;
    if (MYTHREAD === 0) {
      let t0 = performance.now();
      for (let i = 0; i < N; i++) await ask(1);
      const raw = ((performance.now() - t0) * 1000) / N;
      t0 = performance.now();
      for (let i = 0; i < N; i++) s += a.get(other);
      const get = ((performance.now() - t0) * 1000) / N;
      t0 = performance.now();
      for (let i = 0; i < reps; i++) await ask(2);
      const rawM = (performance.now() - t0) / reps;
      t0 = performance.now();
      for (let i = 0; i < reps; i++) big.memget(buf, other * (MiB / 8));
      const mg = (performance.now() - t0) / reps;
      t0 = performance.now();
      for (let i = 0; i < N; i++) a.put(other, i);
      const put = ((performance.now() - t0) * 1000) / N;
      t0 = performance.now();
      for (let i = 0; i < reps; i++) big.memput(other * (MiB / 8), buf);
      const mp = (performance.now() - t0) / reps;
      // the first round warms both up
      if (round > 0) { raws.push(raw); gets.push(get); rawMiB.push(rawM); memgets.push(mg); puts.push(put); memputs.push(mp); }
      frame(peer!, new Uint8Array(0));
    }
    await over;
    barrier();
  }
  if (MYTHREAD === 0) {
    const g0 = waitStats().sleeps;
    for (let i = 0; i < N; i++) s += a.get(other);
    r.getSleepsPerOp = (waitStats().sleeps - g0) / N;
    r.rawRttUs = median(raws);
    r.getUs = median(gets);
    r.getVsRawRtt = r.getUs / r.rawRttUs;
    r.putUs = median(puts);
    r.rawFetchMiBms = median(rawMiB);
    r.memgetGBps = MiB / 1e6 / median(memgets);
    r.memputGBps = MiB / 1e6 / median(memputs);
    r.rawFetchGBps = MiB / 1e6 / r.rawFetchMiBms;
    r.memgetVsRaw = median(memgets) / r.rawFetchMiBms;
    if (s === 42.5) r.never = 1;
    writeFileSync(out, JSON.stringify(r));
    peer!.destroy();
  }
  barrier();
  server?.close();
}
