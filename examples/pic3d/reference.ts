// The sequential reference of pic3d: the same method on global N³ arrays, one particle list in id
// order, no subdomains. The fragmented program (pic3d.fa) must reproduce its particles to
// rounding (the deposit sums in another order) and its total mass exactly.
import { cellOf, DT, FOUR_PI_G, REC, totalMass, wrap, type Params } from './model.js';

export interface ReferenceState {
  /** particle records in id order */
  parts: Float64Array;
  /** the potential after the last step (warm start of the next) */
  phi: Float64Array;
}

/** Runs NT steps of the method on `parts` (changed in place) and returns the final state. */
export function simulate(p: Params, parts: Float64Array): ReferenceState {
  const { N, NT, K } = p;
  const NP = parts.length / REC;
  const M = N * N * N;
  const rhobar = totalMass(NP);
  let phi = new Float64Array(M);
  let tmp = new Float64Array(M);
  const rho = new Float64Array(M);
  const g = new Float64Array(3 * M);
  const inv = N * N * N; // 1/h³
  const h2c = FOUR_PI_G / (N * N);
  const half = 0.5 * N;
  const at = (i: number, j: number, k: number): number => (i * N + j) * N + k;
  const up = (i: number): number => (i + 1 === N ? 0 : i + 1);
  const dn = (i: number): number => (i === 0 ? N - 1 : i - 1);

  for (let t = 0; t < NT; t++) {
    // mass deposit (cloud in cell)
    rho.fill(0);
    for (let q = 0; q < NP; q++) {
      const o = q * REC;
      const mw = parts[o + 1]! * inv;
      const sx = parts[o + 2]! * N, sy = parts[o + 3]! * N, sz = parts[o + 4]! * N;
      const ci = cellOf(parts[o + 2]!, N), cj = cellOf(parts[o + 3]!, N), ck = cellOf(parts[o + 4]!, N);
      const fx = sx - ci, fy = sy - cj, fz = sz - ck;
      for (let dx = 0; dx < 2; dx++) {
        const wx = dx ? fx : 1 - fx, i = dx ? up(ci) : ci;
        for (let dy = 0; dy < 2; dy++) {
          const wxy = wx * (dy ? fy : 1 - fy), j = dy ? up(cj) : cj;
          for (let dz = 0; dz < 2; dz++) rho[at(i, j, dz ? up(ck) : ck)] += mw * (wxy * (dz ? fz : 1 - fz));
        }
      }
    }
    // Poisson: K Jacobi sweeps
    for (let s = 0; s < K; s++) {
      for (let i = 0; i < N; i++)
        for (let j = 0; j < N; j++)
          for (let k = 0; k < N; k++) {
            const c = at(i, j, k);
            tmp[c] = (phi[at(dn(i), j, k)]! + phi[at(up(i), j, k)]! + phi[at(i, dn(j), k)]! + phi[at(i, up(j), k)]!
              + phi[at(i, j, dn(k))]! + phi[at(i, j, up(k))]! - h2c * (rho[c]! - rhobar)) / 6;
          }
      const x = phi; phi = tmp; tmp = x;
    }
    // g = −∇φ
    for (let i = 0; i < N; i++)
      for (let j = 0; j < N; j++)
        for (let k = 0; k < N; k++) {
          const c = at(i, j, k);
          g[3 * c] = (phi[at(dn(i), j, k)]! - phi[at(up(i), j, k)]!) * half;
          g[3 * c + 1] = (phi[at(i, dn(j), k)]! - phi[at(i, up(j), k)]!) * half;
          g[3 * c + 2] = (phi[at(i, j, dn(k))]! - phi[at(i, j, up(k))]!) * half;
        }
    // leapfrog push
    for (let q = 0; q < NP; q++) {
      const o = q * REC;
      const sx = parts[o + 2]! * N, sy = parts[o + 3]! * N, sz = parts[o + 4]! * N;
      const ci = cellOf(parts[o + 2]!, N), cj = cellOf(parts[o + 3]!, N), ck = cellOf(parts[o + 4]!, N);
      const fx = sx - ci, fy = sy - cj, fz = sz - ck;
      let ax = 0, ay = 0, az = 0;
      for (let dx = 0; dx < 2; dx++) {
        const wx = dx ? fx : 1 - fx, i = dx ? up(ci) : ci;
        for (let dy = 0; dy < 2; dy++) {
          const wxy = wx * (dy ? fy : 1 - fy), j = dy ? up(cj) : cj;
          for (let dz = 0; dz < 2; dz++) {
            const w = wxy * (dz ? fz : 1 - fz);
            const c = 3 * at(i, j, dz ? up(ck) : ck);
            ax += w * g[c]!; ay += w * g[c + 1]!; az += w * g[c + 2]!;
          }
        }
      }
      const vx = parts[o + 5]! + ax * DT, vy = parts[o + 6]! + ay * DT, vz = parts[o + 7]! + az * DT;
      parts[o + 5] = vx; parts[o + 6] = vy; parts[o + 7] = vz;
      parts[o + 2] = wrap(parts[o + 2]! + vx * DT);
      parts[o + 3] = wrap(parts[o + 3]! + vy * DT);
      parts[o + 4] = wrap(parts[o + 4]! + vz * DT);
    }
  }
  return { parts, phi };
}
