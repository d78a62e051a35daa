import type { DF } from '../../../../src/ucode/df.js';

/** Bytes of link i of chain c: three size classes, each varying a little. */
export function sizeOf(c: number, i: number): number {
  return [5000, 24000, 90000][(c + i) % 3]! + ((c * 7 + i) % 5) * 40;
}

/** Word j of link i of chain c. */
const word = (c: number, i: number, j: number): number => (Math.imul(c * 100003 + i + 1, 0x9e3779b1) ^ Math.imul(j, 0x85ebca6b)) | 0;

function fill(x: DF, c: number, i: number): void {
  const a = x.createInt32Array(sizeOf(c, i) / 4);
  for (let j = 0; j < a.length; j++) a[j] = word(c, i, j);
}

function verify(x: DF, c: number, i: number, who: string): void {
  const a = x.getInt32Array();
  if (a.length !== sizeOf(c, i) / 4) throw new Error(`${who} z[${c}][${i}]: ${a.length} words, not ${sizeOf(c, i) / 4}`);
  for (let j = 0; j < a.length; j++) {
    if (a[j] !== word(c, i, j)) throw new Error(`${who} z[${c}][${i}]: word ${j} is ${a[j]}, not ${word(c, i, j)} (its buffer was reused while it was live)`);
  }
}

export function c_seed(c: number, z: DF): void { fill(z, c, 0); }

/** w = link i + 1, made before z (link i) is read. */
export function c_step(z: DF, c: number, i: number, w: DF): void {
  fill(w, c, i + 1);
  verify(z, c, i, 'step');
}

export function c_late(z: DF, c: number, i: number): void { verify(z, c, i, 'late'); }

export function c_alias(z: DF, y: DF): void { y.copy(z); }

export function c_done(chains: number, n: number): void {
  console.log(`recycle_nodes ok chains=${chains} n=${n}`);
}
