// Atomic code fragments of examples/heat1d/heat1d.fa.
import type { DF } from '../../src/ucode/df.js';

const LEFT = 1.0; // u[-1]
const RIGHT = 0.0; // u[n]
const R = 0.25; // dt / dx^2

function initial(x: number): number {
  return ((x * 7) % 5) / 4;
}

/** Global index range [lo, hi) of block b (1-based); blocks differ in size by at most one point. */
function range(n: number, nb: number, b: number): [number, number] {
  if (!(nb >= 1 && n >= nb)) fail(`need 1 <= nb <= n, got n=${n}, nb=${nb}`);
  return [Math.floor(((b - 1) * n) / nb), Math.floor((b * n) / nb)];
}

export function c_init_block(n: number, nb: number, b: number, u: DF, left: DF, right: DF): void {
  const [lo, hi] = range(n, nb, b);
  const v = u.createFloat64Array(hi - lo);
  for (let x = lo; x < hi; x++) v[x - lo] = initial(x);
  left.setReal(v[0]);
  right.setReal(v[v.length - 1]);
}

export function c_set_real(x: number, d: DF): void {
  d.setReal(x);
}

/** One explicit step of block b; lhalo/rhalo are the neighbours' edge values. */
export function c_step(
  n: number, nb: number, b: number, u: DF, lhalo: DF, rhalo: DF,
  unew: DF, left: DF, right: DF, delta: DF,
): void {
  const [lo, hi] = range(n, nb, b);
  const m = hi - lo;
  const v = u.getFloat64Array();
  if (v.length !== m) fail(`block ${b} has ${v.length} points, expected ${m}`);
  const w = unew.createFloat64Array(m);
  const l = lhalo.getReal();
  const r = rhalo.getReal();
  let d = 0;
  for (let k = 0; k < m; k++) {
    const a = k === 0 ? l : v[k - 1];
    const c = k === m - 1 ? r : v[k + 1];
    w[k] = v[k] + R * (a - 2 * v[k] + c);
    d = Math.max(d, Math.abs(w[k] - v[k]));
  }
  left.setReal(w[0]);
  right.setReal(w[m - 1]);
  delta.setReal(d);
}

export function c_max(x: DF, y: DF, m: DF): void {
  m.setReal(Math.max(x.getReal(), y.getReal()));
}

export function c_empty(n: number, g: DF): void {
  g.createFloat64Array(n).fill(NaN);
}

export function c_gather(n: number, nb: number, b: number, acc: DF, u: DF, res: DF): void {
  const [lo] = range(n, nb, b);
  const out = res.createFloat64Array(n);
  out.set(acc.getFloat64Array());
  out.set(u.getFloat64Array(), lo);
}

/** Sequential solver with the same arithmetic; the results must agree exactly. */
export function c_check(n: number, nb: number, eps: number, maxit: number, iters: DF, delta: DF, u: DF): void {
  let v = new Float64Array(n);
  for (let x = 0; x < n; x++) v[x] = initial(x);
  let k = 0;
  let d = 1.0;
  while (d >= eps && k < maxit) {
    const w = new Float64Array(n);
    d = 0;
    for (let x = 0; x < n; x++) {
      const a = x === 0 ? LEFT : v[x - 1];
      const c = x === n - 1 ? RIGHT : v[x + 1];
      w[x] = v[x] + R * (a - 2 * v[x] + c);
      d = Math.max(d, Math.abs(w[x] - v[x]));
    }
    v = w;
    k++;
  }
  const gotIters = iters.getInt();
  const gotDelta = delta.getReal();
  const got = u.getFloat64Array();
  if (gotIters !== k) fail(`${gotIters} iterations, the sequential solver needs ${k}`);
  if (gotDelta !== d) fail(`final delta ${gotDelta}, the sequential solver gives ${d}`);
  if (got.length !== n) fail(`result has ${got.length} points, expected ${n}`);
  for (let x = 0; x < n; x++)
    if (got[x] !== v[x]) fail(`u[${x}] = ${got[x]}, the sequential solver gives ${v[x]}`);
  const cmp = d < eps ? '<' : '>=';
  console.log(`heat1d: OK (n=${n}, ${nb} block${nb === 1 ? "" : "s"}, ${k} iterations, delta=${d.toExponential(3)} ${cmp} eps=${eps})`);
}

function fail(msg: string): never {
  console.log(`heat1d: FAILED (${msg})`);
  throw new Error(`heat1d: ${msg}`);
}
