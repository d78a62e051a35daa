import { readFileSync } from 'node:fs';
import type { DF } from '../../../../src/ucode/df.js';

/** The first token of a chain: okib KiB, word 0 the count of readers passed. */
export function c_seed(okib: number, o: DF): void {
  const a = o.createInt32Array(okib * 256);
  a.fill(1);
  a[0] = 0;
}

/** b[s]: kib KiB (or one of 24 sizes up to 4 kib, `vary`), every word written (so its pages are resident), word 0 = s. */
export function c_big(x: DF, y: DF, s: number, kib: number, vary: number, b: DF): void {
  if (x.getInt32Array()[0] !== 0 && x.getInt32Array()[0]! < 0) throw new Error('bad token');
  void y;
  // the shared bytes this thread made and that are not freed yet (live, or garbage not collected)
  console.log(`made ${Math.round(process.memoryUsage().arrayBuffers / 1048576)} MiB`);
  const a = b.createInt32Array((vary ? kib * (8 + ((s * 5) % 24)) / 8 : kib) * 256);
  a.fill(s + 7);
  a[0] = s;
}

/** A reader of b[s]: checks it, and passes the chain's token on (its count one more). */
export function c_read(b: DF, p: DF, s: number, okib: number, o: DF): void {
  const v = b.getInt32Array();
  if (v[0] !== s || v[v.length - 1] !== s + 7) throw new Error(`b[${s}] read wrong: ${v[0]}, ${v[v.length - 1]}`);
  const t = p.getInt32Array();
  const a = o.createInt32Array(okib * 256);
  a.set(t.subarray(0, Math.min(t.length, a.length)));
  a[0] = t[0]! + 1;
}

function peakMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : -1;
}

export function c_done(x: DF, y: DF, n: number, kib: number): void {
  const cx = x.getInt32Array()[0], cy = y.getInt32Array()[0];
  console.log(`readers ${cx} ${cy} n=${n} kib=${kib}`);
  console.log(`peak ${peakMiB()} MiB`);
}
