// A lazily generated large trace for benchmarks: nodes × threads chains of CFs advancing in
// lock-step periods; each CF reads its chain's previous DF and, every other step, a partner
// chain's DF that crossed nodes. All runtime events a real trace has are present (creation,
// inputs, starts/finishes with CPU times, names, computed, sends, receives, deletions, sysBusy),
// with DFs deleted after use so a streaming analysis holds only a few steps of state.

import type { TraceEvent } from '../../trace/schema.js';
import type { TraceManifest } from '../../trace/manifest.js';
import { VERSION as TRACE_FORMAT_VERSION } from '../../trace/format.js';
import { Prng } from './prng.js';

export interface SyntheticOptions { events: number; nodes?: number; threads?: number; seed?: number; periodNs?: number }

export function syntheticManifest(o: SyntheticOptions): TraceManifest {
  const N = o.nodes ?? 4, T = o.threads ?? 4;
  return {
    format: 'luna-ts-trace', version: TRACE_FORMAT_VERSION, program: 'synthetic', args: [], nodes: N, threads: T,
    codes: ['step', 'exchange'], status: 'completed',
    sites: [
      { label: 'step', code: 0, kind: 'call', file: 'synthetic.fa', line: 10, col: 9, spawnNo: 0 },
      { label: 'exchange', code: 1, kind: 'call', file: 'synthetic.fa', line: 11, col: 9, spawnNo: 1 },
    ],
    clock: { cpuExact: true, offsets: new Array<number>(N).fill(0) },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: 'synthetic', node: process.version }, files: [],
  };
}

export function* syntheticEvents(o: SyntheticOptions): Generator<TraceEvent> {
  const N = o.nodes ?? 4, T = o.threads ?? 4, W = N * T, P = o.periodNs ?? 100_000;
  const rng = new Prng(o.seed ?? 1);
  const nextCf = new Array<number>(N).fill(1), nextDf = new Array<number>(N).fill(1);
  const cpu = new Float64Array(W);
  // per chain: local DF numbers (on its node, and on the partner's node) of its last output
  let own = new Int32Array(W).fill(-1), remote = new Int32Array(W).fill(-1);
  let emitted = 0;
  for (let n = 0; n < N; n++) { yield { kind: 'programStart', t: 0, node: n, thread: 0 }; emitted++; }
  const batch: TraceEvent[] = [];
  let k = 0;
  for (; emitted < o.events; k++) {
    const t0 = k * P + 10;
    const nOwn = new Int32Array(W).fill(-1), nRemote = new Int32Array(W).fill(-1);
    for (let c = 0; c < W; c++) {
      const node = Math.floor(c / T), th = (c % T) + 1, slot = c;
      const cf = nextCf[node]++;
      batch.push({ kind: 'cfCreated', t: t0, node, thread: 0, cf, parentCf: 0, site: k & 1, gid: `${c}_${k}`, labelIdx: [c, k] });
      batch.push({ kind: 'cfReady', t: t0 + 1, node, thread: 0, cf });
      if (own[c] >= 0) batch.push({ kind: 'cfInput', t: t0 + 1, node, thread: 0, cf, df: own[c] });
      const partner = (c + W - T) % W; // the chain whose DF crossed to this node last step
      if (k & 1 && remote[partner] >= 0) batch.push({ kind: 'cfInput', t: t0 + 1, node, thread: 0, cf, df: remote[partner] });
      const d = t0 + 100 + rng.int(0, P >> 4), work = (P >> 1) + rng.int(0, P >> 3), pre = rng.chance(0.2) ? rng.int(0, 1000) : 0;
      batch.push({ kind: 'cfStart', t: d, node, thread: th, cpu: cpu[slot], cf, lane: th });
      cpu[slot] += work;
      const e = d + work + pre;
      batch.push({ kind: 'cfFinish', t: e, node, thread: th, cpu: cpu[slot], cf, lane: th });
      const df = nextDf[node]++;
      batch.push({ kind: 'dfName', t: e + 5, node, thread: 0, df, name: `x#0.${c}.${k}` });
      batch.push({ kind: 'dfComputed', t: e + 5, node, thread: 0, df, producerCf: cf, bytes: 4096 });
      batch.push({ kind: 'sysBusy', t: e, node, thread: 0, end: e + 5 });
      nOwn[c] = df;
      if (!(k & 1) && N > 1) { // ship to the next node for the partner's next step
        const to = (node + 1) % N, rdf = nextDf[to]++;
        const s = e + 20, g = s + 2000 + rng.int(0, 3000);
        batch.push({ kind: 'dfSendStart', t: s, node, thread: 0, df, toNode: to, bytes: 4096 });
        batch.push({ kind: 'dfSendEnd', t: s + 500, node, thread: 0, df, toNode: to });
        batch.push({ kind: 'dfName', t: g, node: to, thread: 0, df: rdf, name: `x#0.${c}.${k}` });
        batch.push({ kind: 'dfReceive', t: g, node: to, thread: 0, df: rdf, fromNode: node, bytes: 4096 });
        nRemote[c] = rdf;
      }
      // last step's DFs are read by now: delete them
      if (own[c] >= 0) batch.push({ kind: 'dfDeleted', t: e + 30, node, thread: 0, df: own[c] });
      if (k & 1 && remote[partner] >= 0) batch.push({ kind: 'dfDeleted', t: e + 30, node, thread: 0, df: remote[partner] });
    }
    own = nOwn; remote = nRemote;
    batch.sort((a, b) => a.t - b.t);
    for (const e of batch) yield e;
    emitted += batch.length;
    batch.length = 0;
  }
  for (let n = 0; n < N; n++) yield { kind: 'programFinish', t: k * P + 10, node: n, thread: 0, status: 1 };
}
