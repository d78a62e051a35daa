// A worker that feeds with a lane whose thread already ended cannot be given its port to that
// lane: the port is closed. Starting it then must not throw out of the pool (an "internal
// error" instead of the fault that ended the other thread); the lane gets nothing, and if no
// other death is ever reported, its own is, so that the run never waits for it in silence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { WorkerPool } from '../../src/runtime/exec/pool.js';

interface Death { lane: number; cf: number; cause: string }

function pool(deaths: Death[]): WorkerPool {
  return new WorkerPool({ lanes: 2, imports: [], feed: true, onResult: () => {}, onDeath: (lane, cf, cause) => { deaths.push({ lane, cf, cause }); } });
}

/** Keeps the event loop up while a test awaits a port's close (the pool's ports do not). */
async function alive<T>(p: Promise<T>): Promise<T> {
  const keep = setInterval(() => {}, 1000);
  try { return await p; } finally { clearInterval(keep); }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The pool's port of lane `a` to lane `b` (not yet handed to its worker). */
const peer = (p: WorkerPool, a: number, b: number): MessagePort => (p as unknown as { peers: MessagePort[][] }).peers[a]![b]!;

test('a lane whose feeding partner ended is not started, and the partner\'s death is the one reported', async () => {
  const deaths: Death[] = [];
  const p = pool(deaths);
  p.warm(0);
  const closed = once(peer(p, 1, 0), 'close');
  p.terminate(0, 'stopped by the test');
  await alive(closed); // lane 0's thread ended: its end of the pair closed, and so did lane 1's
  assert.doesNotThrow(() => p.warm(1));
  assert.equal(p.started, 1, 'only lane 0 was ever started');
  assert.doesNotThrow(() => p.send(1, { id: 1, tasks: [] }));
  assert.doesNotThrow(() => p.feed(1, [] as never));
  await sleep(2300); // past the pool's wait for another death
  assert.deepEqual(deaths.map((d) => [d.lane, d.cause]), [[0, 'stopped by the test']], 'lane 1 is not blamed');
  await p.kill();
});

test('with no other death reported, the lane that could not start is reported itself', async () => {
  const deaths: Death[] = [];
  const p = pool(deaths);
  const closed = once(peer(p, 1, 0), 'close');
  peer(p, 0, 1).close(); // as if lane 0's thread had ended before its exit was told
  await alive(closed);
  p.warm(1);
  assert.equal(p.started, 0);
  await sleep(2300); // past the pool's wait for another death
  assert.equal(deaths.length, 1);
  assert.equal(deaths[0]!.lane, 1);
  assert.equal(deaths[0]!.cf, -1);
  assert.match(deaths[0]!.cause, /^could not be started: .*detached/);
  await p.kill();
});
