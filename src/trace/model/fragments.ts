// The fragments of the trace model: CF numbers of each node resolved to Fragment records from
// creation (or arrival) to finish, their lanes, their inputs, and the system thread's busy spans
// with the CFs it ran itself taken out.
import type { SiteInfo } from '../manifest.js';
import type { RecordKind, TraceEvent } from '../schema.js';
import { fileOf } from '../damage.js';
import { CODE, COL, type RecordBatch } from '../columns.js';
import { Fragment, type DfRec } from './records.js';
import type { Resolver, TraceModel } from './model.js';
import { fmtT } from './time.js';
import { IdMap } from './id-map.js';

const RECENT_MAX = 1 << 13;
const EMPTY: readonly number[] = [];
const EMPTY_INPUTS: readonly DfRec[] = [];

const key = (node: number, local: number): number => node * 4294967296 + local;
/** The file a damage message about CF f names (made only when there is one: not a string per CF). */
const whereRan = (f: Fragment): string => (f.lane > 0 ? fileOf(f.node, f.lane) : `node${f.node}`);

/**
 * When the last of f's inputs was present on its node, at most its start; its recorded readiness
 * when no input's time is known (a CF read before its inputs' dfComputed records were written).
 */
function readyFromInputs(f: Fragment, inputs: readonly DfRec[]): number {
  let r = -Infinity;
  for (let i = 0; i < inputs.length; i++) { const t = inputs[i]!.presentAt(f.node); if (t > r) r = t; }
  if (r === -Infinity) return f.ready;
  return r < f.start ? r : f.start;
}

export class FragmentResolver implements Resolver {
  readonly kinds: readonly RecordKind[] = ['cfCreated', 'cfReceive', 'cfMigrate', 'cfReady', 'cfInput', 'cfStart', 'cfFinish', 'sysBusy'];
  /** per lane slot (node · T + lane − 1): the CF running there */
  readonly running: (Fragment | null)[];
  /** per node: local CF number → record */
  private readonly cfs: IdMap<Fragment>[];
  /** per node: CFs finished lately, for outputs announced after the finish */
  private readonly recent: IdMap<Fragment>[];
  private readonly recentRing = new Float64Array(RECENT_MAX).fill(-1);
  private recentPos = 0;
  /** per node: start and finish of the CFs its system thread ran itself since its last sysBusy */
  private readonly ranInline: number[][];
  /** per node: its latest sysBusy span, held until the CFs run inside it are known (NaN: none) */
  private readonly heldBusy: Float64Array;
  private readonly N: number;
  private readonly T: number;
  /** fragments finished so far (their seq numbers) */
  private finished = 0;
  /**
   * A recycling model's records free for reuse: a fragment leaving the recently-finished ring
   * comes back here, so a run of any length makes only as many records as are alive at once (at
   * 10^6 CFs the made and dropped records cost more in garbage collection than their resolving).
   */
  private readonly spare: Fragment[] | null;

  constructor(private readonly m: TraceModel) {
    this.N = m.N;
    this.T = m.T;
    this.cfs = Array.from({ length: this.N }, () => new IdMap<Fragment>());
    this.recent = Array.from({ length: this.N }, () => new IdMap<Fragment>(RECENT_MAX));
    this.running = new Array<Fragment | null>(this.N * this.T).fill(null);
    this.ranInline = Array.from({ length: this.N }, () => []);
    this.heldBusy = new Float64Array(2 * this.N).fill(NaN);
    this.spare = m.recycles ? [] : null;
  }

  /** A record for a new CF: a spare one when the model recycles. */
  private make(node: number, cf: number, site: number, code: number, label: string, gid: string, labelIdx: readonly number[] | null): Fragment {
    const f = this.spare?.pop();
    return f ? f.reuse(node, cf, site, code, label, gid, labelIdx) : new Fragment(node, cf, site, code, label, gid, labelIdx);
  }

