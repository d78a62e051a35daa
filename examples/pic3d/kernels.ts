// The compute kernels of pic3d on plain arrays (fragments.ts wraps them as ucodes; kernel.h in
// examples/pic3d-cpp is the same arithmetic in C++). One subdomain (a, b, c) of F³ owns the grid
// nodes [a·n, (a+1)·n) × … (n = N/F) and the particles whose cell (cellOf) lies there.
// Layouts, all row-major:
//   deposit block  (n+1)³  the subdomain's own deposit, with the upper ghost layer
//   D, φ           n³      density and potential at the owned nodes
//   G              3·n³    g = −∇φ at the owned nodes, (gx, gy, gz) per node
//   bundle         REC·m   particle records going one way (27 directions,
//                          d = ((dx+1)·3 + dy+1)·3 + dz+1; STAY = 13)
//   leaving        28 + REC·m  the bundles of the 26 directions d ≠ STAY in one array: 28
//                          offsets (in particles, part d is [off[d], off[d+1])), then the records
import { DT, FOUR_PI_G, REC, STAY, totalMass } from './model.js';

export class KernelError extends Error {}

/** Run `f`; a kernel's error prints the example's FAILED line and stops the run. */
export function guard(f: () => void): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof KernelError)) throw e;
    console.log(`pic3d: FAILED (${e.message})`);
    throw new Error(`pic3d: ${e.message}`);
  }
}

/** Cloud-in-cell deposit of the particles of `bundles` into `out`, (n+1)³ zeros on entry. */
export function deposit(N: number, F: number, a: number, b: number, c: number, bundles: readonly Float64Array[], out: Float64Array): void {
  // each bundle by a function of its own, as in pushIn (below): the loop over bundles stepping
  // after the first large one threw the code compiled on stack inside it away
  for (let q = 0; q < bundles.length; q++) depositBundle(N, F, a, b, c, bundles[q]!, out);
}

/** The deposit of one bundle's particles `p` into `out`. */
function depositBundle(N: number, F: number, a: number, b: number, c: number, p: Float64Array, out: Float64Array): void {
  const n = N / F, n1 = n + 1;
  const inv = N * N * N;
  const loi = a * n, loj = b * n, lok = c * n;
  for (let o = 0; o < p.length; o += REC) {
    const x = p[o + 2]!, y = p[o + 3]!, z = p[o + 4]!;
    const mw = p[o + 1]! * inv;
    // cellOf written out, as in pushIn (below)
    let ci = Math.floor(x * N), cj = Math.floor(y * N), ck = Math.floor(z * N);
    if (ci >= N) ci = N - 1;
    if (cj >= N) cj = N - 1;
    if (ck >= N) ck = N - 1;
    const fx = x * N - ci, fy = y * N - cj, fz = z * N - ck;
    const li = ci - loi, lj = cj - loj, lk = ck - lok;
    if (li < 0 || li >= n || lj < 0 || lj >= n || lk < 0 || lk >= n)
      throw new KernelError(`particle ${p[o]} at (${x}, ${y}, ${z}) arrived in subdomain (${a}, ${b}, ${c}), not its own`);
    for (let dx = 0; dx < 2; dx++) {
      const wx = dx ? fx : 1 - fx;
      for (let dy = 0; dy < 2; dy++) {
        const wxy = wx * (dy ? fy : 1 - fy);
        const row = ((li + dx) * n1 + lj + dy) * n1 + lk;
        out[row] += mw * (wxy * (1 - fz));
        out[row + 1] += mw * (wxy * fz);
      }
    }
  }
}

/**
 * Density at the owned nodes into `out` (n³): the own deposit block `blocks[0]` plus the upper
 * ghost layers of the 7 lower neighbours `blocks[o]` (offset o: bit 4 = x, 2 = y, 1 = z).
 */
export function density(N: number, F: number, blocks: readonly Float64Array[], out: Float64Array): void {
  const n = N / F, n1 = n + 1;
  const own = blocks[0]!;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) out.set(own.subarray((i * n1 + j) * n1, (i * n1 + j) * n1 + n), (i * n + j) * n);
  for (let o = 1; o < 8; o++) {
    const src = blocks[o]!;
    const ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
    // our node 0 along a shifted dimension is the neighbour's ghost node n
    const ni = ox ? 1 : n, nj = oy ? 1 : n, nk = oz ? 1 : n;
    for (let i = 0; i < ni; i++)
      for (let j = 0; j < nj; j++)
        for (let k = 0; k < nk; k++)
          out[(i * n + j) * n + k] += src[((ox ? n : i) * n1 + (oy ? n : j)) * n1 + (oz ? n : k)]!;
  }
}

