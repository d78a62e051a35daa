// The TypeScript ucodes of matmul-cpp: the initial blocks, the per-block checksum and the
// report. The block product and sums are C++ (ucodes.cpp); the blocks they exchange are raw DFs
// in shared memory, Float64Array here and double* there, never copied.
import type { DF } from '../../src/ucode/df.js';

/** Element (r, c) of A and B, 0-based global indices. */
function a(r: number, c: number): number {
  return ((r * 7 + c * 3) % 11) / 10 - 0.5;
}
function b(r: number, c: number): number {
  return ((r * 5 + c * 13) % 17) / 8 - 1;
}

function blockSize(n: number, nb: number): number {
  if (!(n > 0 && nb > 0 && n % nb === 0)) {
    console.log(`matmul-cpp: FAILED (n=${n} must be a positive multiple of nb=${nb})`);
    throw new Error(`matmul-cpp: n=${n} is not a multiple of nb=${nb}`);
  }
  return n / nb;
}

function fill(n: number, nb: number, bi: number, bj: number, blk: DF, f: (r: number, c: number) => number): void {
  const bs = blockSize(n, nb);
  const m = blk.createFloat64Array(bs * bs);
  for (let r = 0; r < bs; r++)
    for (let c = 0; c < bs; c++) m[r * bs + c] = f(bi * bs + r, bj * bs + c);
}

export function c_init(v: number, x: DF): void {
  x.setInt(v);
}

export function c_init_a(n: number, nb: number, bi: number, bj: number, blk: DF): void {
  fill(n, nb, bi, bj, blk, a);
}

export function c_init_b(n: number, nb: number, bi: number, bj: number, blk: DF): void {
  fill(n, nb, bi, bj, blk, b);
}

/** ok = 1 if the sum of the entries of block C(bi, bj) matches its checksum. */
export function c_check_block(n: number, nb: number, bi: number, bj: number, c: DF, ok: DF): void {
  const bs = blockSize(n, nb);
  const ca = c.getFloat64Array();
  let got = 0;
  for (let i = 0; i < bs * bs; i++) got += ca[i];
  // sum_{r in I, col in J} (A B)(r, col) = sum_k (sum_{r in I} A(r, k)) * (sum_{col in J} B(k, col))
  let want = 0;
  let scale = 0;
  for (let k = 0; k < n; k++) {
    let sa = 0;
    let sb = 0;
    for (let r = 0; r < bs; r++) sa += a(bi * bs + r, k);
    for (let col = 0; col < bs; col++) sb += b(k, bj * bs + col);
    want += sa * sb;
    scale += Math.abs(sa * sb);
  }
  if (!(Math.abs(got - want) <= 1e-9 * (1 + scale)))
    fail(`block C[${bi}][${bj}] sums to ${got}, checksum gives ${want}`);
  ok.setInt(1);
}

export function c_report(n: number, nb: number, count: DF): void {
  const k = count.getInt();
  if (k !== nb * nb) fail(`${k} of ${nb * nb} blocks verified`);
  console.log(`matmul-cpp: OK (n=${n}, ${nb}x${nb} blocks)`);
}

function fail(msg: string): never {
  console.log(`matmul-cpp: FAILED (${msg})`);
  throw new Error(`matmul-cpp: ${msg}`);
}