  push(e: TraceEvent): void {
    const node = e.node;
    switch (e.kind) {
      case 'cfCreated': case 'cfReceive': this.created(node, e.cf, e.site, e.gid, e.labelIdx, e.t); break;
      case 'cfMigrate': this.migrate(node, e.cf, e.toNode, e.t); break;
      case 'cfReady': { const f = this.cfs[node]!.get(e.cf); if (f) f.ready = e.t; break; }
      case 'cfInput': this.input(node, e.thread, e.cf, e.df); break;
      case 'cfStart': this.start(node, e.lane, e.t, e.cpu, e.cf); break;
      case 'cfFinish': this.finish(node, e.thread, e.t, e.cpu, e.cf); break;
      case 'sysBusy': this.busy(node, e.t, e.end); break;
      default: break;
    }
  }

  row(b: RecordBatch, i: number): void {
    const node = b.node[i]!, f = b.f, t = b.t[i]!;
    switch (b.code[i]) {
      case CODE.cfCreated: this.created(node, f[COL.cfCreated.cf]![i]!, f[COL.cfCreated.site]![i]!, b.s[i]!, b.x[i] ?? EMPTY, t); break;
      case CODE.cfReceive: this.created(node, f[COL.cfReceive.cf]![i]!, f[COL.cfReceive.site]![i]!, b.s[i]!, b.x[i] ?? EMPTY, t); break;
      case CODE.cfMigrate: this.migrate(node, f[COL.cfMigrate.cf]![i]!, f[COL.cfMigrate.toNode]![i]!, t); break;
      case CODE.cfReady: { const r = this.cfs[node]!.get(f[COL.cfReady.cf]![i]!); if (r) r.ready = t; break; }
      case CODE.cfInput: this.input(node, b.thread[i]!, f[COL.cfInput.cf]![i]!, f[COL.cfInput.df]![i]!); break;
      case CODE.cfStart: this.start(node, f[COL.cfStart.lane]![i]!, t, f[COL.cfStart.cpu]![i]!, f[COL.cfStart.cf]![i]!); break;
      case CODE.cfFinish: this.finish(node, b.thread[i]!, t, f[COL.cfFinish.cpu]![i]!, f[COL.cfFinish.cf]![i]!); break;
      case CODE.sysBusy: this.busy(node, t, f[COL.sysBusy.end]![i]!); break;
      default: break;
    }
  }

  end(): void {
    for (let n = 0; n < this.N; n++) this.releaseBusy(n);
  }

  private migrate(node: number, cf: number, toNode: number, t: number): void {
    const f = this.cfs[node]!.get(cf);
    this.cfs[node]!.delete(cf);
    for (const l of this.m.audience) l.migrate?.(node, f, cf, toNode, t);
  }

  /** The fragment local CF `cf` of `node` is, while it lives or finished lately. */
  lookup(node: number, cf: number): Fragment | undefined {
    return this.cfs[node]?.get(cf) ?? this.recent[node]?.get(cf);
  }

  private site(s: number): SiteInfo | undefined {
    return s >= 0 ? this.m.sites[s] : undefined;
  }

  /** Creation may be merged after the CF's own first events when they tie in time (other thread). */
  private created(node: number, cf: number, site: number, gid: string, labelIdx: readonly number[], t: number): void {
    const s = this.site(site);
    // structured CFs (sub calls, loops, if) never run on a lane: nothing to keep
    if (s && s.kind !== 'call') return;
    const code = s ? s.code : -1, label = s ? s.label : site < 0 ? 'main' : `site${site}`;
    const r = this.cfs[node]!.get(cf);
    if (r && r.code < 0) { r.site = site; r.code = code; r.label = label; r.gid = gid; r.labelIdx = labelIdx.length ? labelIdx : null; r.created = t; return; }
    const f = this.make(node, cf, site, code, label, gid, labelIdx.length ? labelIdx : null);
    f.created = t;
    this.cfs[node]!.set(cf, f);
  }

  private cf(node: number, cf: number): Fragment {
    const map = this.cfs[node]!;
    let r = map.get(cf);
    if (!r) { r = this.make(node, cf, -1, -1, '?', `${node}:${cf}`, null); map.set(cf, r); }
    return r;
  }

