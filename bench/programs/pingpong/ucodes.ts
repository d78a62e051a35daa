// Ucodes of bench/programs/pingpong/pingpong.fa.
import type { DF } from '../../../src/ucode/df.js';

const pattern = (i: number): number => (i * 31 + 7) & 0xff;

export function c_make(bytes: number, x: DF): void {
  const b = x.create(bytes);
  for (let i = 0; i < bytes; i += 4096) b[i] = pattern(i);
  if (bytes > 0) b[bytes - 1] = pattern(bytes - 1);
}

export function c_fwd(x: DF, y: DF): void {
  y.copy(x);
}

export function c_check(bytes: number, x: DF): void {
  const b = x.getData();
  if (b.length !== bytes) throw new Error(`bench pingpong: DF has ${b.length} bytes, expected ${bytes}`);
  for (let i = 0; i < bytes; i += 4096)
    if (b[i] !== pattern(i)) throw new Error(`bench pingpong: byte ${i} is ${b[i]}, expected ${pattern(i)}`);
  if (bytes > 0 && b[bytes - 1] !== pattern(bytes - 1)) throw new Error('bench pingpong: last byte corrupted');
}
