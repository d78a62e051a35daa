// The heartbeat's rules in milliseconds, with a host of plain counters: a peer that sends
// nothing is lost after the timeout; one that keeps taking the bytes we send it (a large
// payload draining while its own frames wait, or its main thread is busy receiving) is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Heartbeat, LinkClock } from '../../src/runtime/transport/heartbeat.js';

/** One link to rank 1 whose queued bytes the test sets; the losses it reports. */
function oneLink(timeoutMs: number) {
  const clock = new LinkClock();
  const lost: string[] = [];
  let queued = 0;
  const hb = new Heartbeat(timeoutMs, {
    liveLinks: () => (lost.length ? [] : [{ rank: 1, clock }]),
    sendBeat: () => { clock.tx++; },
    lost: (_rank, reason) => { lost.push(reason); },
    queued: () => queued,
  });
  return { hb, clock, lost, setQueued: (n: number) => { queued = n; } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a silent peer is lost after the timeout', async () => {
  const l = oneLink(100);
  l.hb.start();
  await sleep(400);
  l.hb.stop();
  assert.equal(l.lost.length, 1);
  assert.match(l.lost[0]!, /^rank 1 sent nothing for 0\.\d s \(frozen or unreachable; heartbeat timeout 0\.1 s\)$/);
});

test('a peer that keeps draining what we send is alive though it sends nothing', async () => {
  const l = oneLink(100);
  l.setQueued(1 << 30);
  l.hb.start();
  for (let left = 1 << 30; left > 0; left -= 1 << 26) { l.setQueued(left); await sleep(20); }
  assert.deepEqual(l.lost, [], 'draining for 320 ms, three timeouts, is life');
  // the queue stops moving: the peer no longer reads (frozen), it is lost a timeout later
  await sleep(400);
  l.hb.stop();
  assert.equal(l.lost.length, 1);
});

test('data arriving keeps a peer alive', async () => {
  const l = oneLink(100);
  l.hb.start();
  for (let i = 0; i < 16; i++) { l.clock.rx++; await sleep(20); }
  l.hb.stop();
  assert.deepEqual(l.lost, []);
});
