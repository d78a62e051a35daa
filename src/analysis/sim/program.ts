// Random fragmented programs for the simulator: a DAG of CFs in topological order, each CF
// producing one DF consumed by later CFs, with a placement, a code, a workload and a pre-emption.

import { Prng } from './prng.js';

export interface SimCf {
  id: number;
  code: number;
  label: string;
  node: number;
  /** ids of the CFs whose DFs it reads (= its DF inputs, DF i is produced by CF i) */
  inputs: number[];
  /** CPU work (ns) and extra wall time lost to pre-emption by system threads */
  work: number;
  preempt: number;
  bytes: number;
  /** created on node 0 and migrated to `node` */
  migrates: boolean;
}

export interface ProgramOptions {
  seed: number;
  cfs?: number;
  nodes?: number;
  codes?: number;
  maxInputs?: number;
  rootProb?: number;
  work?: [number, number];
  preemptProb?: number;
  migrateProb?: number;
}

export function randomProgram(o: ProgramOptions): SimCf[] {
  const rng = new Prng(o.seed * 7919 + 17);
  const K = o.cfs ?? 60, N = o.nodes ?? 2, codes = o.codes ?? 4, maxIn = o.maxInputs ?? 3;
  const [wlo, whi] = o.work ?? [1000, 50000];
  const out: SimCf[] = [];
  for (let i = 0; i < K; i++) {
    const code = rng.int(0, codes - 1);
    const inputs: number[] = [];
    if (i > 0 && !rng.chance(o.rootProb ?? 0.1)) {
      const k = rng.int(1, maxIn);
      for (let j = 0; j < k; j++) {
        // favour recent producers: chains and fan-ins rather than a flat random graph
        const back = 1 + Math.floor(rng.next() * rng.next() * Math.min(i, 40));
        const p = i - back;
        if (!inputs.includes(p)) inputs.push(p);
      }
    }
    const work = rng.int(wlo, whi);
    out.push({
      id: i, code, label: `f${code}${rng.chance(0.5) ? 'a' : 'b'}`, node: rng.int(0, N - 1), inputs, work,
      preempt: rng.chance(o.preemptProb ?? 0.3) ? rng.int(0, work >> 1) : 0,
      bytes: rng.int(8, 1 << 16),
      migrates: rng.chance(o.migrateProb ?? 0.2),
    });
  }
  return out;
}
