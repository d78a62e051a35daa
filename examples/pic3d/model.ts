// The physical model of pic3d, shared by the fragmented program (ucodes) and the sequential
// reference: parameters, the initial cloud, and the per-particle arithmetic both must do alike.
//
// A self-gravitating dust cloud in the periodic unit cube, on an N³ grid of nodes i·h (h = 1/N):
//   ρ       cloud-in-cell deposit of the particle masses (8 nodes per particle),
//   ∇²φ = 4πG(ρ − ρ̄)   K Jacobi sweeps per step, warm-started from the previous step's φ,
//   g = −∇φ         central differences at the nodes,
//   leapfrog        v += g(x)·dt (g interpolated by cloud-in-cell), x += v·dt, x wrapped into [0, 1).
// A particle is a record of REC doubles: id, mass, x, y, z, vx, vy, vz. Masses are small
// multiples of a power of two, so the total mass is exact whatever the summation order.

export const REC = 8;
export const ID = 0, MASS = 1, X = 2, VX = 5;

/** 4πG with G = 1 */
export const FOUR_PI_G = 4 * Math.PI;
export const DT = 0.01;
/** the cloud: a uniform ball of radius R0 at the centre, rigidly rotating about z at OMEGA */
export const R0 = 0.3;
export const OMEGA = 2;
export const SEED = 20240917;

export interface Params {
  /** grid nodes per dimension */
  N: number;
  /** subdomains per dimension (N a multiple of F) */
  F: number;
  /** particles */
  NP: number;
  /** time steps */
  NT: number;
  /** Jacobi sweeps per step */
  K: number;
}

/** Why the parameters are unusable, or null. */
export function badParams(p: Params): string | null {
  const { N, F, NP, NT, K } = p;
  for (const [k, v] of Object.entries(p)) if (!Number.isInteger(v)) return `${k}=${v} is not an integer`;
  if (N < 2) return `N=${N}: need at least 2 grid nodes per dimension`;
  if (F < 1 || N % F !== 0) return `N=${N} must be a multiple of F=${F} >= 1`;
  if (N / F < 2) return `N/F=${N / F}: a subdomain needs at least 2 grid nodes per dimension (the sweeps take a halo from its neighbours)`;
  if (NP < 1 || NP > 1e8) return `NP=${NP}: need 1 <= NP <= 1e8`;
  if (NT < 0 || K < 1) return `need NT >= 0 and K >= 1 (NT=${NT}, K=${K})`;
  return null;
}

/** Mass units: particle p weighs (1 + p % 4) · 2^-e, e chosen so that the total is about 1. */
export function massExponent(NP: number): number {
  let e = 0; // ceil(log2(2.5 NP)), counted so that C++ (kernel.h) finds the same
  while (2 ** e < 2.5 * NP) e++;
  return e;
}
export function particleMass(p: number, NP: number): number {
  return (1 + (p % 4)) * 2 ** -massExponent(NP);
}
/** The exact total mass (a sum of small integers times a power of two). */
export function totalMass(NP: number): number {
  const q = Math.floor(NP / 4), r = NP % 4;
  return (q * 10 + (r * (r + 1)) / 2) * 2 ** -massExponent(NP);
}

/** mulberry32: a small, fast, seeded PRNG (deterministic in any JavaScript engine). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** the key of particle p's draws and the step between its draws (mulberry32's increment, the golden ratio) */
const INC = 0x6d2b79f5, GOLDEN = 0x9e3779b9;

/**
 * Draw j (0, 1, 2, …) of particle p, in [0, 1): a generator by counter, so that the cloud's
 * particles do not depend on how the ids are split between fragments. The particle's key is
 * mulberry32's (rng) p-th draw from SEED as 32 bits; draw j is mulberry32's output function of
 * the key XOR (j + 1)·GOLDEN (XOR, not a sum: with a sum two particles' keys a few increments
 * apart would share draws, and so positions). kernel.h draws the same bits in C++.
 */