/** φ of the subdomain with a one-node halo from its 6 face neighbours (own, x−, x+, y−, y+, z−, z+): (n+2)³. */
export function padded(n: number, phis: readonly Float64Array[], p: Float64Array): void {
  const m = n + 2;
  const [own, xm, xp, ym, yp, zm, zp] = phis as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const s = (i * n + j) * n, d = ((i + 1) * m + j + 1) * m + 1;
      for (let k = 0; k < n; k++) p[d + k] = own[s + k]!;
      p[d - 1] = zm[s + n - 1]!;
      p[d + n] = zp[s]!;
    }
  for (let i = 0; i < n; i++)
    for (let k = 0; k < n; k++) {
      p[((i + 1) * m) * m + k + 1] = ym[(i * n + n - 1) * n + k]!;
      p[((i + 1) * m + n + 1) * m + k + 1] = yp[(i * n) * n + k]!;
    }
  for (let j = 0; j < n; j++)
    for (let k = 0; k < n; k++) {
      p[(j + 1) * m + k + 1] = xm[((n - 1) * n + j) * n + k]!;
      p[((n + 1) * m + j + 1) * m + k + 1] = xp[j * n + k]!;
    }
}

/** One Jacobi sweep of ∇²φ = 4πG(ρ − ρ̄) into `out` (n³); `pad` is scratch of (n+2)³. */
export function jacobi(N: number, F: number, NP: number, rho: Float64Array, phis: readonly Float64Array[], out: Float64Array, pad: Float64Array): void {
  const n = N / F, m = n + 2, mm = m * m;
  padded(n, phis, pad);
  const h2c = FOUR_PI_G / (N * N);
  const rhobar = totalMass(NP);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let q = ((i + 1) * m + j + 1) * m + 1, c = (i * n + j) * n;
      for (let k = 0; k < n; k++, q++, c++)
        out[c] = (pad[q - mm]! + pad[q + mm]! + pad[q - m]! + pad[q + m]! + pad[q - 1]! + pad[q + 1]! - h2c * (rho[c]! - rhobar)) / 6;
    }
}

/** g = −∇φ at the owned nodes into `out` (3·n³); `pad` is scratch of (n+2)³. */
export function field(N: number, F: number, phis: readonly Float64Array[], out: Float64Array, pad: Float64Array): void {
  const n = N / F, m = n + 2, mm = m * m;
  padded(n, phis, pad);
  const half = 0.5 * N;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let q = ((i + 1) * m + j + 1) * m + 1, c = 3 * (i * n + j) * n;
      for (let k = 0; k < n; k++, q++, c += 3) {
        out[c] = (pad[q - mm]! - pad[q + mm]!) * half;
        out[c + 1] = (pad[q - m]! - pad[q + m]!) * half;
        out[c + 2] = (pad[q - 1]! - pad[q + 1]!) * half;
      }
    }
}

/** Direction (−1, 0, 1) from subdomain `own` to `dest` of F along one dimension. */
function direction(own: number, dest: number, F: number, id: number): number {
  const d = (dest - own + F) % F;
  if (d === 0) return 0;
  if (d === 1) return 1;
  if (d === F - 1) return -1;
  throw new KernelError(`particle ${id} moved more than one subdomain in a step (from ${own} to ${dest} of ${F}); lower DT or F`);
}

/** The particles pushed by one step, with the bundle each goes to (views valid until the thread's next push). */
export interface Pushed {
  moved: Float64Array;
  dir: Uint8Array;
  count: Int32Array;
}

/**
 * Leapfrog push of the particles of subdomain (a, b, c) in `bundles`, g interpolated by
 * cloud-in-cell from `gs`: G of the subdomain and its 7 upper neighbours (offset o as in
 * density). The particles are sorted into bundles by `scatter`.
 */
export function push(N: number, F: number, a: number, b: number, c: number, gs: readonly Float64Array[], bundles: readonly Float64Array[]): Pushed {
  const n = N / F, n1 = n + 1;
  // g at the (n+1)³ nodes the subdomain's cells touch (every node written below)
  if (gNodes.length !== 3 * n1 * n1 * n1) gNodes = new Float64Array(3 * n1 * n1 * n1);
  const g = gNodes;
  for (let o = 0; o < 8; o++) {
    const src = gs[o]!;
    const ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
    const i0 = ox ? n : 0, j0 = oy ? n : 0, k0 = oz ? n : 0;
    for (let i = i0; i < (ox ? n1 : n); i++)
      for (let j = j0; j < (oy ? n1 : n); j++) {
        const s = 3 * (((i - i0) * n + j - j0) * n), t = 3 * ((i * n1 + j) * n1 + k0);
        g.set(src.subarray(s, s + 3 * (oz ? 1 : n)), t);
      }
  }
  return pushIn(N, F, a, b, c, g, bundles);
}

