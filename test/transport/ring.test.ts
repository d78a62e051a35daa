// Shared-memory rings between nodes of one machine (transport/ring.ts), with real processes: the
// test process is rank 0 and its peer (peer.ts echo) sends every message back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import { startNode } from '../../src/runtime/launch/cluster.js';
import type { TcpTransport } from '../../src/runtime/transport/tcp.js';
import { RING_CAPACITY, RING_START, ringsAvailable } from '../../src/runtime/transport/ring.js';
import { TAG_QUIT } from './fixture.js';
import { cleanEnv, PEER, sleep } from './helpers.js';

const TAG = 7;

/** A payload whose bytes say which message carries it. */
function payloadFor(seq: number, bytes: number): Uint8Array {
  const p = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) p[i] = (seq * 31 + i) & 0xff;
  return p;
}

function payloadOk(seq: number, p: Uint8Array | undefined, bytes: number): boolean {
  if (bytes === 0) return p === undefined;
  if (!p || p.length !== bytes) return false;
  for (let i = 0; i < bytes; i += 97) if (p[i] !== ((seq * 31 + i) & 0xff)) return false;
  return p[bytes - 1] === ((seq * 31 + bytes - 1) & 0xff);
}

/** Echoes come back in order; resolves once `want` arrived. */
class Echoes {
  next = 0;
  errors: string[] = [];
  private want = 0;
  private done: () => void = () => {};
  constructor(t: TcpTransport, private readonly size: (seq: number) => number) {
    t.onMessage((_from, tag, body, payload) => {
      if (tag !== TAG) return;
      const seq = new Decoder(body).u32();
      if (seq !== this.next) this.errors.push(`got ${seq}, expected ${this.next}`);
      else if (!payloadOk(seq, payload, size(seq))) this.errors.push(`message ${seq}: payload damaged`);
      this.next = seq + 1;
      if (this.next >= this.want) this.done();
    });
  }
  until(want: number): Promise<void> {
    this.want = want;
    return this.next >= want ? Promise.resolve() : new Promise((r) => { this.done = r; });
  }
}

/** Round trips until rank 0's ring to rank 1 is accepted (the acceptance and the echoes race). */
async function ringUp(t: TcpTransport, echoes: Echoes, send: (seq: number) => void): Promise<void> {
  for (let i = 0; i < 500 && t.stats().ringLinks === 0; i++) {
    send(echoes.next);
    await echoes.until(echoes.next + 1);
  }
}

test('ring: messages keep their order across the ring and the socket (large payloads, a full ring, a receiver asleep between bursts)', { skip: !ringsAvailable() && 'the shared-memory addon is not built' }, async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  // every 7th message carries more than a ring entry may (it goes by the socket), every 5th a few
  // bytes; the overflow's messages 32 KiB each
  let overflowFrom = Infinity;
  const size = (seq: number): number => (seq >= overflowFrom ? 32 * 1024 : seq % 7 === 3 ? RING_CAPACITY / 4 + 1 : seq % 5 === 1 ? 100 : 0);
  const echoes = new Echoes(t, size);
  const enc = new Encoder();
  const send = (seq: number): void => {
    const n = size(seq);
    t.send(1, TAG, enc.reset().u32(seq).finish(), n ? payloadFor(seq, n) : undefined);
  };
  await ringUp(t, echoes, send);
  assert.equal(t.stats().ringLinks, 1, 'rank 0 writes into a ring to rank 1');
  const before = t.stats();
  let seq = echoes.next;
  for (let burst = 0; burst < 12; burst++) {
    for (let i = 0; i < 50; i++) send(seq++);
    await echoes.until(seq);
    await sleep(20); // both sides stop polling: the next burst rings the doorbell
  }
  // more messages at once than the ring holds: the rest go by the socket, after it
  const burst = (2 * RING_CAPACITY) / (32 * 1024);
  overflowFrom = seq;
  for (let i = 0; i < burst; i++) send(seq++);
  await echoes.until(seq);
  const after = t.stats();
  assert.deepEqual(echoes.errors.slice(0, 5), []);
  assert.equal(echoes.next, seq);
  // (of the bursts' 600, 514 are small; the overflow's fill a ring of RING_START first)
  assert.ok(after.ringFrames - before.ringFrames >= 500, `most small messages went through the ring (${after.ringFrames - before.ringFrames})`);
  assert.ok(after.framesSent - before.framesSent >= 12 * 7, `the large payloads and the overflow went by the socket (${after.framesSent - before.framesSent} frames)`);
  assert.ok(after.doorbells - before.doorbells >= 6, `a sleeping receiver was rung (${after.doorbells - before.doorbells} doorbells)`);
  // a thread that writes the socket itself: this side stops writing its ring (a direct frame
  // must not overtake an entry), and may write at once, the ring being read empty
  const link = t.directLink(1);
  assert.ok(link, 'a direct link to rank 1');
  assert.equal(Atomics.load(new Int32Array(link.words), 1), 0, 'nothing the transport wrote is unread');
  for (let i = 0; i < 100; i++) send(seq++);
  await echoes.until(seq);
  assert.deepEqual(echoes.errors.slice(0, 5), []);
  assert.equal(t.stats().ringFrames, after.ringFrames, 'no ring entries after the direct link');
  t.send(1, TAG_QUIT, new Uint8Array(0));
  await children!.exited();
  await t.close();
});

