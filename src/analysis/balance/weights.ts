// What a fragment weighs in a step: the time the next run will take to execute it.
//
// A CF's own measurement is the seed's weight. On a shared machine it also carries the moment it
// ran in: contention only ever stretches a CF (a fixed loop here measured 35–54 ms of thread CPU
// time from one repetition to the next under load), and the stretched ones are exactly the ones a
// heaviest-first balancer moves. In a test_1 trace the add-one CFs took 2.8–3.0 ms of CPU time
// mostly and ~4.9 ms in the tenth that ran under contention; the step moved those 4.9 ms CFs, and
// in the next run every add-one took the same time on both nodes: node 1 was predicted twice its
// real load (drift 0.46) and node 0 too little (1.40). The typical weight is the median of the
// CF's class — the same code on inputs and outputs of the same sizes does the same work — so a
// moment of contention does not make a CF heavy.
import type { Profile } from './profile.js';

/** A CF's own weight: its CPU time (at most its wall time), or its wall time (the seed's). */
export function weightOf(p: Profile, c: number, weights: 'wall' | 'cpu'): number {
  const wall = Math.max(0, p.finish[c]! - p.start[c]!);
  return weights === 'cpu' ? Math.min(Math.max(0, p.cpu[c]!), wall) : wall;
}

/** Every CF's weight: its own, or (typical) the median of its class's own weights. */
export function weightsOf(p: Profile, weights: 'wall' | 'cpu', typical: boolean): Float64Array {
  const own = Float64Array.from({ length: p.n }, (_, c) => weightOf(p, c, weights));
  return typical ? typicalWeights(p, own) : own;
}

/** The median of each class (code, bytes read, bytes written) of `own`. */
export function typicalWeights(p: Profile, own: ArrayLike<number>): Float64Array {
  const written = new Float64Array(p.n);
  for (let d = 0; d < p.dfs; d++) if (p.dfWriter[d]! >= 0) written[p.dfWriter[d]!] += p.dfBytes[d]!;
  const classes = new Map<string, number[]>();
  const key: string[] = new Array<string>(p.n);
  for (let c = 0; c < p.n; c++) {
    let read = 0;
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) read += p.dfBytes[p.depDf[k]!]!;
    const kk = `${p.code[c]}:${read}:${written[c]}`;
    key[c] = kk;
    const members = classes.get(kk);
    if (members) members.push(own[c]!); else classes.set(kk, [own[c]!]);
  }
  const median = new Map<string, number>();
  for (const [kk, xs] of classes) {
    xs.sort((a, b) => a - b);
    const h = xs.length >> 1;
    median.set(kk, xs.length % 2 ? xs[h]! : (xs[h - 1]! + xs[h]!) / 2);
  }
  return Float64Array.from(key, (kk) => median.get(kk)!);
}

/** The profile with each CF's execution interval cut or stretched to its weight ([t_b, t_b + w]). */
export function withDurations(p: Profile, w: ArrayLike<number>): Profile {
  return { ...p, finish: Float64Array.from(p.start, (s, c) => s + w[c]!) };
}