// A push's buffers, kept from call to call on a thread, grown as needed: fresh ones per call were
// 64 MB of new memory a step at the seed's parameters (the particles once more), each page
// faulted in and zeroed, and external memory that made V8 collect the worker's heap.
let gNodes = new Float64Array(0);
// per slot: a group's pushes (groups.ts) keep each subdomain's result until the group's packs are made
const movedScratch: Float64Array[] = [];
const dirScratch: Uint8Array[] = [];

/**
 * The push with g at the (n+1)³ nodes the subdomain's cells touch already at hand (3·(n+1)³: the
 * owned nodes and the upper ghost layer, as jacobiDeep computes it with `ghost`); its result in
 * scratch `slot`, valid until the thread's next push into that slot.
 */
export function pushIn(N: number, F: number, a: number, b: number, c: number, g: Float64Array, bundles: readonly Float64Array[], slot = 0): Pushed {
  const n = N / F, n1 = n + 1;
  let total = 0;
  for (let q = 0; q < bundles.length; q++) total += bundles[q]!.length;
  while (movedScratch.length <= slot) { movedScratch.push(new Float64Array(0)); dirScratch.push(new Uint8Array(0)); }
  if (movedScratch[slot]!.length < total) {
    movedScratch[slot] = new Float64Array(Math.ceil((total / REC) * 1.25) * REC);
    dirScratch[slot] = new Uint8Array(movedScratch[slot]!.length / REC);
  }
  const moved = movedScratch[slot]!.subarray(0, total);
  const dir = dirScratch[slot]!.subarray(0, total / REC);
  const count = new Int32Array(27);
  const loi = a * n, loj = b * n, lok = c * n, last = N - 1;
  // the direction (−1, 0, 1) of each residue (dest − own + F) % F along a dimension, in
  // `direction`'s order of tests, and 2 where a particle would have jumped over a subdomain: one
  // lookup per particle, so that no test in the loop is first reached by the first particle to
  // leave downwards (the optimised pushIn had no type feedback there and was thrown away, 3 times
  // a run at the seed's size)
  const steps = new Int8Array(F).fill(2);
  steps[F - 1] = -1;
  if (F > 1) steps[1] = 1;
  steps[0] = 0;
  // each bundle by a function of its own: V8 compiles the particle loop on stack (OSR) inside the
  // first large bundle, before the loop over bundles has stepped once with type feedback, and the
  // optimised code was thrown away at that step (`q++`), then compiled again, on each worker
  let w = 0;
  for (let q = 0; q < bundles.length; q++) w = pushBundle(N, F, a, b, c, n1, loi, loj, lok, last, g, steps, bundles[q]!, moved, dir, count, w);
  return { moved, dir, count };
}