  private input(node: number, thread: number, cf: number, df: number): void {
    const m = this.cf(node, cf);
    const x = this.m.dfs.lookup(node, thread, df, true);
    if (x) { m.addInput(x); return; }
    // its dfName ties in time on another thread and was merged later: resolved when named
    this.m.dfs.whenNamed(node, df, m);
  }

  private start(node: number, lane: number, t: number, cpu: number, cf: number): void {
    const m = this.cf(node, cf);
    m.start = t;
    m.cpuStart = cpu;
    if (lane < 1 || lane > this.T) {
      this.m.warn(`CF started on lane ${lane}, beyond the ${this.T} lanes of the manifest: not placed on a timeline`);
      this.m.damage.add('unknown-id', `cfStart of CF ${cf} on lane ${lane}, beyond the ${this.T} lanes of the manifest`, fileOf(node, lane));
      return;
    }
    const slot = node * this.T + lane - 1;
    m.slot = slot;
    m.lane = lane;
    const busy = this.running[slot];
    if (busy) {
      // one of the two records is wrong (a damaged time or CF number): the CF that never
      // finished before the next one started is left out, rather than counted twice
      this.m.warn('CF started on a busy lane (the earlier CF left out)');
      this.m.damage.add('time-order', `CF ${m.label} (${m.gid}) starts on lane ${lane} while CF ${busy.label} (${busy.gid}) still runs there; the latter is left out`, fileOf(node, lane));
      busy.slot = -1;
    }
    this.running[slot] = m;
    // listeners told by index, here and on every per-CF path: for-of makes an iterator and a
    // result per step wherever the optimiser has not removed them, at 10^6 CFs a steady garbage
    const ls = this.m.audience;
    for (let k = 0; k < ls.length; k++) ls[k]!.start?.(m);
  }

  /**
   * A busy span of a node's system thread. Passed on without the CFs the thread ran itself
   * meanwhile (their time is their lane's): the runtime records one span per turn of its pump and
   * leaves that to the reader (a record less per CF the system thread runs; older traces split
   * the spans themselves). The stream is ordered by start times, so the span is held until the
   * node's next one (or the end), when every CF inside it has finished.
   */
  private busy(node: number, t0: number, t1: number): void {
    this.releaseBusy(node);
    this.heldBusy[2 * node] = t0;
    this.heldBusy[2 * node + 1] = t1;
  }

  private releaseBusy(node: number): void {
    const t0 = this.heldBusy[2 * node]!, t1 = this.heldBusy[2 * node + 1]!;
    if (!(t0 === t0)) return;
    this.heldBusy[2 * node] = NaN;
    const runs = this.ranInline[node]!, ls = this.m.audience;
    let from = t0, i = 0;
    // every CF run inside the span finished before the node's next span began: all known here
    for (; i < runs.length; i += 2) {
      const start = runs[i]!, fin = runs[i + 1]!;
      if (fin > t1) break;
      if (fin <= from) continue;
      if (start > from) for (let k = 0; k < ls.length; k++) ls[k]!.sysBusy?.(node, from, start);
      from = fin;
    }
    if (t1 > from) for (let k = 0; k < ls.length; k++) ls[k]!.sysBusy?.(node, from, t1);
    // (splice makes an array of what it removes: none when no CF ran inline, the usual case)
    if (i > 0) runs.splice(0, i);
  }