export function draw(p: number, j: number): number {
  let t = (SEED + Math.imul(p + 1, INC)) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  const key = t ^ (t >>> 14);
  t = key ^ Math.imul(j + 1, GOLDEN);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** The ids [lo, hi) of part q of B of a cloud of NP particles. */
export function cloudRange(NP: number, q: number, B: number): [number, number] {
  return [Math.floor((q * NP) / B), Math.floor(((q + 1) * NP) / B)];
}

/** The initial cloud: NP particle records in id order (cloudPart of them all). */
export function initialCloud(NP: number): Float64Array {
  return cloudPart(NP, 0, NP);
}

/**
 * Particles lo … hi − 1 of the initial cloud of NP, in id order: a uniform ball of radius R0 at
 * the centre, rigidly rotating about z; particle p takes draws 3i, 3i + 1, 3i + 2 (draw) for
 * its i-th try, rejected outside the ball. The same records whatever the parts, so parts made by
 * fragments in parallel, put one after another, are the cloud. draw is written out in the loop:
 * as a call each draw's double was a heap object under bin/luna's inlining limit, and the cloud
 * runs before the first step (~150 → ~70 ms of CPU at 10⁶ particles, measured with mulberry32).
 */
export function cloudPart(NP: number, lo: number, hi: number): Float64Array {
  const out = new Float64Array((hi - lo) * REC);
  const unit = 2 ** -massExponent(NP);
  for (let p = lo; p < hi; p++) {
    let t = (SEED + Math.imul(p + 1, INC)) | 0;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const key = t ^ (t >>> 14);
    let dx: number, dy: number, dz: number, j = 0;
    do {
      t = key ^ Math.imul(++j, GOLDEN);
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      dx = (2 * (((t ^ (t >>> 14)) >>> 0) / 4294967296) - 1) * R0;
      t = key ^ Math.imul(++j, GOLDEN);
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      dy = (2 * (((t ^ (t >>> 14)) >>> 0) / 4294967296) - 1) * R0;
      t = key ^ Math.imul(++j, GOLDEN);
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      dz = (2 * (((t ^ (t >>> 14)) >>> 0) / 4294967296) - 1) * R0;
    } while (dx * dx + dy * dy + dz * dz > R0 * R0);
    const o = (p - lo) * REC;
    out[o] = p;
    out[o + 1] = (1 + (p % 4)) * unit; // particleMass(p, NP)
    out[o + 2] = 0.5 + dx; out[o + 3] = 0.5 + dy; out[o + 4] = 0.5 + dz;
    out[o + 5] = -OMEGA * dy; out[o + 6] = OMEGA * dx; out[o + 7] = 0;
  }
  return out;
}

/** The node index of the cell holding coordinate x ∈ [0, 1) on N nodes. */
export function cellOf(x: number, N: number): number {
  const c = Math.floor(x * N);
  return c >= N ? N - 1 : c;
}

/**
 * The subdomain of each particle of `parts` (records of REC doubles) on N nodes in F³ subdomains,
 * each counted in `count[s]`. cellOf written out: under bin/luna's inlining limit a helper's
 * returned double is a heap object, 10⁶ of them for the seed's cloud.
 */
export function subdomainsOf(parts: Float64Array, N: number, F: number, count: Int32Array): Int32Array {
  const n = N / F, NP = parts.length / REC;
  const sub = new Int32Array(NP);
  for (let p = 0, o = 0; p < NP; p++, o += REC) {
    let cx = Math.floor(parts[o + 2]! * N), cy = Math.floor(parts[o + 3]! * N), cz = Math.floor(parts[o + 4]! * N);
    if (cx >= N) cx = N - 1;
    if (cy >= N) cy = N - 1;
    if (cz >= N) cz = N - 1;
    const s = (Math.floor(cx / n) * F + Math.floor(cy / n)) * F + Math.floor(cz / n);
    sub[p] = s;
    count[s]!++;
  }
  return sub;
}

/** x moved back into [0, 1) after a step of less than one domain. */
export function wrap(x: number): number {
  if (x < 0) x += 1;
  else if (x >= 1) x -= 1;
  return x >= 1 ? x - 1 : x;
}

/** The subdomain range [lo, hi) of grid nodes along one dimension. */
export function range(N: number, F: number, a: number): [number, number] {
  const n = N / F;
  return [a * n, (a + 1) * n];
}

/** The bundle direction of particles that stay: d = ((dx+1)·3 + dy+1)·3 + dz+1 with dx = dy = dz = 0. */
export const STAY = 13;
