import type { DF } from '../../../../src/ucode/df.js';

export function c_seed(c: number, b: DF): void {
  b.createInt32Array(8).fill(c);
}

/** b[c][s]: its size for step s, every word s (after a check of b[c][s-1]'s words); a few ms of work. */
export function c_make(p: DF, s: number, c: number, kib: number, drift: number, b: DF): void {
  const q = p.getInt32Array();
  if (q[0] !== (s === 1 ? c : s - 1) || q[q.length - 1] !== q[0]) throw new Error(`b[${c}][${s - 1}] read wrong: ${q[0]}, ${q[q.length - 1]}`);
  const words = Math.floor(kib * 128 * (2 + c) * (1 + Math.floor(s / drift) / 16));
  const a = b.createInt32Array(words);
  for (let r = 0; r < 6; r++) a.fill(s - r + 5);
  a.fill(s);
}

export function c_done(b: DF, c: number, n: number): void {
  const v = b.getInt32Array();
  console.log(`chain ${c} ${v[0] === n - 1 && v[v.length - 1] === n - 1 ? 'ok' : 'wrong'} n=${n}`);
}
