import type { DF } from '../../../../src/ucode/df.js';

const RANK = process.env.LUNA_RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? process.env.PMIX_RANK ?? '0';

/** deterministic pseudo-random words (xorshift32) */
function fill(a: Int32Array, seed: number): void {
  let s = (seed * 0x9e3779b1) | 0 || 1;
  for (let k = 0; k < a.length; k++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    a[k] = s;
  }
}

export function c_big(mib: number, seed: number, x: DF): void {
  fill(x.createInt32Array((mib << 20) >> 2), seed);
}

export function c_check(tag: string, x: DF, mib: number, seed: number): void {
  const got = x.getInt32Array();
  const want = new Int32Array((mib << 20) >> 2);
  fill(want, seed);
  let bad = 0, first = -1;
  if (got.length !== want.length) bad = -1;
  else for (let k = 0; k < want.length; k++) if (got[k] !== want[k]) { if (first < 0) first = k; bad++; }
  let sum = 0;
  for (let k = 0; k < got.length; k++) sum = (sum * 31 + got[k]!) | 0;
  if (bad !== 0) throw new Error(`${tag}: ${bad} bad words (first at ${first}), size ${x.getSize()}`);
  console.log(`${tag} intact ${x.getSize()} bytes checksum ${sum >>> 0}`);
}
