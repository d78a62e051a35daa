import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The directory the test gives for the signal files. */
function dir(): string {
  const d = process.env.LUNA_HEAVY_AHEAD_DIR;
  if (!d) throw new Error('LUNA_HEAVY_AHEAD_DIR is not set');
  return d;
}

const nap = new Int32Array(new SharedArrayBuffer(4));

/** Waits up to LUNA_HEAVY_AHEAD_MS for node 1's first mark; says whether it came. */
export function h_wait(i: number): void {
  const file = join(dir(), 'm0');
  const bound = Date.now() + Number(process.env.LUNA_HEAVY_AHEAD_MS ?? 10_000);
  while (!existsSync(file) && Date.now() < bound) Atomics.wait(nap, 0, 0, 10);
  console.log(`h${i} ${existsSync(file) ? 'seen' : 'late'}`);
}

export function h_mark(j: number): void {
  writeFileSync(join(dir(), `m${j}`), '');
  console.log(`m${j}`);
}
