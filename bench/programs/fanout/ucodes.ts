// Ucodes of bench/programs/fanout/fanout.fa.
import type { DF } from '../../../src/ucode/df.js';

export function c_make(bytes: number, x: DF): void {
  const b = x.create(bytes);
  if (bytes > 0) b[bytes - 1] = 7;
}

export function c_use(bytes: number, x: DF): void {
  const b = x.getData();
  if (b.length !== bytes || (bytes > 0 && b[bytes - 1] !== 7)) throw new Error(`bench fanout: DF has ${b.length} bytes, expected ${bytes} ending in 7`);
}
