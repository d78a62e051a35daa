// A tiny builder of hand-made traces for the analysis tests. DFs are given by their display
// names (`A[3]`) and recorded with real-format keys (`A#0.3`), as a run records them; each
// (code, label) pair gets a spawn site in the manifest's site table.
import type { TraceEvent } from '../../src/trace/schema.js';
import type { SiteInfo, TraceManifest } from '../../src/trace/manifest.js';
import { VERSION } from '../../src/trace/format.js';
import { familyKey, indexKey } from '../../src/core/dfkey.js';

const sites: SiteInfo[] = [];
const siteIds = new Map<string, number>();

/** The spawn site of (code, label), registered on first use. */
export function siteOf(code: number, label: string): number {
  const k = `${code}:${label}`;
  let id = siteIds.get(k);
  if (id === undefined) {
    id = sites.length;
    siteIds.set(k, id);
    sites.push({ label, code, kind: 'call', file: 'hand.fa', line: id + 1, col: 5, spawnNo: 0 });
  }
  return id;
}

export function manifest(nodes: number, threads: number, codes = ['c0', 'c1', 'c2', 'c3']): TraceManifest {
  return {
    format: 'luna-ts-trace', version: VERSION, program: 'hand', args: [], nodes, threads, codes, sites: [...sites], status: 'completed',
    clock: { cpuExact: true, offsets: new Array<number>(nodes).fill(0) },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: 'test', node: process.version }, files: [],
  };
}

/** `A[3][4]` → `A#0.3.4` (a DF of family A declared by block execution 0). */
export function keyOf(name: string): string {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)((?:\[-?\d+\])*)$/.exec(name);
  if (!m) return name;
  let k = familyKey(m[1]!, '0');
  for (const i of m[2]!.match(/-?\d+/g) ?? []) k = indexKey(k, Number(i));
  return k;
}

export class TB {
  readonly ev: TraceEvent[] = [];
  private readonly dfs = new Map<string, number>(); // node:name → local number
  private nextDf = 100;
  private cpu = new Map<string, number>();
  constructor(readonly nodes: number, readonly t0 = 0) {
    for (let n = 0; n < nodes; n++) this.ev.push({ kind: 'programStart', t: t0, node: n, thread: 0 });
  }
  /** local number of DF `name` on `node`, emitting dfName the first time */
  df(node: number, name: string, t: number): number {
    const k = `${node}:${name}`;
    let l = this.dfs.get(k);
    if (l === undefined) { l = this.nextDf++; this.dfs.set(k, l); this.ev.push({ kind: 'dfName', t, node, thread: 0, df: l, name: keyOf(name) }); }
    return l;
  }
  /** a CF on node/lane `thread`, running [start, end) wall with `cpu` ns of CPU (default: all of it) */
  cf(o: { node: number; thread: number; cf: number; code?: number; label?: string; start: number; end: number; cpu?: number; inputs?: string[] }): this {
    const { node, thread, cf } = o;
    this.ev.push({ kind: 'cfCreated', t: this.t0, node, thread: 0, cf, parentCf: 0, site: siteOf(o.code ?? 0, o.label ?? `cf${cf}`), gid: `g${node}_${cf}`, labelIdx: [] });
    for (const name of o.inputs ?? []) this.ev.push({ kind: 'cfInput', t: o.start, node, thread, cf, df: this.df(node, name, o.start) });
    const k = `${node}.${thread}`, c0 = this.cpu.get(k) ?? 0, c1 = c0 + (o.cpu ?? o.end - o.start);
    this.cpu.set(k, c1);
    this.ev.push({ kind: 'cfStart', t: o.start, node, thread, cpu: c0, cf, lane: thread });
    this.ev.push({ kind: 'cfFinish', t: o.end, node, thread, cpu: c1, cf, lane: thread });
    return this;
  }
  computed(node: number, name: string, producerCf: number, t: number): this {
    this.ev.push({ kind: 'dfComputed', t, node, thread: 0, df: this.df(node, name, t), producerCf, bytes: 8 });
    return this;
  }
  transfer(name: string, from: number, to: number, sendT: number, arriveT: number): this {
    this.ev.push({ kind: 'dfSendStart', t: sendT, node: from, thread: 0, df: this.df(from, name, sendT), toNode: to, bytes: 8 });
    this.ev.push({ kind: 'dfReceive', t: arriveT, node: to, thread: 0, df: this.df(to, name, arriveT), fromNode: from, bytes: 8 });
    return this;
  }
  /** lane `thread` of `node` waited on [start, end) for `resource` (inside local CF `cf`, -1: outside any) */
  wait(o: { node: number; thread: number; cf?: number; rank?: number; kind?: number; resource?: string; start: number; end: number; cpu?: number }): this {
    this.ev.push({ kind: 'wait', t: o.start, end: o.end, node: o.node, thread: o.thread, cpu: o.cpu ?? NaN, cf: o.cf ?? -1, rank: o.rank ?? -1, waitKind: o.kind ?? 6, resource: o.resource ?? 'res' });
    return this;
  }
  /** all events, time-ordered (stable), closed by programFinish at `end` */
  done(end: number): TraceEvent[] {
    for (let n = 0; n < this.nodes; n++) this.ev.push({ kind: 'programFinish', t: end, node: n, thread: 0, status: 1 });
    return this.ev.map((e, i) => [e, i] as const).sort((a, b) => a[0].t - b[0].t || a[1] - b[1]).map((x) => x[0]);
  }
}

/**
 * Eight independent 'side' CFs first on lanes 1 and 2 (0–400), then a chain of four 'path' CFs
 * on lane 1 that could have started at once; the end of the chain.
 */
export function sideThenChain(tb: TB): number {
  for (let i = 0; i < 8; i++) tb.cf({ node: 0, thread: 1 + (i % 2), cf: i + 1, label: 'side', start: Math.floor(i / 2) * 100, end: Math.floor(i / 2) * 100 + 100 });
  let t = 400;
  for (let i = 0; i < 4; i++) {
    tb.cf({ node: 0, thread: 1, cf: 20 + i, label: 'path', start: t, end: t + 300, inputs: i > 0 ? [`p[${i}]`] : [] });
    tb.computed(0, `p[${i + 1}]`, 20 + i, t + 300);
    t += 300;
  }
  return t;
}

/** A sequential chain of 20 'solve' CFs of 1 000 handed round threads 1–4 in turn; its end. */
export function chainAroundThreads(tb: TB): number {
  let t = 0;
  for (let i = 0; i < 20; i++) {
    tb.cf({ node: 0, thread: 1 + (i % 4), cf: i + 1, label: 'solve', start: t + 10, end: t + 1010, inputs: i > 0 ? [`A[${i - 1}]`] : [] });
    tb.computed(0, `A[${i}]`, i + 1, t + 1010);
    t += 1010;
  }
  return t;
}
