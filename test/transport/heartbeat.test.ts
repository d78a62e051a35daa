// Liveness with real processes: the test process is rank 0 of a 3-rank mesh of echo peers
// (peer.ts), which report every peer they lose to rank 0 (TAG_LOST).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import { startNode, type StartedNode } from '../../src/runtime/launch/cluster.js';
import { createTcpTransport } from '../../src/runtime/transport/tcp.js';
import { heartbeatMsFromEnv } from '../../src/runtime/transport/heartbeat.js';
import { envRendezvous } from '../../src/runtime/transport/rendezvous.js';
import { busyWait, TAG_BUSY, TAG_LOST, TAG_QUIT } from './fixture.js';
import { cleanEnv, PEER, sleep, within } from './helpers.js';

const TAG_PING = 7;

/** A 3-rank mesh whose losses (here and as reported by the peers) are recorded. */
async function echoMesh(childEnv: NodeJS.ProcessEnv, heartbeatMs?: number) {
  const node = await startNode({ nodes: 3, argv: [PEER, 'echo'], env: cleanEnv(childEnv), heartbeatMs });
  const t = node.transport;
  const lost: { at: number; rank: number; reason: string }[] = [];
  const waiters: (() => void)[] = [];
  const echoes = new Map<number, () => void>();
  const changed = () => waiters.splice(0).forEach((w) => w());
  t.onPeerLost((rank, reason) => {
    lost.push({ at: 0, rank, reason });
    changed();
  });
  t.onMessage((from, tag, body) => {
    if (tag === TAG_LOST) {
      const d = new Decoder(body);
      lost.push({ at: from, rank: d.u32(), reason: d.string() });
      changed();
    } else if (tag === TAG_PING || tag === TAG_BUSY) echoes.get(from)?.();
  });
  return {
    node,
    t,
    lost,
    /** Resolves once `n` losses were recorded. */
    async losses(n: number) {
      const all = async () => {
        while (lost.length < n) await new Promise<void>((r) => waiters.push(r));
        return lost;
      };
      return within(all(), 15_000, `${n} losses reported`);
    },
    /** Round trip to `rank`: the link is up and the peer responsive. */
    echo(rank: number, tag = TAG_PING, body: Uint8Array = new Uint8Array(0)) {
      const back = new Promise<void>((r) => echoes.set(rank, r));
      t.send(rank, tag, body);
      return within(back, 10_000, `echo from rank ${rank}`).catch((e: Error) => {
        throw new Error(`${e.message}; losses: ${JSON.stringify(lost)}`);
      });
    },
  };
}

function exitOf(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve([child.exitCode, child.signalCode]);
  return within(new Promise((r) => child.once('exit', (code, signal) => r([code, signal]))), 10_000, `exit of node pid ${child.pid}`);
}

async function shutdown(node: StartedNode): Promise<void> {
  for (let r = 1; r < node.transport.size; r++) node.transport.send(r, TAG_QUIT, new Uint8Array(0));
  await Promise.race([node.children!.exited(), sleep(5000)]);
  node.children!.killAll();
  await node.transport.close();
}

test('a frozen node (SIGSTOP) is reported lost by every other rank; nothing hangs, and it exits once resumed', { timeout: 30_000 }, async () => {
  const m = await echoMesh({ LUNA_HEARTBEAT_MS: '1000' });
  const frozen = m.node.children!.children.get(2)!;
  try {
    frozen.kill('SIGSTOP');
    const lost = await m.losses(2);
    assert.deepEqual(lost.map((l) => [l.at, l.rank]).sort(), [[0, 2], [1, 2]]);
    for (const l of lost) assert.match(l.reason, /^rank 2 sent nothing for \d+\.\d s \(frozen or unreachable; heartbeat timeout 1\.0 s\)$/);
    await m.echo(1); // the healthy part of the mesh is unaffected
    // Rank 0 closes while rank 2 is still stopped: this must not wait for it.
    m.t.send(1, TAG_QUIT, new Uint8Array(0));
    assert.deepEqual(await exitOf(m.node.children!.children.get(1)!), [0, null]);
    await m.t.close();
    // Resumed, the frozen node finds its links cut and stops by itself (lost rank 0: exit 3).
    frozen.kill('SIGCONT');
    assert.deepEqual(await exitOf(frozen), [3, null]);
  } finally {
    m.node.children!.killAll();
    await m.t.close();
  }
});

test('a healthy idle mesh with a short heartbeat timeout stays up over several timeout periods', { timeout: 30_000 }, async () => {
  // Ranks 1 and 2 wait 1 s for their peers, rank 0 waits 2 s: each beats often enough for the
  // most impatient peer.
  const m = await echoMesh({ LUNA_HEARTBEAT_MS: '1000' }, 2000);
  try {
    await sleep(3500);
    assert.deepEqual(m.lost, []);
    await m.echo(1);
    await m.echo(2);
    assert.deepEqual(m.lost, []);
  } finally {
    await shutdown(m.node);
  }
});

test('a peer whose main thread is busy for over a second is not reported lost', { timeout: 30_000 }, async () => {
  const m = await echoMesh({ LUNA_HEARTBEAT_MS: '3000' }, 3000);
  try {
    await m.echo(1, TAG_BUSY, new Encoder().u32(1200).finish()); // rank 1 computes for 1.2 s
    await m.echo(2);
    await m.echo(1);
    assert.deepEqual(m.lost, []);
  } finally {
    await shutdown(m.node);
  }
});

test('a node busy for longer than its own timeout reads what its peers sent before judging them', { timeout: 30_000 }, async () => {
  // Rank 0 waits 1 s for its peers (which wait 3 s for it) and computes for 1.5 s: its timer
  // then fires before the event loop has read the heartbeats that arrived meanwhile.
  const m = await echoMesh({ LUNA_HEARTBEAT_MS: '3000' }, 1000);
  try {
    busyWait(1500);
    await sleep(200);
    await m.echo(1);
    await m.echo(2);
    assert.deepEqual(m.lost, []);
  } finally {
    await shutdown(m.node);
  }
});

test('heartbeat settings: LUNA_HEARTBEAT_MS and the option are validated', async () => {
  assert.equal(heartbeatMsFromEnv({}), undefined);
  assert.equal(heartbeatMsFromEnv({ LUNA_HEARTBEAT_MS: '0' }), 0);
  assert.equal(heartbeatMsFromEnv({ LUNA_HEARTBEAT_MS: '2500' }), 2500);
  assert.throws(() => heartbeatMsFromEnv({ LUNA_HEARTBEAT_MS: '5s' }), /^RangeError: LUNA_HEARTBEAT_MS=5s: expected a timeout in milliseconds/);
  assert.throws(() => heartbeatMsFromEnv({ LUNA_HEARTBEAT_MS: '-1' }), /LUNA_HEARTBEAT_MS=-1/);
  assert.throws(() => heartbeatMsFromEnv({ LUNA_HEARTBEAT_MS: '20' }), /LUNA_HEARTBEAT_MS=20: .*at least 100, or 0 to turn the heartbeat off/);
  const rendezvous = envRendezvous({ LUNA_RENDEZVOUS: '127.0.0.1:1' });
  await assert.rejects(createTcpTransport({ rank: 1, size: 2, secret: 'x', rendezvous, heartbeatMs: 2.5 }), /heartbeatMs=2\.5/);
  await assert.rejects(startNode({ env: cleanEnv({ LUNA_HEARTBEAT_MS: 'soon' }) }), /LUNA_HEARTBEAT_MS=soon/);
});
