// The run's wall clock read through performance.now() (fastWallNs): the same clock as wallNs,
// in this thread and in a worker, whose performance.now() counts from its own time origin.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { fastWallNs, newRunOrigin, setRunOrigin, wallNs } from '../../src/trace/clock.js';

/** the calibration's error bound: half the closest paired read's gap, well under this */
const SLACK_NS = 2_000;

test('fastWallNs reads wallNs: each read lies between two reads of wallNs around it', () => {
  setRunOrigin(newRunOrigin());
  const fast = fastWallNs();
  for (let i = 0; i < 1000; i++) {
    const w0 = wallNs();
    const f = fast();
    const w1 = wallNs();
    assert.ok(f >= w0 - SLACK_NS && f <= w1 + SLACK_NS, `${w0} ≤ ${f} ≤ ${w1}`);
  }
});

test('fastWallNs in a worker, whose performance.now() has its own origin, reads the run origin\'s clock', async () => {
  const origin = newRunOrigin();
  setRunOrigin(origin);
  const clock = new URL('../../src/trace/clock.js', import.meta.url).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.clock).then(({ setRunOrigin, fastWallNs }) => {
      setRunOrigin(workerData.origin);
      const fast = fastWallNs();
      parentPort.on('message', () => parentPort.postMessage(fast()));
      parentPort.postMessage('ready');
    });`;
  const w = new Worker(code, { eval: true, workerData: { clock, origin: String(origin) } });
  try {
    const next = (): Promise<unknown> => new Promise((res, rej) => { w.once('message', res); w.once('error', rej); });
    assert.equal(await next(), 'ready');
    for (let i = 0; i < 20; i++) {
      const w0 = wallNs();
      const p = next();
      w.postMessage(0);
      const f = (await p) as number;
      const w1 = wallNs();
      assert.ok(f >= w0 - SLACK_NS && f <= w1 + SLACK_NS, `${w0} ≤ ${f} ≤ ${w1}`);
    }
  } finally {
    await w.terminate();
  }
});
