// Atomic code fragments of examples/slow/latency/latency.fa.
import type { DF } from '../../../src/ucode/df.js';
import { spin } from '../../kernels.js';

/** A DF of `bytes` bytes tagged with `tag` (int32 at the start, and the last byte). */
function fill(x: DF, bytes: number, tag: number): void {
  const b = x.create(Math.max(bytes, 4));
  new DataView(b.buffer, b.byteOffset, b.byteLength).setInt32(0, tag, true);
  b[b.length - 1] = tag & 0xff;
}

function verify(x: DF, bytes: number, tag: number, who: string): void {
  const b = x.getData();
  const n = Math.max(bytes, 4);
  if (b.length !== n) throw new Error(`latency ${who}: DF ${x.getName()} has ${b.length} bytes, expected ${n}`);
  const got = new DataView(b.buffer, b.byteOffset, b.byteLength).getInt32(0, true);
  if (got !== tag || b[n - 1] !== (tag & 0xff)) throw new Error(`latency ${who}: DF ${x.getName()} carries tag ${got}, expected ${tag}`);
}

export function c_make(bytes: number, tag: number, x: DF): void {
  fill(x, bytes, tag);
}

export function c_step(prev: DF, bytes: number, tag: number, us: number, next: DF): void {
  verify(prev, bytes, tag - 1, 'step');
  spin(us);
  fill(next, bytes, tag);
}

export function c_check(bytes: number, tag: number, last: DF): void {
  verify(last, bytes, tag, 'check');
}
