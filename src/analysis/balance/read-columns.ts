// The profile straight from the merged trace's columns (trace/merge.ts: runs of rows, no object
// per record): one pass that keeps only what the profile holds. No trace model — its Fragment and
// DfRec objects, its listeners and its damage bookkeeping cost 5× the decoding at 10^6 fragments;
// here a CF is a slot in typed columns, a DF key a number, a DF a row. The rules are the model's
// (trace/model/fragments.ts, dfs.ts) as far as the profile sees them, and a test holds the two
// paths equal on generated and real traces (test/analysis/balance-profile.test.ts).
import { CODE, COL, type RecordBatch } from '../../trace/columns.js';
import type { TraceColumns } from '../../trace/merge.js';
import { namesOf } from './names.js';
import type { Profile } from './profile-type.js';

/** Columns that grow by doubling. */
export class Grow<A extends Float64Array | Int32Array> {
  n = 0;
  constructor(public a: A) {}
  push(v: number): void {
    if (this.n === this.a.length) this.reserve(this.n + 1);
    this.a[this.n++] = v;
  }
  /** Room for index i (new entries `fill`). */
  reserve(i: number, fill = 0): void {
    if (i < this.a.length) return;
    let len = this.a.length;
    while (len <= i) len *= 2;
    const b = new (this.a.constructor as new (n: number) => A)(len);
    b.set(this.a);
    if (fill !== 0) b.fill(fill, this.a.length);
    this.a = b;
  }
  done(): A { return this.a.slice(0, this.n) as A; }
}
export const f64 = (): Grow<Float64Array> => new Grow(new Float64Array(1024));
export const i32 = (): Grow<Int32Array> => new Grow(new Int32Array(1024));

/** Node-local numbers (CFs, DFs) → an index: a typed array while they are small counters, a Map beyond. */
class LocalMap {
  private dense = new Grow(new Int32Array(256).fill(-1));
  private sparse: Map<number, number> | null = null;
  get(k: number): number {
    if (k < DENSE_MAX) return k < this.dense.a.length ? this.dense.a[k]! : -1;
    return this.sparse?.get(k) ?? -1;
  }
  set(k: number, v: number): void {
    if (k < DENSE_MAX) { this.dense.reserve(k, -1); this.dense.a[k] = v; return; }
    (this.sparse ??= new Map()).set(k, v);
  }
  has(k: number): boolean { return this.get(k) >= 0; }
}
/** Local numbers below this live in arrays (runtimes count from 0 per node and per file). */
const DENSE_MAX = 1 << 24;