  private finish(node: number, thread: number, t: number, cpu: number, cf: number): void {
    const map = this.cfs[node]!;
    const m = map.get(cf);
    const model = this.m;
    if (!m || !(m.start === m.start)) {
      model.warn('cfFinish without cfStart (dropped)');
      model.damage.add('unknown-id', `cfFinish of CF ${cf}, which never started`, `node${node}`);
      return;
    }
    map.delete(cf);
    if (m.code < 0) { model.warn('CF without cfCreated/cfReceive'); model.damage.add('unknown-id', `CF ${cf} ran but was never created (no cfCreated or cfReceive record)`, whereRan(m)); }
    if (m.unresolved > 0) model.warn('input DF never named');
    m.finish = t;
    m.seq = this.finished++;
    const wall = t - m.start;
    let used = cpu - m.cpuStart;
    if (!(wall >= 0)) { model.warn('CF finishing before it started (times kept, duration 0)'); model.damage.add('time-order', `CF ${m.label} (${m.gid}) finishes ${fmtT(-wall)} before it starts`, whereRan(m)); m.finish = m.start; used = 0; }
    else if (model.tStart === model.tStart && m.start < model.tStart - Math.max(1e9, wall)) {
      model.warn('CF starting long before the run (duration taken as 0)');
      model.damage.add('time-order', `CF ${m.label} (${m.gid}) starts ${fmtT(model.tStart - m.start)} before the run`, whereRan(m));
      m.start = t; used = 0;
    } else if (!(used >= 0)) { model.warn('negative CPU time of a CF (taken as 0)'); model.damage.add('cpu-time', `CF ${m.label} (${m.gid}): CPU time ${fmtT(used)} is negative (taken as 0)`, whereRan(m)); used = 0; }
    else if (used > wall * 1.0001 + 1000) { model.warn('CPU time longer than wall time (taken as the wall time)'); model.damage.add('cpu-time', `CF ${m.label} (${m.gid}): CPU time ${fmtT(used)} exceeds its wall time ${fmtT(wall)} (taken as the wall time)`, whereRan(m)); used = wall; }
    m.cpu = Math.min(used, Math.max(0, m.finish - m.start));
    if (m.slot >= 0 && this.running[m.slot] === m) this.running[m.slot] = null;
    if (m.outs) { for (const r of m.outs) r.finish = t; m.outs = null; }
    // a ring of keys, not Map-order eviction: deleting a Map's first entry over and over leaves
    // tombstones that make keys().next() linear
    const old = this.recentRing[this.recentPos]!;
    if (old >= 0) this.forget(Math.floor(old / 4294967296), old % 4294967296);
    this.recentRing[this.recentPos] = key(node, cf);
    this.recentPos = (this.recentPos + 1) % RECENT_MAX;
    this.recent[node]!.set(cf, m);
    const inputs = this.inputsOf(m);
    // A CF fed across lanes takes its inputs from another lane's batch: the system thread never
    // sees them come, and its executor records cfReady as it starts. Its readiness is when the
    // last of its inputs was present here, as SLOW's split and the hand-off figures take it.
    if (m.ready >= m.start && inputs.length > 0) m.ready = readyFromInputs(m, inputs);
    // (a recycling model keeps the array for the record's next CF, to be written over)
    if (!this.spare) { m.inputs = null; m.inputCount = 0; }
    if (thread === 0) {
      const runs = this.ranInline[node]!;
      // (bounded: a trace without sysBusy records keeps only the latest)
      if (runs.length >= 2 * RECENT_MAX) runs.splice(0, RECENT_MAX);
      runs.push(m.start, m.finish);
    }
    const ls = model.audience;
    for (let k = 0; k < ls.length; k++) ls[k]!.finish?.(m, inputs);
    // a reused record's inputs are written over: let go of these DFs meanwhile
    if (this.spare && inputs.length > 0) { (m.inputs as (DfRec | undefined)[]).fill(undefined, 0, m.inputCount); if (inputs !== m.inputs) (inputs as (DfRec | undefined)[]).fill(undefined); }
  }

  /** per length: an array the inputs of a reused record are handed in when its own is longer */
  private readonly exact: DfRec[][] = [];

  /** A finished CF's inputs as an array of their number (a reused record's array may be longer). */
  private inputsOf(m: Fragment): readonly DfRec[] {
    const a = m.inputs, n = m.inputCount;
    if (a === null || n === 0) return EMPTY_INPUTS;
    if (a.length === n) return a;
    const e = (this.exact[n] ??= new Array<DfRec>(n));
    for (let i = 0; i < n; i++) e[i] = a[i]!;
    return e;
  }

  /** A finished CF leaves the recently-finished ring (a recycling model reuses its record). */
  private forget(node: number, cf: number): void {
    const recent = this.recent[node]!, f = recent.get(cf);
    recent.delete(cf);
    // a record still awaiting a dfName for an input is referred to from the DFs: never reused
    if (this.spare && f && f.unresolved === 0 && f.node === node && f.cf === cf) this.spare.push(f);
  }
}
