// The compute ucodes of pic3d in TypeScript (examples/pic3d-cpp has them in C++, same arithmetic).
// One subdomain (a, b, c) of F³ owns the grid nodes [a·n, (a+1)·n) × … (n = N/F) and the
// particles whose cell (cellOf) lies there. Layouts, all row-major:
//   deposit block  (n+1)³  the subdomain's own deposit, with the upper ghost layer
//   D, φ           n³      density and potential at the owned nodes
//   G              3·n³    g = −∇φ at the owned nodes, (gx, gy, gz) per node
//   bundle         REC·m   particle records travelling to one neighbour (27 directions,
//                          d = ((dx+1)·3 + dy+1)·3 + dz+1, d = 13 stays)
import type { DF } from '../../src/ucode/df.js';
import { cellOf, DT, FOUR_PI_G, REC, totalMass, wrap } from './model.js';



function fail(msg: string): never {
  console.log(`pic3d: FAILED (${msg})`);
  throw new Error(`pic3d: ${msg}`);
}

/** Particle records of a bundle DF (an empty DF is an empty bundle). */
function records(b: DF): Float64Array {
  return b.getSize() === 0 ? new Float64Array(0) : b.getFloat64Array();
}

/** Cloud-in-cell deposit of the particles arriving in 27 bundles into an (n+1)³ block. */
export function c_deposit(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const n = N / F, n1 = n + 1;
  const out = dfs[27]!.createFloat64Array(n1 * n1 * n1);
  const inv = N * N * N;
  const lo = [a * n, b * n, c * n];
  for (let d = 0; d < 27; d++) {
    const p = records(dfs[d]!);
    for (let o = 0; o < p.length; o += REC) {
      const mw = p[o + 1]! * inv;
      const ci = cellOf(p[o + 2]!, N), cj = cellOf(p[o + 3]!, N), ck = cellOf(p[o + 4]!, N);
      const fx = p[o + 2]! * N - ci, fy = p[o + 3]! * N - cj, fz = p[o + 4]! * N - ck;
      const li = ci - lo[0]!, lj = cj - lo[1]!, lk = ck - lo[2]!;
      if (li < 0 || li >= n || lj < 0 || lj >= n || lk < 0 || lk >= n)
        fail(`particle ${p[o]} at (${p[o + 2]}, ${p[o + 3]}, ${p[o + 4]}) arrived in subdomain (${a}, ${b}, ${c}), not its own`);
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
}

/**
 * Density at the owned nodes: the own deposit plus the upper ghost layers of the 7 lower
 * neighbours (offset o: bit 4 = x, 2 = y, 1 = z), in that order.
 */
export function c_density(N: number, F: number, ...dfs: DF[]): void {
  const n = N / F, n1 = n + 1;
  const own = dfs[0]!.getFloat64Array();
  const out = dfs[8]!.createFloat64Array(n * n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      for (let k = 0; k < n; k++) out[(i * n + j) * n + k] = own[(i * n1 + j) * n1 + k]!;
  for (let o = 1; o < 8; o++) {
    const src = dfs[o]!.getFloat64Array();
    const ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
    // my node index 0 along a shifted dimension is the neighbour's ghost index n
    const ni = ox ? 1 : n, nj = oy ? 1 : n, nk = oz ? 1 : n;
    for (let i = 0; i < ni; i++)
      for (let j = 0; j < nj; j++)
        for (let k = 0; k < nk; k++)
          out[(i * n + j) * n + k] += src[((ox ? n : i) * n1 + (oy ? n : j)) * n1 + (oz ? n : k)]!;
  }
}

/** φ = 0 at the owned nodes (the first warm start). */
export function c_zero(N: number, F: number, phi: DF): void {
  const n = N / F;
  phi.createFloat64Array(n * n * n);
}

/** φ with a one-node halo taken from the 6 face neighbours: an (n+2)³ array. */
function padded(n: number, dfs: DF[], first: number): Float64Array {
  const m = n + 2;
  const p = new Float64Array(m * m * m);
  const own = dfs[first]!.getFloat64Array();
  const xm = dfs[first + 1]!.getFloat64Array(), xp = dfs[first + 2]!.getFloat64Array();
  const ym = dfs[first + 3]!.getFloat64Array(), yp = dfs[first + 4]!.getFloat64Array();
  const zm = dfs[first + 5]!.getFloat64Array(), zp = dfs[first + 6]!.getFloat64Array();
  const at = (i: number, j: number, k: number): number => (i * n + j) * n + k;
  const pat = (i: number, j: number, k: number): number => ((i + 1) * m + j + 1) * m + k + 1;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      p.set(own.subarray(at(i, j, 0), at(i, j, 0) + n), pat(i, j, 0));
      p[pat(i, j, -1)] = zm[at(i, j, n - 1)]!;
      p[pat(i, j, n)] = zp[at(i, j, 0)]!;
    }
  for (let i = 0; i < n; i++)
    for (let k = 0; k < n; k++) {
      p[pat(i, -1, k)] = ym[at(i, n - 1, k)]!;
      p[pat(i, n, k)] = yp[at(i, 0, k)]!;
    }
  for (let j = 0; j < n; j++)
    for (let k = 0; k < n; k++) {
      p[pat(-1, j, k)] = xm[at(n - 1, j, k)]!;
      p[pat(n, j, k)] = xp[at(0, j, k)]!;
    }
  return p;
}

/** One Jacobi sweep of ∇²φ = 4πG(ρ − ρ̄): inputs D, φ, φ of the neighbours x−, x+, y−, y+, z−, z+. */
export function c_jacobi(N: number, F: number, NP: number, ...dfs: DF[]): void {
  const n = N / F, m = n + 2, mm = m * m;
  const rho = dfs[0]!.getFloat64Array();
  const p = padded(n, dfs, 1);
  const out = dfs[8]!.createFloat64Array(n * n * n);
  const h2c = FOUR_PI_G / (N * N);
  const rhobar = totalMass(NP);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let q = ((i + 1) * m + j + 1) * m + 1, c = (i * n + j) * n;
      for (let k = 0; k < n; k++, q++, c++)
        out[c] = (p[q - mm]! + p[q + mm]! + p[q - m]! + p[q + m]! + p[q - 1]! + p[q + 1]! - h2c * (rho[c]! - rhobar)) / 6;
    }
}

/** g = −∇φ at the owned nodes: inputs φ and the 6 face neighbours' φ. */
export function c_field(N: number, F: number, ...dfs: DF[]): void {
  const n = N / F, m = n + 2, mm = m * m;
  const p = padded(n, dfs, 0);
  const out = dfs[7]!.createFloat64Array(3 * n * n * n);
  const half = 0.5 * N;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let q = ((i + 1) * m + j + 1) * m + 1, c = 3 * (i * n + j) * n;
      for (let k = 0; k < n; k++, q++, c += 3) {
        out[c] = (p[q - mm]! - p[q + mm]!) * half;
        out[c + 1] = (p[q - m]! - p[q + m]!) * half;
        out[c + 2] = (p[q - 1]! - p[q + 1]!) * half;
      }
    }
}