/** The push of one bundle's particles `p` into `moved` and `dir` from record `w` on; the next record. */
function pushBundle(N: number, F: number, a: number, b: number, c: number, n1: number, loi: number, loj: number, lok: number, last: number,
  g: Float64Array, steps: Int8Array, p: Float64Array, moved: Float64Array, dir: Uint8Array, count: Int32Array, w: number): number {
  const n = N / F;
  for (let o = 0; o < p.length; o += REC, w += REC) {
    const x = p[o + 2]!, y = p[o + 3]!, z = p[o + 4]!;
    // cellOf, wrap and direction written out: luna runs node with a small inlining budget
    // (bin/luna), so here they stayed calls, each double they returned a new heap number: 2× the
    // push's CPU and most of a worker's collections (40 pushes of the centre subdomain's 110 133
    // particles at the seed's size, luna's node flags: 602–619 → 285–286 ms of CPU, 471–484 →
    // 153–159 collections)
    let ci = Math.floor(x * N), cj = Math.floor(y * N), ck = Math.floor(z * N);
    if (ci >= N) ci = last;
    if (cj >= N) cj = last;
    if (ck >= N) ck = last;
    const fx = x * N - ci, fy = y * N - cj, fz = z * N - ck;
    const li = ci - loi, lj = cj - loj, lk = ck - lok;
    let ax = 0, ay = 0, az = 0;
    for (let dx = 0; dx < 2; dx++) {
      const wx = dx ? fx : 1 - fx;
      for (let dy = 0; dy < 2; dy++) {
        const wxy = wx * (dy ? fy : 1 - fy);
        const q = 3 * (((li + dx) * n1 + lj + dy) * n1 + lk);
        const w0 = wxy * (1 - fz), w1 = wxy * fz;
        ax += w0 * g[q]!; ay += w0 * g[q + 1]!; az += w0 * g[q + 2]!;
        ax += w1 * g[q + 3]!; ay += w1 * g[q + 4]!; az += w1 * g[q + 5]!;
      }
    }
    const vx = p[o + 5]! + ax * DT, vy = p[o + 6]! + ay * DT, vz = p[o + 7]! + az * DT;
    let nx = x + vx * DT, ny = y + vy * DT, nz = z + vz * DT;
    if (nx < 0) nx += 1; else if (nx >= 1) nx -= 1;
    if (nx >= 1) nx -= 1;
    if (ny < 0) ny += 1; else if (ny >= 1) ny -= 1;
    if (ny >= 1) ny -= 1;
    if (nz < 0) nz += 1; else if (nz >= 1) nz -= 1;
    if (nz >= 1) nz -= 1;
    moved[w] = p[o]!; moved[w + 1] = p[o + 1]!;
    moved[w + 2] = nx; moved[w + 3] = ny; moved[w + 4] = nz;
    moved[w + 5] = vx; moved[w + 6] = vy; moved[w + 7] = vz;
    let cx = Math.floor(nx * N), cy = Math.floor(ny * N), cz = Math.floor(nz * N);
    if (cx >= N) cx = last;
    if (cy >= N) cy = last;
    if (cz >= N) cz = last;
    const tx = Math.floor(cx / n), ty = Math.floor(cy / n), tz = Math.floor(cz / n);
    const sx = steps[(tx - a + F) % F]!, sy = steps[(ty - b + F) % F]!, sz = steps[(tz - c + F) % F]!;
    // a jump over a subdomain: direction() names the particle and throws
    if (sx === 2) direction(a, tx, F, p[o]!);
    if (sy === 2) direction(b, ty, F, p[o]!);
    if (sz === 2) direction(c, tz, F, p[o]!);
    const d = ((sx + 1) * 3 + sy + 1) * 3 + sz + 1;
    dir[w >> 3] = d; // w / REC, REC = 8
    count[d]!++;
  }
  return w;
}

/** The pushed particles copied into their 27 bundles (sized by `count`). */
export function scatter(r: Pushed, outs: readonly Float64Array[]): void {
  const fill = new Int32Array(27);
  const { moved, dir } = r;
  for (let q = 0; q < dir.length; q++) {
    const d = dir[q]!;
    const out = outs[d]!;
    for (let k = 0, from = q * REC, to = fill[d]! * REC; k < REC; k++) out[to + k] = moved[from + k]!;
    fill[d]!++;
  }
}

/** The bundles' particles one after another into `out`. */
export function gather(bundles: readonly Float64Array[], out: Float64Array): void {
  let o = 0;
  for (const b of bundles) { out.set(b, o); o += b.length; }
}

/** Header length of a leaving array: 28 offsets. */
export const HEADER = 28;

/** Part d of a leaving array (empty for an empty array). */
export function partOf(leaving: Float64Array, d: number): Float64Array {
  if (leaving.length === 0) return leaving;
  return leaving.subarray(HEADER + leaving[d]! * REC, HEADER + leaving[d + 1]! * REC);
}

/**
 * The 27 bundles arriving at a subdomain from its staying particles (`parts[STAY]`, records) and
 * the leaving arrays of its neighbours (`parts[d]`, the one of the neighbour it comes from).
 */
export function arriving(parts: readonly Float64Array[]): Float64Array[] {
  const out: Float64Array[] = [];
  for (let d = 0; d < parts.length; d++) out.push(d === STAY ? parts[d]! : partOf(parts[d]!, d));
  return out;
}

/** The size of the leaving array for `count` particles per direction. */
export function leavingSize(count: Int32Array): number {
  let n = 0;
  for (let d = 0; d < 27; d++) if (d !== STAY) n += count[d]!;
  return HEADER + n * REC;
}

/**
 * Views of the 27 outgoing bundles: STAY in `stay`, the others in `leaving` (whose header this
 * writes), ready for `scatter`.
 */
export function outgoing(count: Int32Array, stay: Float64Array, leaving: Float64Array): Float64Array[] {
  let off = 0;
  const outs: Float64Array[] = [];
  for (let d = 0; d < 27; d++) {
    leaving[d] = off;
    if (d === STAY) { outs.push(stay); continue; }
    outs.push(leaving.subarray(HEADER + off * REC, HEADER + (off + count[d]!) * REC));
    off += count[d]!;
  }
  leaving[27] = off;
  return outs;
}