test('ring: a DF-sized payload (0.96 MB, a PIC border plane) crosses through the ring, in one entry, intact', { skip: !ringsAvailable() && 'the shared-memory addon is not built' }, async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  const PLANE = 960_000;
  let big = false;
  const echoes = new Echoes(t, () => (big ? PLANE : 0));
  const enc = new Encoder();
  const send = (seq: number): void => { t.send(1, TAG, enc.reset().u32(seq).finish(), big ? payloadFor(seq, PLANE) : undefined); };
  try {
    await ringUp(t, echoes, send);
    assert.equal(t.stats().ringLinks, 1, 'rank 0 writes into a ring to rank 1');
    big = true;
    const before = t.stats();
    let seq = echoes.next;
    // one at a time, as a step's border planes go: each finds room in the ring
    for (let i = 0; i < 12; i++) {
      send(seq++);
      await echoes.until(seq);
    }
    const after = t.stats();
    assert.deepEqual(echoes.errors.slice(0, 5), []);
    assert.equal(after.ringFrames - before.ringFrames, 12, 'every plane went through the ring');
    const socketFrames = after.framesSent - before.framesSent - (after.doorbells - before.doorbells);
    assert.ok(socketFrames <= 1, `no plane went by the socket (${socketFrames} frames beside the doorbells)`);
  } finally {
    t.send(1, TAG_QUIT, new Uint8Array(0));
    await children!.exited();
    await t.close();
  }
});

test('ring: small messages keep to the start of the ring however many come; a large payload after them grows it and crosses in one entry, intact', { skip: !ringsAvailable() && 'the shared-memory addon is not built' }, async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  const PLANE = 960_000, SMALL = 2048;
  let big = false;
  const echoes = new Echoes(t, () => (big ? PLANE : SMALL));
  const enc = new Encoder();
  const send = (seq: number): void => { t.send(1, TAG, enc.reset().u32(seq).finish(), payloadFor(seq, big ? PLANE : SMALL)); };
  try {
    await ringUp(t, echoes, send);
    assert.equal(t.stats().ringLinks, 1, 'rank 0 writes into a ring to rank 1');
    let seq = echoes.next;
    // 12 times the small ring's bytes, so it wrapped many times
    const first = t.stats();
    for (let burst = 0; burst < (12 * RING_START) / (50 * SMALL); burst++) {
      for (let i = 0; i < 50; i++) send(seq++);
      await echoes.until(seq);
    }
    const small = t.stats();
    assert.deepEqual(echoes.errors.slice(0, 5), []);
    assert.ok(small.ringFrames - first.ringFrames >= (11 * RING_START) / SMALL, `the small messages went through the ring (${small.ringFrames - first.ringFrames})`);
    assert.equal(small.ringBytes, RING_START, 'the ring wrapped at its start size');
    big = true;
    for (let i = 0; i < 6; i++) {
      send(seq++);
      await echoes.until(seq);
    }
    const grown = t.stats();
    assert.deepEqual(echoes.errors.slice(0, 5), []);
    assert.equal(grown.ringBytes, RING_CAPACITY, 'the ring grew for the planes');
    assert.equal(grown.ringFrames - small.ringFrames, 6, 'every plane went through the ring');
    const socketFrames = grown.framesSent - small.framesSent - (grown.doorbells - small.doorbells);
    assert.ok(socketFrames <= 1, `no plane went by the socket (${socketFrames} frames beside the doorbells)`);
    // small ones again, over the grown ring's whole area
    big = false;
    for (let burst = 0; burst < (2 * RING_CAPACITY) / (50 * SMALL); burst++) {
      for (let i = 0; i < 50; i++) send(seq++);
      await echoes.until(seq);
    }
    assert.deepEqual(echoes.errors.slice(0, 5), []);
    assert.equal(echoes.next, seq);
  } finally {
    t.send(1, TAG_QUIT, new Uint8Array(0));
    await children!.exited();
    await t.close();
  }
});

