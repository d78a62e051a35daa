// The kernels of pic3d (kernels.ts) on the same F³ subdomains, run one after another in a plain
// loop without the runtime: the baseline the fragmented program's speed is measured against
// (bench/pic.ts). It computes exactly what pic3d.fa computes.
import { deposit, density, field, gather, jacobi, push, scatter } from './kernels.js';
import { deepScratch, densityHalo, haloDepth, jacobiDeep, sweepGroups } from './halo.js';
import { REC, STAY, subdomainsOf, type Params } from './model.js';

/** How the sequential run sweeps: with deep halos of `depth` (halo.ts) or one face exchange per sweep; `onPhi` sees every step's last φ. */
export interface SequentialOptions {
  depth?: number;
  onPhi?: (t: number, phi: readonly Float64Array[]) => void;
  /** sees the final particles, by subdomain s and direction d (bundles[s][d]: those leaving s towards d) */
  onEnd?: (bundles: readonly (readonly Float64Array[])[]) => void;
}

/**
 * The 27 bundles arriving at subdomain (a, b, c) of F³, in direction order: bundle d of the
 * neighbour it comes from (`bundles[s][d]`: the particles leaving subdomain s towards d).
 */
export function incomingBundles(bundles: readonly (readonly Float64Array[])[], F: number, a: number, b: number, c: number): Float64Array[] {
  const id = (x: number, y: number, z: number): number => (((x + F) % F) * F + ((y + F) % F)) * F + ((z + F) % F);
  return Array.from({ length: 27 }, (_, d) => bundles[id(a - (Math.floor(d / 9) - 1), b - ((Math.floor(d / 3) % 3) - 1), c - ((d % 3) - 1))]![d]!);
}

/** NT steps of the method from `parts`; returns the particles (in subdomain and bundle order). */
export function runSequential(p: Params, parts: Float64Array, opts: SequentialOptions = {}): Float64Array {
  const { N, F, NP, NT, K } = p;
  const n = N / F, S = F * F * F, n3 = n * n * n, n1 = n + 1;
  const id = (a: number, b: number, c: number): number => (((a + F) % F) * F + ((b + F) % F)) * F + ((c + F) % F);
  const empty = new Float64Array(0);
  // the initial particles, as the STAY bundle of their subdomain: each one's subdomain found once
  // and its record copied by a loop, as the program's initial cloud does (driver.ts c_init_part)
  const counts = new Int32Array(S);
  const count = parts.length / REC;
  const sub = subdomainsOf(parts, N, F, counts);
  let bundles: Float64Array[][] = Array.from({ length: S }, (_, s) =>
    Array.from({ length: 27 }, (_, d) => (d === STAY ? new Float64Array(counts[s]! * REC) : empty)));
  const fill = new Int32Array(S);
  for (let p = 0, o = 0; p < count; p++, o += REC) {
    const s = sub[p]!, to = bundles[s]![STAY]!;
    for (let k = 0, w = fill[s]! * REC; k < REC; k++) to[w + k] = parts[o + k]!;
    fill[s]!++;
  }
  let phi = Array.from({ length: S }, () => new Float64Array(n3));
  let next = Array.from({ length: S }, () => new Float64Array(n3));
  const blocks = Array.from({ length: S }, () => new Float64Array(n1 * n1 * n1));
  const rho = Array.from({ length: S }, () => new Float64Array(n3));
  const g = Array.from({ length: S }, () => new Float64Array(3 * n3));
  const pad = new Float64Array((n + 2) ** 3);
  const each = (f: (a: number, b: number, c: number, s: number) => void): void => {
    for (let a = 0; a < F; a++) for (let b = 0; b < F; b++) for (let c = 0; c < F; c++) f(a, b, c, id(a, b, c));
  };
  const corners = (a: number, b: number, c: number, sign: number): number[] =>
    [0, 1, 2, 3, 4, 5, 6, 7].map((o) => id(a + sign * ((o >> 2) & 1), b + sign * ((o >> 1) & 1), c + sign * (o & 1)));
  const faces = (a: number, b: number, c: number): number[] =>
    [id(a, b, c), id(a - 1, b, c), id(a + 1, b, c), id(a, b - 1, c), id(a, b + 1, c), id(a, b, c - 1), id(a, b, c + 1)];
  const incoming = (a: number, b: number, c: number): Float64Array[] => incomingBundles(bundles, F, a, b, c);
  // the deep-halo sweeps (halo.ts): the 27 blocks around a subdomain, in direction order
  const deep = opts.depth !== undefined;
  const d = haloDepth(opts.depth ?? 1, n, K);
  const around = (a: number, b: number, c: number): number[] =>
    Array.from({ length: 27 }, (_, q) => id(a + Math.floor(q / 9) - 1, b + (Math.floor(q / 3) % 3) - 1, c + (q % 3) - 1));
  const rhoHalo = deep ? Array.from({ length: S }, () => new Float64Array((n + 2 * d) ** 3)) : [];
  const boxes = deepScratch(n, d);
  for (let t = 0; t < NT; t++) {
    const parts: Float64Array[] = [];
    each((a, b, c, s) => {
      const inc = incoming(a, b, c);
      blocks[s]!.fill(0);
      deposit(N, F, a, b, c, inc, blocks[s]!);
      parts[s] = new Float64Array(inc.reduce((n, x) => n + x.length, 0));
      gather(inc, parts[s]!);
    });
    if (deep) {
      each((a, b, c, s) => densityHalo(N, F, d, around(a, b, c).map((q) => blocks[q]!), rhoHalo[s]!));
      const groups = sweepGroups(K, d);
      for (let j = 0; j < groups; j++) {
        each((a, b, c, s) => jacobiDeep(N, F, NP, Math.min(d, K - j * d), rhoHalo[s]!, d, around(a, b, c).map((q) => phi[q]!), next[s]!, j === groups - 1 ? g[s]! : null, ...boxes));
        [phi, next] = [next, phi];
      }
    } else {
      each((a, b, c, s) => density(N, F, corners(a, b, c, -1).map((q) => blocks[q]!), rho[s]!));
      for (let k = 0; k < K; k++) {
        each((a, b, c, s) => jacobi(N, F, NP, rho[s]!, faces(a, b, c).map((q) => phi[q]!), next[s]!, pad));
        [phi, next] = [next, phi];
      }
      each((a, b, c, s) => field(N, F, faces(a, b, c).map((q) => phi[q]!), g[s]!, pad));
    }
    opts.onPhi?.(t, phi);
    const out: Float64Array[][] = Array.from({ length: S }, () => []);
    each((a, b, c, s) => {
      const r = push(N, F, a, b, c, corners(a, b, c, 1).map((q) => g[q]!), [parts[s]!]);
      out[s] = Array.from({ length: 27 }, (_, d) => new Float64Array(r.count[d]! * REC));
      scatter(r, out[s]!);
    });
    bundles = out;
  }
  opts.onEnd?.(bundles);
  const all = new Float64Array(NP * REC);
  let o = 0;
  for (const bs of bundles) for (const b of bs) { all.set(b, o); o += b.length; }
  return all;
}
