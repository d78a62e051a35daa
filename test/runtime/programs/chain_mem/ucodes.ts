import { readFileSync } from 'node:fs';
import type { DF } from '../../../../src/ucode/df.js';

/** x[0]: kib KiB, every byte written (so the pages are resident); word 0 counts the links. */
export function c_first(kib: number, x: DF): void {
  const a = x.createInt32Array(kib * 256);
  a.fill(0x5a5a5a5a);
  a[0] = 0;
}

export function c_link(a: DF, b: DF): void {
  const src = a.getInt32Array();
  const dst = b.createInt32Array(src.length);
  dst.set(src);
  dst[0] = src[0]! + 1;
}

function peakMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : -1;
}

export function c_last(a: DF, n: number, kib: number): void {
  const v = a.getInt32Array();
  if (v.length !== kib * 256 || v[0] !== n || v[v.length - 1] !== 0x5a5a5a5a) throw new Error(`chain broken: length ${v.length}, count ${v[0]}`);
  console.log(`chain ok n=${n}`);
  console.log(`peak ${peakMiB()} MiB`);
}
