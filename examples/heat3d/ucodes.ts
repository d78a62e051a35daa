// Atomic code fragments of heat3d (seed 004's test_3): a block of the n³ grid is a raw DF of
// nx·ny·nz doubles, (x, y, z) at ((x·ny) + y)·nz + z; its coefficients are 2 doubles per point
// (α, β after the point); what a block passes along a line is 2 doubles (forward) or 1 (back)
// per line of its face. The tridiagonal solve of a line is the Thomas algorithm split at block
// boundaries, so the distributed and the sequential solvers do the same operations in the same
// order.
import type { DF } from '../../src/ucode/df.js';

/** Extent [lo, hi) of block k of p along an axis of n points. */
function extent(n: number, p: number, k: number): [number, number] {
  return [Math.floor((k * n) / p), Math.floor(((k + 1) * n) / p)];
}

export interface Block { x0: number; y0: number; z0: number; nx: number; ny: number; nz: number }

export function blockOf(n: number, px: number, py: number, pz: number, b: number): Block {
  if (!(n >= Math.max(px, py, pz) && b >= 0 && b < px * py * pz)) fail(`block ${b} of ${px}x${py}x${pz} on ${n}^3 points`);
  const [x0, x1] = extent(n, px, Math.floor(b / (py * pz)));
  const [y0, y1] = extent(n, py, Math.floor(b / pz) % py);
  const [z0, z1] = extent(n, pz, b % pz);
  return { x0, y0, z0, nx: x1 - x0, ny: y1 - y0, nz: z1 - z0 };
}

/** The lines of a block along direction d: how many, their length, the first point of line f and the step between points. */
export function linesOf(k: Block, d: number): { count: number; len: number; base: (f: number) => number; step: number } {
  const { nx, ny, nz } = k;
  if (d === 0) return { count: ny * nz, len: nx, base: (f) => f, step: ny * nz };
  if (d === 1) return { count: nx * nz, len: ny, base: (f) => Math.floor(f / nz) * ny * nz + (f % nz), step: nz };
  return { count: nx * ny, len: nz, base: (f) => f * nz, step: 1 };
}

/** u0 = sin πx sin πy sin πz at grid point (i, j, k) (0-based interior indices). */
function initial(n: number, i: number, j: number, k: number): number {
  const h = 1 / (n + 1);
  return Math.sin(Math.PI * (i + 1) * h) * Math.sin(Math.PI * (j + 1) * h) * Math.sin(Math.PI * (k + 1) * h);
}

export function c_init_block(n: number, px: number, py: number, pz: number, b: number, u: DF): void {
  const k = blockOf(n, px, py, pz, b);
  const a = u.createFloat64Array(k.nx * k.ny * k.nz);
  for (let x = 0; x < k.nx; x++)
    for (let y = 0; y < k.ny; y++)
      for (let z = 0; z < k.nz; z++) a[(x * k.ny + y) * k.nz + z] = initial(n, k.x0 + x, k.y0 + y, k.z0 + z);
}

/** Nothing passed yet: the line starts (α = β = 0) or ends (y = 0) at the boundary. */
export function c_edge(e: DF): void {
  e.createFloat64Array(0);
}

/** Forward elimination of one line segment from (α, β): the coefficients after every point, and the last (α, β). */
export function forwardLine(u: Float64Array, co: Float64Array, base: number, step: number, len: number, sigma: number, a0: number, b0: number): [number, number] {
  const c = 1 + 2 * sigma;
  let al = a0, be = b0;
  for (let m = 0, i = base; m < len; m++, i += step) {
    const den = c - sigma * al;
    al = sigma / den;
    be = (u[i]! + sigma * be) / den;
    co[2 * i] = al;
    co[2 * i + 1] = be;
  }
  return [al, be];
}

/** Back substitution of one line segment from the solution after it; the solution at its first point. */
export function backwardLine(co: Float64Array, v: Float64Array, base: number, step: number, len: number, after: number): number {
  let y = after;
  for (let m = len - 1, i = base + (len - 1) * step; m >= 0; m--, i -= step) {
    y = co[2 * i]! * y + co[2 * i + 1]!;
    v[i] = y;
  }
  return y;
}

export function c_forward(n: number, px: number, py: number, pz: number, d: number, b: number, sigma: number, u: DF, fin: DF, co: DF, fout: DF): void {
  const k = blockOf(n, px, py, pz, b), L = linesOf(k, d);
  const a = u.getFloat64Array(), f = fin.getFloat64Array();
  const c = co.createFloat64Array(2 * a.length), out = fout.createFloat64Array(2 * L.count);
  for (let l = 0; l < L.count; l++) {
    const [al, be] = forwardLine(a, c, L.base(l), L.step, L.len, sigma, f.length ? f[2 * l]! : 0, f.length ? f[2 * l + 1]! : 0);
    out[2 * l] = al;
    out[2 * l + 1] = be;
  }
}

