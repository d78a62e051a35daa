// Ucodes of bench/programs/matmul: matmul_bench.fa (copy of examples/matmul's block product,
// silent on success) and matmul_spin.fa (the same graph with busy-spin CFs).
// Blocks are raw DFs of bs*bs doubles, row-major, viewed as Float64Array (no copies).
import type { DF } from '../../../src/ucode/df.js';
import { spin } from '../../../examples/kernels.js';

function a(r: number, c: number): number {
  return ((r * 7 + c * 3) % 11) / 10 - 0.5;
}
function b(r: number, c: number): number {
  return ((r * 5 + c * 13) % 17) / 8 - 1;
}

function blockSize(n: number, nb: number): number {
  if (!(n > 0 && nb > 0 && n % nb === 0)) fail(`n=${n} is not a multiple of nb=${nb}`);
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

export function c_add(bs: number, x: DF, y: DF, s: DF): void {
  const xa = x.getFloat64Array();
  const ya = y.getFloat64Array();
  const sa = s.createFloat64Array(bs * bs);
  for (let i = 0; i < bs * bs; i++) sa[i] = xa[i] + ya[i];
}

export function c_share(x: DF, y: DF): void {
  y.copy(x);
}

/** ok = 1 if the sum of the entries of block C(bi, bj) matches its checksum. */
export function c_check_block(n: number, nb: number, bi: number, bj: number, c: DF, ok: DF): void {
  const bs = blockSize(n, nb);
  const ca = c.getFloat64Array();
  let got = 0;
  for (let i = 0; i < bs * bs; i++) got += ca[i];
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
  if (!(Math.abs(got - want) <= 1e-9 * (1 + scale))) fail(`block C[${bi}][${bj}] sums to ${got}, checksum gives ${want}`);
  ok.setInt(1);
}

export function c_report(n: number, nb: number, count: DF): void {
  const k = count.getInt();
  if (k !== nb * nb) fail(`${k} of ${nb * nb} blocks verified (n=${n})`);
}

// ---------------------------------------------------------------- matmul_spin.fa

export function s_leaf(us: number, x: DF): void {
  spin(us);
  x.setInt(1);
}

export function s_mul(us: number, x: DF, y: DF, c: DF): void {
  spin(us);
  c.setInt(x.getInt() * y.getInt());
}

export function s_add(us: number, x: DF, y: DF, s: DF): void {
  spin(us);
  s.setInt(x.getInt() + y.getInt());
}

export function s_share(x: DF, y: DF): void {
  y.copy(x);
}

export function s_report(nb: number, count: DF): void {
  const k = count.getInt();
  if (k !== nb * nb * nb) fail(`spin count ${k}, expected ${nb * nb * nb}`);
}

function fail(msg: string): never {
  throw new Error(`bench matmul: ${msg}`);
}