/** One pass over the merged records of a trace: its profile. */
export function profileOfColumns(tc: TraceColumns): Profile {
  const manifest = tc.manifest;
  const N = Math.max(1, manifest.nodes), T = Math.max(1, manifest.threads);
  const sites = manifest.sites ?? [];
  const warn = new Map<string, number>();
  const warnOnce = (w: string): void => { warn.set(w, (warn.get(w) ?? 0) + 1); };

  // CFs: a slot each from its creation (or its first record) on; a row when it finishes
  const cfSlot = Array.from({ length: N }, () => new LocalMap());
  const sGid: string[] = [];
  const sCode = i32(), sCreated = f64(), sStart = f64(), sCpuStart = f64(), sRow = i32(), sSpawn = i32(), sIn = i32();
  const MIGRATED = -2;
  const newSlot = (node: number, cf: number, code: number, gid: string, created: number, spawn: number): number => {
    const s = sGid.length;
    sGid.push(gid); sCode.push(code); sCreated.push(created); sStart.push(NaN); sCpuStart.push(NaN); sRow.push(-1); sSpawn.push(spawn); sIn.push(-1);
    cfSlot[node]!.set(cf, s);
    return s;
  };
  /** the slot of a live CF, made for a CF whose creation was not seen */
  const slotOf = (node: number, cf: number): number => {
    const s = cfSlot[node]!.get(cf);
    return s >= 0 && sRow.a[s] === -1 ? s : newSlot(node, cf, -1, `${node}:${cf}`, NaN, node);
  };
  // inputs per slot: a list through inNext (newest first), each a DF key number
  const inNext = i32(), inKey = i32();
  const addInput = (s: number, k: number): void => { inNext.push(sIn.a[s]!); inKey.push(k); sIn.a[s] = inNext.n - 1; };
  // (node, DF number) → CF slots whose input came before the DF's name (records that tie in time)
  const unnamed = new Map<number, number[]>();

  // DF keys: a number per key; per node and per writing thread, DF number → key
  const keyOf = new Map<string, number>();
  const keyName: string[] = [];
  const kDf = i32(), kHome = i32(), kPend = i32(), kCopy = i32();
  const nodeDf = Array.from({ length: N }, () => new LocalMap());
  const streamDf = new Map<number, LocalMap>();
  const keyAt = (node: number, thread: number, df: number): number => {
    if (thread > 0 && streamDf.size > 0) { const k = streamDf.get(node * 4096 + thread)?.get(df) ?? -1; if (k >= 0) return k; }
    return nodeDf[node]!.get(df);
  };
  // sends in flight per key (newest first): (from·N + to), the first hop's send time; copies: node, first send
  const pNext = i32(), pK = i32(), pFirst = f64();
  const cNext = i32(), cNode = i32(), cFirst = f64();
  const copyOf = (k: number, node: number): number => { for (let c = kCopy.a[k]!; c >= 0; c = cNext.a[c]!) if (cNode.a[c] === node) return c; return -1; };

  // the profile's columns
  const gid: string[] = [];
  const node = i32(), code = i32(), start = f64(), finish = f64(), created = f64(), cpu = f64(), spawn = i32();
  const depStart = i32(), depFrom = i32(), depDf = i32();
  const dfKey: string[] = [];
  const dfWriterSlot = i32(), dfBytes = f64(), dfOwner = i32(), readOn = i32(), sentTo = i32();
  const xferBytes = f64(), xferNs = f64(), sendNs = f64();
  const sendAt = new Map<number, Map<number, number>>();
  const sysWall = new Float64Array(N), wWall = new Float64Array(N), wCpu = new Float64Array(N);
  const bit = (n: number): number => (n < 31 ? 1 << n : 0);
  depStart.push(0);
  let tStart = NaN, tEnd = NaN, firstT = NaN, lastT = NaN, finished = 0;
  const scratch: number[] = [];

  const sink = (b: RecordBatch, from: number, to: number): void => {
    const F = b.f, codes = b.code, nodes = b.node, threads = b.thread, ts = b.t;
    for (let i = from; i < to; i++) {
      const nd = nodes[i]!, t = ts[i]!, c = codes[i]!;
      if (nd >= N) { warnOnce(`records of node ${nd}, beyond the ${N} nodes of the manifest, dropped`); continue; }
      if (finished >= N && t > tEnd + Math.max(1e9, tEnd - tStart)) { warnOnce('records far after the end of the run dropped'); continue; }
      if (t === t) { if (!(firstT === firstT)) firstT = t; if (!(lastT >= t)) lastT = t; }
      switch (c) {
        case CODE.programStart: if (!(tStart <= t)) tStart = t; break;
        case CODE.programFinish: if (!(tEnd >= t)) tEnd = t; finished++; break;
        case CODE.cfCreated: case CODE.cfReceive: {
          const recv = c === CODE.cfReceive;
          const cf = F[recv ? COL.cfReceive.cf : COL.cfCreated.cf]![i]!, site = F[recv ? COL.cfReceive.site : COL.cfCreated.site]![i]!;
          const si = site >= 0 ? sites[site] : undefined;
          // structured CFs (sub calls, loops, if) never run on a lane
          if (si && si.kind !== 'call') break;
          let sp = nd;
          if (recv) {
            const from = F[COL.cfReceive.fromNode]![i]!, was = from < N ? cfSlot[from]!.get(F[COL.cfReceive.remoteCf]![i]!) : -1;
            sp = was >= 0 ? sSpawn.a[was]! : from;
          }
          const cd = si ? si.code : -1, s = cfSlot[nd]!.get(cf);
          if (s >= 0 && sRow.a[s] === -1 && sCode.a[s]! < 0) { sCode.a[s] = cd; sGid[s] = b.s[i]!; sCreated.a[s] = t; sSpawn.a[s] = sp; }
          else newSlot(nd, cf, cd, b.s[i]!, t, sp);
          break;
        }
        case CODE.cfMigrate: {
          const s = cfSlot[nd]!.get(F[COL.cfMigrate.cf]![i]!);
          if (s >= 0 && sRow.a[s] === -1) sRow.a[s] = MIGRATED;
          break;
        }
        case CODE.cfInput: {
          const s = slotOf(nd, F[COL.cfInput.cf]![i]!), df = F[COL.cfInput.df]![i]!, k = keyAt(nd, threads[i]!, df);
          if (k >= 0) addInput(s, k);
          else { const u = nd * 4294967296 + df, l = unnamed.get(u); if (l) l.push(s); else unnamed.set(u, [s]); }
          break;
        }
        case CODE.cfStart: {
          const s = slotOf(nd, F[COL.cfStart.cf]![i]!);
          sStart.a[s] = t; sCpuStart.a[s] = F[COL.cfStart.cpu]![i]!;
          break;
        }
        case CODE.cfFinish: {
          const s = cfSlot[nd]!.get(F[COL.cfFinish.cf]![i]!);
          let st = s >= 0 && sRow.a[s] === -1 ? sStart.a[s]! : NaN;
          if (!(st === st)) { warnOnce('cfFinish without cfStart (dropped)'); break; }
          if (sCode.a[s]! < 0 && sGid[s] === `${nd}:${F[COL.cfFinish.cf]![i]!}`) warnOnce('CF without cfCreated/cfReceive');
          const row = gid.length;
          sRow.a[s] = row;
          // the model's clamps (trace/model/fragments.ts)
          let fin = t, used = F[COL.cfFinish.cpu]![i]! - sCpuStart.a[s]!;
          const wall = t - st;
          if (!(wall >= 0)) { fin = st; used = 0; }
          else if (tStart === tStart && st < tStart - Math.max(1e9, wall)) { st = t; used = 0; }
          else if (!(used >= 0)) used = 0;
          else if (used > wall * 1.0001 + 1000) used = wall;
          const u = Math.min(used, Math.max(0, fin - st));
          gid.push(sGid[s]!); node.push(nd); code.push(sCode.a[s]!);
          start.push(st); finish.push(fin);
          const cr = sCreated.a[s]!;
          created.push(cr === cr ? cr : st);
          cpu.push(u === u ? u : fin - st);
          spawn.push(sSpawn.a[s]!);
          if (u === u) { wWall[nd] += fin - st; wCpu[nd] += u; }
          // inputs, oldest first
          scratch.length = 0;
          for (let x = sIn.a[s]!; x >= 0; x = inNext.a[x]!) scratch.push(inKey.a[x]!);
          for (let x = scratch.length - 1; x >= 0; x--) {
            const d = kDf.a[scratch[x]!]!;
            if (d < 0) continue;
            const ws = dfWriterSlot.a[d]!, w = ws >= 0 ? sRow.a[ws]! : -1;
            if (w < 0 || w === row) continue;
            depFrom.push(w); depDf.push(d);
            readOn.a[d] |= bit(nd);
          }
          depStart.push(depFrom.n);
          break;
        }
        case CODE.dfName: {
          const df = F[COL.dfName.df]![i]!, name = b.s[i]!, th = threads[i]!;
          let k = keyOf.get(name);
          if (k === undefined) {
            k = keyName.length;
            keyOf.set(name, k); keyName.push(name); kDf.push(-1); kHome.push(-1); kPend.push(-1); kCopy.push(-1);
          }
          const nm = nodeDf[nd]!;
          if (th > 0) {
            const sk = nd * 4096 + th;
            let sm = streamDf.get(sk);
            if (!sm) streamDf.set(sk, (sm = new LocalMap()));
            sm.set(df, k);
            if (!nm.has(df)) nm.set(df, k);
          } else nm.set(df, k);
          if (unnamed.size > 0) {
            const u = nd * 4294967296 + df, waiting = unnamed.get(u);
            if (waiting) { unnamed.delete(u); for (const s of waiting) addInput(s, k); }
          }
          break;
        }
        case CODE.dfComputed: {
          const k = keyAt(nd, threads[i]!, F[COL.dfComputed.df]![i]!);
          if (k < 0) break;
          kHome.a[k] = nd;
          const pcf = F[COL.dfComputed.producerCf]![i]!;
          if (pcf < 0 || kDf.a[k]! >= 0) break;
          // a DF written by an atomic CF (one that ran, or runs, on this node)
          const s = cfSlot[nd]!.get(pcf);
          if (s < 0 || sRow.a[s] === MIGRATED) break;
          kDf.a[k] = dfKey.length;
          dfKey.push(keyName[k]!); dfBytes.push(F[COL.dfComputed.bytes]![i]!); dfOwner.push(nd); readOn.push(0); sentTo.push(0);
          dfWriterSlot.push(s);
          break;
        }
        case CODE.dfSendStart: {
          const df = F[COL.dfSendStart.df]![i]!, dest = F[COL.dfSendStart.toNode]![i]!, key = nd * 65536 + dest;
          let m = sendAt.get(key);
          if (!m) sendAt.set(key, (m = new Map()));
          m.set(df, t);
          const k = keyAt(nd, threads[i]!, df);
          if (k < 0 || dest >= N) break;
          // a transfer's latency starts at the first hop of the chain that brings the value
          const cp = nd === kHome.a[k] ? -1 : copyOf(k, nd);
          pNext.push(kPend.a[k]!); pK.push(nd * N + dest); pFirst.push(cp >= 0 ? cFirst.a[cp]! : t);
          kPend.a[k] = pNext.n - 1;
          break;
        }
        case CODE.dfSendEnd: {
          const m = sendAt.get(nd * 65536 + F[COL.dfSendEnd.toNode]![i]!), df = F[COL.dfSendEnd.df]![i]!, t0 = m?.get(df);
          if (t0 !== undefined) { m!.delete(df); sendNs.push(Math.max(0, t - t0)); }
          break;
        }
        case CODE.dfReceive: {
          const k = keyAt(nd, threads[i]!, F[COL.dfReceive.df]![i]!);
          if (k < 0) break;
          const from = F[COL.dfReceive.fromNode]![i]!, want = from * N + nd;
          let s = NaN;
          for (let p = kPend.a[k]!, prev = -1; p >= 0; prev = p, p = pNext.a[p]!) {
            if (pK.a[p] !== want) continue;
            if (prev >= 0) pNext.a[prev] = pNext.a[p]!; else kPend.a[k] = pNext.a[p]!;
            s = pFirst.a[p]!;
            break;
          }
          if (!(s === s)) { warnOnce('DF received without dfSendStart'); s = t; }
          const cp = copyOf(k, nd);
          if (cp >= 0) cFirst.a[cp] = s;
          else { cNext.push(kCopy.a[k]!); cNode.push(nd); cFirst.push(s); kCopy.a[k] = cNext.n - 1; }
          xferBytes.push(F[COL.dfReceive.bytes]![i]!); xferNs.push(Math.max(0, t - s));
          const d = kDf.a[k]!;
          if (d >= 0) sentTo.a[d] |= bit(nd);
          break;
        }
        case CODE.sysBusy: sysWall[nd] += F[COL.sysBusy.end]![i]! - t; break;
        default: break;
      }
    }
  };
  tc.runs(sink);
  if (unnamed.size > 0) warnOnce('input DF never named');
  if (!(tEnd === tEnd)) warnOnce('no programFinish record: the run did not end normally; the last event ends it');

  const t0 = tStart === tStart ? tStart : firstT;
  const st = start.done(), fi = finish.done(), cr = created.done();
  for (let i = 0; i < st.length; i++) { st[i] -= t0; fi[i] -= t0; cr[i] = Math.max(0, cr[i]! - t0); }
  const dfs = dfKey.length, owner = dfOwner.done(), writer = new Int32Array(dfs);
  for (let d = 0; d < dfs; d++) {
    const ws = dfWriterSlot.a[d]!;
    writer[d] = ws >= 0 && sRow.a[ws]! >= 0 ? sRow.a[ws]! : -1;
    // the traced owner: a node a DF travelled to without being read there kept it (a post to its
    // owner); otherwise where it was written
    const kept = sentTo.a[d]! & ~readOn.a[d]!;
    if (kept !== 0) owner[d] = 31 - Math.clz32(kept & -kept);
  }
  const workerShare = Float64Array.from(wWall, (w, m) => (w > 0 ? Math.min(1, wCpu[m]! / w) : 1));
  const hostOf = new Int32Array(N).fill(-1), hostCores: number[] = [];
  for (const [h, mi] of (manifest.machines ?? []).entries()) {
    hostCores.push(mi.cores);
    for (const m of mi.nodes) if (m >= 0 && m < N) hostOf[m] = h;
  }
  const end = (tEnd === tEnd ? tEnd : lastT) - t0;
  return {
    program: manifest.program, args: manifest.args, nodes: N, threads: T, policy: manifest.policy ?? '',
    n: gid.length, gid: namesOf(gid), node: node.done(), spawn: spawn.done(), start: st, finish: fi, created: cr, cpu: cpu.done(), cpuExact: manifest.clock.cpuExact, code: code.done(),
    depStart: depStart.done(), depFrom: depFrom.done(), depDf: depDf.done(),
    dfs, dfKey: namesOf(dfKey), dfWriter: writer, dfBytes: dfBytes.done(), dfOwner: owner,
    xferBytes: xferBytes.done(), xferNs: xferNs.done(), sendNs: sendNs.done(),
    sysWallNs: sysWall, workerShare, hostOf, hostCores,
    tEnd: end === end ? end : 0,
    warnings: [...tc.warnings, ...[...warn.entries()].map(([w, k]) => (k > 1 ? `${w} (${k}×)` : w))],
  };
}
