import { threadId } from 'node:worker_threads';
import type { DF } from '../../../../src/ucode/df.js';

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

// Long enough for the other worker to boot before the fragments it enables are ready.
export function c_start(x: DF): void { busy(300); x.setInt(1); }

// Says its number and its thread as it starts, then works for 5 ms: long enough for the other
// lane to end its own fragment meanwhile.
export function c_work(i: number, _x: DF): void {
  console.log(`${i} ${threadId}`);
  busy(5);
}
