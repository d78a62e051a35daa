// Atomic code fragments of examples/matmul/matmul.fa and matmul_bench.fa.
// Blocks are raw DFs of bs*bs doubles, row-major, viewed as Float64Array (no copies).
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
    console.log(`matmul: FAILED (n=${n} must be a positive multiple of nb=${nb})`);
    throw new Error(`matmul: n=${n} is not a multiple of nb=${nb}`);
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

/** c = x * y for bs x bs blocks (i-k-j loop order). */
export function c_mul(bs: number, x: DF, y: DF, c: DF): void {
  const xa = x.getFloat64Array();
  const ya = y.getFloat64Array();
  const ca = c.createFloat64Array(bs * bs);
  for (let i = 0; i < bs; i++) {
    const ci = i * bs;
    for (let k = 0; k < bs; k++) {
      const xik = xa[ci + k];
      const yk = k * bs;
      for (let j = 0; j < bs; j++) ca[ci + j] += xik * ya[yk + j];
    }
  }
}

/** s = x + y (element-wise). */
export function c_add(bs: number, x: DF, y: DF, s: DF): void {
  const xa = x.getFloat64Array();
  const ya = y.getFloat64Array();
  const sa = s.createFloat64Array(bs * bs);
  for (let i = 0; i < bs * bs; i++) sa[i] = xa[i] + ya[i];
}

/** y = x, sharing the buffer (DF.copy does not copy). */
export function c_share(x: DF, y: DF): void {
  y.copy(x);
}

/** An n x n matrix of NaN (every gather step fills one block). */
export function c_empty(n: number, m: DF): void {
  m.createFloat64Array(n * n).fill(NaN);
}

/** res = acc with block (bi, bj) replaced by blk. */
export function c_gather(n: number, nb: number, bi: number, bj: number, acc: DF, blk: DF, res: DF): void {
  const bs = blockSize(n, nb);
  const out = res.createFloat64Array(n * n);
  out.set(acc.getFloat64Array());
  const ba = blk.getFloat64Array();
  for (let r = 0; r < bs; r++) out.set(ba.subarray(r * bs, (r + 1) * bs), (bi * bs + r) * n + bj * bs);
}

/** Compare the gathered C with a sequential product of A and B. */
export function c_check(n: number, nb: number, c: DF): void {
  const got = c.getFloat64Array();
  if (got.length !== n * n) fail(`C has ${got.length} elements, expected ${n * n}`);
  const am = new Float64Array(n * n);
  const bm = new Float64Array(n * n);
  for (let r = 0; r < n; r++)
    for (let col = 0; col < n; col++) {
      am[r * n + col] = a(r, col);
      bm[r * n + col] = b(r, col);
    }
  const want = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let k = 0; k < n; k++) {
      const aik = am[i * n + k];
      for (let j = 0; j < n; j++) want[i * n + j] += aik * bm[k * n + j];
    }
  const tol = 1e-10 * n;
  for (let i = 0; i < n * n; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= tol * (1 + Math.abs(want[i]))))
      fail(`C[${Math.floor(i / n)}][${i % n}] = ${got[i]}, sequential product gives ${want[i]}`);
  }
  console.log(`matmul: OK (n=${n}, ${nb}x${nb} blocks)`);
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
  console.log(`matmul_bench: OK (n=${n}, ${nb}x${nb} blocks)`);
}

function fail(msg: string): never {
  console.log(`matmul: FAILED (${msg})`);
  throw new Error(`matmul: ${msg}`);
}
