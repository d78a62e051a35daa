// Atomic code fragments of the seed 004 test programs (seed004.fa = test_1,
// seed004_cyclic.fa = test_2, seed004_stealable.fa).  A matrix fragment is a raw DF of
// height*width doubles, row-major.
import type { DF } from '../../src/ucode/df.js';

export function c_init(v: number, x: DF): void {
  x.setInt(v);
}

/** Fragment element (r, c) = r * width + c. */
export function c_init_submatrix(height: number, width: number, dest: DF): void {
  const m = dest.createFloat64Array(height * width);
  for (let i = 0; i < height * width; i++) m[i] = i;
}

export function c_print_mat(a: DF): void {
  const m = a.getFloat64Array();
  const w = Math.round(Math.sqrt(m.length));
  for (let r = 0; r * w < m.length; r++) console.log(Array.from(m.subarray(r * w, (r + 1) * w)).join(' '));
}

/** b = a with 1 added to every element, `repeat` times (the work of the CF grows with repeat). */
export function c_add_one(a: DF, repeat: number, b: DF): void {
  const src = a.getFloat64Array();
  const dst = b.createFloat64Array(src.length);
  dst.set(src);
  for (let k = 0; k < repeat; k++) for (let i = 0; i < dst.length; i++) dst[i] += 1;
}

/** ok = 1 when every element of b equals its initial value plus repeat. */
export function c_check_block(b: DF, height: number, width: number, repeat: number, ok: DF): void {
  const m = b.getFloat64Array();
  if (m.length !== height * width) fail(`fragment has ${m.length} elements, expected ${height * width}`);
  for (let i = 0; i < m.length; i++)
    if (m[i] !== i + repeat) fail(`element ${i} is ${m[i]}, expected ${i + repeat}`);
  ok.setInt(1);
}

export function c_report(prog: string, n: number, fgsize: number, repeat: number, count: DF): void {
  const k = count.getInt();
  if (k !== fgsize * fgsize) fail(`${k} of ${fgsize * fgsize} fragments checked`);
  console.log(`${prog}: OK (${fgsize}x${fgsize} fragments of ${n}x${n}, repeat ${repeat})`);
}

function fail(msg: string): never {
  console.log(`seed004: FAILED (${msg})`);
  throw new Error(`seed004: ${msg}`);
}