export function c_backward(n: number, px: number, py: number, pz: number, d: number, b: number, co: DF, bin: DF, v: DF, bout: DF): void {
  const k = blockOf(n, px, py, pz, b), L = linesOf(k, d);
  const c = co.getFloat64Array(), after = bin.getFloat64Array();
  const out = v.createFloat64Array(c.length / 2), first = bout.createFloat64Array(L.count);
  for (let l = 0; l < L.count; l++) first[l] = backwardLine(c, out, L.base(l), L.step, L.len, after.length ? after[l]! : 0);
}

/** The exact result of `stages` directional solves from the initial data: u0 / (1 + 4σ sin²(πh/2))^stages. */
function exact(n: number, stages: number, sigma: number, i: number, j: number, k: number): number {
  const s = Math.sin(Math.PI / (2 * (n + 1)));
  return initial(n, i, j, k) / Math.pow(1 + 4 * sigma * s * s, stages);
}

export function c_check_block(n: number, px: number, py: number, pz: number, b: number, stages: number, sigma: number, u: DF, ok: DF): void {
  const k = blockOf(n, px, py, pz, b), a = u.getFloat64Array();
  if (a.length !== k.nx * k.ny * k.nz) fail(`block ${b} has ${a.length} points, expected ${k.nx * k.ny * k.nz}`);
  for (let x = 0; x < k.nx; x++)
    for (let y = 0; y < k.ny; y++)
      for (let z = 0; z < k.nz; z++) {
        const want = exact(n, stages, sigma, k.x0 + x, k.y0 + y, k.z0 + z), got = a[(x * k.ny + y) * k.nz + z]!;
        if (!(Math.abs(got - want) <= 1e-9 * (1 + Math.abs(want)))) fail(`block ${b}, point (${k.x0 + x}, ${k.y0 + y}, ${k.z0 + z}): ${got}, the scheme gives ${want}`);
      }
  ok.setInt(1);
}

export function c_init(v: number, x: DF): void {
  x.setInt(v);
}

export function c_empty(g: DF): void {
  g.createFloat64Array(0);
}

/** The grid so far with block b's points put in place (the whole grid, n³, once every block is in). */
export function c_gather(n: number, px: number, py: number, pz: number, b: number, acc: DF, u: DF, g: DF): void {
  const k = blockOf(n, px, py, pz, b), a = u.getFloat64Array(), prev = acc.getFloat64Array();
  const out = g.createFloat64Array(n * n * n);
  if (prev.length) out.set(prev);
  for (let x = 0; x < k.nx; x++)
    for (let y = 0; y < k.ny; y++)
      for (let z = 0; z < k.nz; z++) out[((k.x0 + x) * n + k.y0 + y) * n + k.z0 + z] = a[(x * k.ny + y) * k.nz + z]!;
}

/** The same scheme on the whole grid, one line after another. */
export function sequential(n: number, stages: number, sigma: number): Float64Array {
  let u = new Float64Array(n * n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let k = 0; k < n; k++) u[(i * n + j) * n + k] = initial(n, i, j, k);
  const whole: Block = { x0: 0, y0: 0, z0: 0, nx: n, ny: n, nz: n };
  const co = new Float64Array(2 * n * n * n);
  for (let s = 0; s < stages; s++) {
    const L = linesOf(whole, s % 3), v = new Float64Array(u.length);
    for (let l = 0; l < L.count; l++) {
      forwardLine(u, co, L.base(l), L.step, L.len, sigma, 0, 0);
      backwardLine(co, v, L.base(l), L.step, L.len, 0);
    }
    u = v;
  }
  return u;
}

/**
 * The gathered grid against the sequential solver: the same operations in the same order, so
 * TypeScript kernels agree to the last bit; C++ kernels (heat3d-cpp) may differ in the last bit
 * of a sine, hence the tolerance of a few ulps of the largest value.
 */
export function c_check_all(n: number, stages: number, sigma: number, g: DF): void {
  const got = g.getFloat64Array(), want = sequential(n, stages, sigma);
  let top = 0;
  for (let i = 0; i < want.length; i++) top = Math.max(top, Math.abs(want[i]!));
  for (let i = 0; i < want.length; i++) if (!(Math.abs(got[i]! - want[i]!) <= 1e-13 * top)) fail(`point ${i}: ${got[i]}, the sequential solver gives ${want[i]}`);
}

export function c_report(prog: string, n: number, px: number, py: number, pz: number, steps: number, count: DF): void {
  const k = count.getInt();
  if (k !== px * py * pz) fail(`${k} of ${px * py * pz} blocks checked`);
  console.log(`${prog}: OK (${n}^3 points, ${px}x${py}x${pz} blocks, ${steps} steps)`);
}

function fail(msg: string): never {
  console.log(`heat3d: FAILED (${msg})`);
  throw new Error(`heat3d: ${msg}`);
}
