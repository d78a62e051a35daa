// Ucodes of bench/programs/refs/refs.fa: a step is busy `us` µs, then writes each output from its input.
import type { DF } from '../../../src/ucode/df.js';

export function c_seed(w: number, bytes: number, y: DF): void {
  y.create(bytes)[0] = w & 0xff;
}

function step(us: number, bytes: number, dfs: DF[]): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
  const n = dfs.length / 2;
  for (let j = 0; j < n; j++) {
    const x = dfs[j]!.getData();
    if (x.length !== bytes) throw new Error(`bench refs: DF of ${x.length} bytes, expected ${bytes}`);
    dfs[n + j]!.create(bytes)[0] = (x[0]! + 1) & 0xff;
  }
}

export function c_step1(us: number, bytes: number, ...dfs: DF[]): void { step(us, bytes, dfs); }
export function c_step32(us: number, bytes: number, ...dfs: DF[]): void { step(us, bytes, dfs); }
