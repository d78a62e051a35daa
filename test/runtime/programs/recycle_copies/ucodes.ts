import type { DF } from '../../../../src/ucode/df.js';

/** Bytes of link i of chain c: two size classes, each varying a little. */
function sizeOf(c: number, i: number): number {
  return [12000, 40000][(c + i) % 2]! + ((c * 7 + i) % 5) * 40;
}

/** Word j of link i of chain c. */
const word = (c: number, i: number, j: number): number => (Math.imul(c * 100003 + i + 1, 0x9e3779b1) ^ Math.imul(j, 0x85ebca6b)) | 0;

function verify(x: DF, c: number, i: number, who: string): void {
  const a = x.getInt32Array();
  if (a.length !== sizeOf(c, i) / 4) throw new Error(`${who} z[${c}][${i}]: ${a.length} words, not ${sizeOf(c, i) / 4}`);
  for (let j = 0; j < a.length; j++) {
    if (a[j] !== word(c, i, j)) throw new Error(`${who} z[${c}][${i}]: word ${j} is ${a[j]}, not ${word(c, i, j)} (its buffer was reused while it was live)`);
  }
}

/** Family f's link i of chain c (z: f 0, v: 1, x: 2), whose words are those of chain c + 1000 f. */
export function c_make(f: number, c: number, i: number, z: DF): void {
  const a = z.createInt32Array(sizeOf(c + 1000 * f, i) / 4);
  for (let j = 0; j < a.length; j++) a[j] = word(c + 1000 * f, i, j);
}

export function c_read(z: DF, c: number, i: number): void { verify(z, c, i, 'read'); }

export function c_read2(z: DF, c: number, i: number, w: DF, f: number, k: number): void {
  verify(z, c, i, 'read2');
  verify(w, c + 1000 * f, k, 'read2');
}

/** read2, then a token: the third reader is spawned once it came. */
export function c_read2t(z: DF, c: number, i: number, w: DF, f: number, k: number, t: DF): void {
  c_read2(z, c, i, w, f, k);
  t.setInt(1);
}

/** read, then a token: the next reader of the copy is spawned once it came. */
export function c_readt(z: DF, c: number, i: number, t: DF): void {
  verify(z, c, i, 'readt');
  t.setInt(1);
}

export function c_done(chains: number, n: number): void {
  console.log(`recycle_copies ok chains=${chains} n=${n}`);
}