test('ring: a peer killed while this node polls its ring is reported lost, and the polling stops', { skip: !ringsAvailable() && 'the shared-memory addon is not built' }, async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv() });
  const echoes = new Echoes(t, () => 0);
  const enc = new Encoder();
  let seq = 0;
  const send = (s: number): void => { t.send(1, TAG, enc.reset().u32(s).finish()); };
  await ringUp(t, echoes, send);
  seq = echoes.next;
  const lost = new Promise<[number, string]>((resolve) => t.onPeerLost((r, why) => resolve([r, why])));
  // keep messages flowing, so this node polls, and kill the peer in the middle
  let flowing = true;
  const pump = async (): Promise<void> => { while (flowing) { send(seq++); await new Promise((r) => setImmediate(r)); } };
  const pumping = pump();
  await echoes.until(seq + 100);
  children!.children.get(1)!.kill('SIGKILL');
  const [rank, why] = await lost;
  flowing = false;
  await pumping;
  assert.equal(rank, 1);
  assert.match(why, /rank 1/);
  let polling = true;
  for (let i = 0; i < 100 && polling; i++) { await sleep(50); polling = t.stats().polling; }
  assert.equal(polling, false, 'nobody writes the ring any more: the node stopped polling it');
  await children!.exited();
  await t.close();
});

test('ring: a receiver that never polls (LUNA_RING_SPIN_US=0) is rung for every message it sleeps through', { skip: !ringsAvailable() && 'the shared-memory addon is not built' }, async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv({ LUNA_RING_SPIN_US: '0' }) });
  const echoes = new Echoes(t, () => 0);
  const enc = new Encoder();
  const send = (s: number): void => { t.send(1, TAG, enc.reset().u32(s).finish()); };
  await ringUp(t, echoes, send);
  const before = t.stats();
  // one at a time: each message finds its receiver asleep
  for (let i = 0; i < 300; i++) {
    send(echoes.next);
    await echoes.until(echoes.next + 1);
  }
  const after = t.stats();
  assert.deepEqual(echoes.errors, []);
  assert.equal(after.ringFrames - before.ringFrames, 300);
  assert.equal(after.doorbells - before.doorbells, 300);
  assert.equal(after.polling, false);
  t.send(1, TAG_QUIT, new Uint8Array(0));
  await children!.exited();
  await t.close();
});

test('ring: LUNA_RING=0 keeps every link on its socket', async () => {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [PEER, 'echo'], env: cleanEnv({ LUNA_RING: '0' }) });
  const echoes = new Echoes(t, () => 0);
  const enc = new Encoder();
  for (let i = 0; i < 200; i++) t.send(1, TAG, enc.reset().u32(i).finish());
  await echoes.until(200);
  assert.deepEqual(echoes.errors, []);
  const s = t.stats();
  assert.equal(s.localLinks, 1);
  assert.equal(s.ringLinks, 0);
  assert.equal(s.ringFrames, 0);
  assert.ok(t.directLink(1), 'the socket may be written directly');
  t.send(1, TAG_QUIT, new Uint8Array(0));
  await children!.exited();
  await t.close();
});