/** Direction (−1, 0, 1) from subdomain `own` to `dest` of F along one dimension. */
function step(own: number, dest: number, F: number, id: number): number {
  const d = (dest - own + F) % F;
  if (d === 0) return 0;
  if (d === 1) return 1;
  if (d === F - 1) return -1;
  return fail(`particle ${id} moved more than one subdomain in a step (from ${own} to ${dest} of ${F}); lower DT or F`);
}

/**
 * Leapfrog push of the particles of subdomain (a, b, c), sorted into 27 outgoing bundles.
 * Inputs: G of the subdomain and of the 7 upper neighbours (offset o as in c_density), then the
 * 27 incoming bundles; outputs: the 27 outgoing bundles.
 */
export function c_push(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const n = N / F, n1 = n + 1;
  // g at the (n+1)³ nodes the subdomain's cells touch
  const g = new Float64Array(3 * n1 * n1 * n1);
  for (let o = 0; o < 8; o++) {
    const src = dfs[o]!.getFloat64Array();
    const ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
    const i0 = ox ? n : 0, j0 = oy ? n : 0, k0 = oz ? n : 0;
    for (let i = i0; i < (ox ? n1 : n); i++)
      for (let j = j0; j < (oy ? n1 : n); j++)
        for (let k = k0; k < (oz ? n1 : n); k++) {
          const s = 3 * (((i - i0) * n + j - j0) * n + k - k0), t = 3 * ((i * n1 + j) * n1 + k);
          g[t] = src[s]!; g[t + 1] = src[s + 1]!; g[t + 2] = src[s + 2]!;
        }
  }
  let total = 0;
  for (let d = 0; d < 27; d++) total += dfs[8 + d]!.getSize() / 8;
  const moved = new Float64Array(total);
  const dir = new Uint8Array(total / REC);
  const count = new Int32Array(27);
  const lo = [a * n, b * n, c * n];
  let w = 0;
  for (let d = 0; d < 27; d++) {
    const p = records(dfs[8 + d]!);
    for (let o = 0; o < p.length; o += REC, w += REC) {
      const x = p[o + 2]!, y = p[o + 3]!, z = p[o + 4]!;
      const ci = cellOf(x, N), cj = cellOf(y, N), ck = cellOf(z, N);
      const fx = x * N - ci, fy = y * N - cj, fz = z * N - ck;
      const li = ci - lo[0]!, lj = cj - lo[1]!, lk = ck - lo[2]!;
      let ax = 0, ay = 0, az = 0;
      for (let dx = 0; dx < 2; dx++) {
        const wx = dx ? fx : 1 - fx;
        for (let dy = 0; dy < 2; dy++) {
          const wxy = wx * (dy ? fy : 1 - fy);
          for (let dz = 0; dz < 2; dz++) {
            const wt = wxy * (dz ? fz : 1 - fz);
            const q = 3 * (((li + dx) * n1 + lj + dy) * n1 + lk + dz);
            ax += wt * g[q]!; ay += wt * g[q + 1]!; az += wt * g[q + 2]!;
          }
        }
      }
      const vx = p[o + 5]! + ax * DT, vy = p[o + 6]! + ay * DT, vz = p[o + 7]! + az * DT;
      const nx = wrap(x + vx * DT), ny = wrap(y + vy * DT), nz = wrap(z + vz * DT);
      moved[w] = p[o]!; moved[w + 1] = p[o + 1]!;
      moved[w + 2] = nx; moved[w + 3] = ny; moved[w + 4] = nz;
      moved[w + 5] = vx; moved[w + 6] = vy; moved[w + 7] = vz;
      const sx = step(a, Math.floor(cellOf(nx, N) / n), F, p[o]!);
      const sy = step(b, Math.floor(cellOf(ny, N) / n), F, p[o]!);
      const sz = step(c, Math.floor(cellOf(nz, N) / n), F, p[o]!);
      const dd = ((sx + 1) * 3 + sy + 1) * 3 + sz + 1;
      dir[w / REC] = dd;
      count[dd]!++;
    }
  }
  const outs: Float64Array[] = [];
  for (let d = 0; d < 27; d++) outs.push(dfs[35 + d]!.createFloat64Array(count[d]! * REC));
  const fill = new Int32Array(27);
  for (let q = 0; q < dir.length; q++) {
    const d = dir[q]!;
    const out = outs[d]!;
    for (let r = 0, from = q * REC, to = fill[d]! * REC; r < REC; r++) out[to + r] = moved[from + r]!;
    fill[d]!++;
  }
}
