// The profile a balancer reads (seed 004 §2.2.1): every executed atomic CF with its stable
// global id, the node it ran on and its execution interval [t_b, t_e] (seed §3.4: measured on
// its lane, so no logging delay enters), plus what the communication-aware options and the
// prediction need — the CF that wrote each DF, the DF's size and the node it was kept on, the
// dependences between CFs, the measured transfer times, and the node that spawned each CF. One
// streaming pass over the trace's columns (read-columns.ts); everything lands in flat columns (no
// object per fragment or per record).
import { readTraceColumns } from '../../trace/merge.js';
import { readTraceColumnsThreaded, threadedReading } from '../../trace/merge-threaded.js';
import { f64, i32, profileOfColumns } from './read-columns.js';
import { TraceModel } from '../../trace/model/model.js';
import type { TraceManifest } from '../../trace/manifest.js';
import type { TraceEvent } from '../../trace/schema.js';
import type { Fragment } from '../../trace/model/records.js';

export type { Profile } from './profile-type.js';
import { namesOf } from './names.js';
import type { Profile } from './profile-type.js';

/** Read the profile of the trace in `dir`, straight from its columns (read-columns.ts). */
export function readProfile(dir: string): Profile {
  // LUNA_TRACE_WORKER=1: decoded and merged in a worker thread, overlapping this pass on two cores
  return profileOfColumns(threadedReading() ? readTraceColumnsThreaded(dir) : readTraceColumns(dir));
}

/**
 * The profile of a run from its manifest and its time-ordered events, through the trace model:
 * the reference the columnar reader (read-columns.ts) is tested against.
 */
export function profileOf(manifest: TraceManifest, events: Iterable<TraceEvent>): Profile {
  const model = new TraceModel(manifest);
  // each fragment's row in the profile's columns
  const row = model.slot<number>('balance profile row');
  const gid: string[] = [];
  const node = i32(), spawn = i32(), code = i32(), start = f64(), finish = f64(), created = f64(), cpu = f64();
  const depStart = i32(), depFrom = i32(), depDf = i32();
  const dfKey: string[] = [];
  const dfWriter = i32(), dfBytes = f64(), dfOwner = i32();
  const xferBytes = f64(), xferNs = f64(), sendNs = f64();
  const sendAt = new Map<string, number>();
  // the node that spawned each CF, by global id
  const spawnOf = new Map<string, number>();
  const sysWall = new Float64Array(manifest.nodes), wWall = new Float64Array(manifest.nodes), wCpu = new Float64Array(manifest.nodes);
  // DF key → index (keys name one DF each in a run)
  const dfIndex = new Map<string, number>();
  // DFs whose writer had not finished when they were computed (the records tie in time)
  const unresolved = new Map<Fragment, number[]>();
  // per DF, as bit sets of nodes (the first 31): where it was read, where it was sent — a node it
  // was sent to that read none of it kept it (its owner)
  const readOn = i32(), sentTo = i32();
  const bit = (n: number): number => (n < 31 ? 1 << n : 0);
  depStart.push(0);
  model.listen({
    finish(f, inputs) {
      const i = gid.length;
      row.set(f, i);
      const mine = unresolved.get(f);
      if (mine) { unresolved.delete(f); for (const d of mine) dfWriter.a[d] = i; }
      gid.push(f.gid);
      node.push(f.node); code.push(f.code); spawn.push(spawnOf.get(f.gid) ?? f.node);
      start.push(f.start); finish.push(f.finish); created.push(f.created === f.created ? f.created : f.start);
      cpu.push(f.cpu === f.cpu ? f.cpu : f.finish - f.start);
      if (f.node < wWall.length && f.cpu === f.cpu) { wWall[f.node] += f.finish - f.start; wCpu[f.node] += f.cpu; }
      for (const x of inputs) {
        const d = dfIndex.get(x.key);
        const w = x.producer ? row.get(x.producer) : undefined;
        if (d === undefined || typeof w !== 'number' || w === i) continue;
        depFrom.push(w); depDf.push(d);
        readOn.a[d] |= bit(f.node);
      }
      depStart.push(depFrom.n);
    },
    transfer(t) {
      xferBytes.push(t.bytes); xferNs.push(Math.max(0, t.arrive - t.sendStart));
      const d = dfIndex.get(t.df.key);
      if (d !== undefined) sentTo.a[d] |= bit(t.to);
    },
    // only these kinds are made into objects for `event` (not one object per record of the trace)
    eventKinds: ['dfComputed', 'sysBusy', 'dfSendStart', 'dfSendEnd', 'cfCreated', 'cfReceive'],
    event(e) {
      if (e.kind === 'cfCreated') { if (!spawnOf.has(e.gid)) spawnOf.set(e.gid, e.node); return; }
      if (e.kind === 'cfReceive') { if (!spawnOf.has(e.gid)) spawnOf.set(e.gid, e.fromNode); return; }
      if (e.kind === 'sysBusy') { if (e.node < sysWall.length) sysWall[e.node] += e.end - e.t; return; }
      if (e.kind === 'dfSendStart') { sendAt.set(`${e.node}:${e.df}:${e.toNode}`, e.t); return; }
      if (e.kind === 'dfSendEnd') {
        const k = `${e.node}:${e.df}:${e.toNode}`, t0 = sendAt.get(k);
        if (t0 !== undefined) { sendAt.delete(k); sendNs.push(Math.max(0, e.t - t0)); }
        return;
      }
      // a DF written by an atomic CF (the model linked its writer when it handled the record)
      if (e.kind !== 'dfComputed' || e.producerCf < 0) return;
      const r = model.dfOf(e.node, e.thread, e.df);
      const w = r?.producer;
      if (!r || !w || dfIndex.has(r.key)) return;
      const d = dfKey.length;
      dfIndex.set(r.key, d);
      dfKey.push(r.key); dfBytes.push(e.bytes); dfOwner.push(e.node); readOn.push(0); sentTo.push(0);
      const wr = row.get(w);
      if (wr !== undefined) dfWriter.push(wr);
      else { dfWriter.push(-1); const u = unresolved.get(w); if (u) u.push(d); else unresolved.set(w, [d]); }
    },
  });
  for (const e of events) model.push(e);
  model.end();
  const t0 = model.origin();
  const st = start.done(), fi = finish.done(), cr = created.done();
  for (let i = 0; i < st.length; i++) { st[i] -= t0; fi[i] -= t0; cr[i] = Math.max(0, cr[i]! - t0); }
  const owner = dfOwner.done(), writer = dfWriter.done();
  // the traced owner: a node a DF travelled to without being read there kept it (a post to its
  // owner); otherwise where it was written
  for (let d = 0; d < owner.length; d++) {
    const kept = sentTo.a[d]! & ~readOn.a[d]!;
    if (kept !== 0) owner[d] = 31 - Math.clz32(kept & -kept);
  }
  const workerShare = Float64Array.from(wWall, (w, m) => (w > 0 ? Math.min(1, wCpu[m]! / w) : 1));
  const hostOf = new Int32Array(manifest.nodes).fill(-1), hostCores: number[] = [];
  for (const [h, mi] of (manifest.machines ?? []).entries()) {
    hostCores.push(mi.cores);
    for (const m of mi.nodes) if (m >= 0 && m < hostOf.length) hostOf[m] = h;
  }
  const tEnd = (model.tEnd === model.tEnd ? model.tEnd : model.lastT) - t0;
  return {
    program: manifest.program, args: manifest.args, nodes: model.N, threads: model.T, policy: manifest.policy ?? '',
    n: gid.length, gid: namesOf(gid), node: node.done(), spawn: spawn.done(), start: st, finish: fi, created: cr, cpu: cpu.done(), cpuExact: manifest.clock.cpuExact, code: code.done(),
    depStart: depStart.done(), depFrom: depFrom.done(), depDf: depDf.done(),
    dfs: dfKey.length, dfKey: namesOf(dfKey), dfWriter: writer, dfBytes: dfBytes.done(), dfOwner: owner,
    xferBytes: xferBytes.done(), xferNs: xferNs.done(), sendNs: sendNs.done(),
    sysWallNs: sysWall, workerShare, hostOf, hostCores,
    tEnd: tEnd === tEnd ? tEnd : 0,
    warnings: [...model.warnings.entries()].map(([w, k]) => (k > 1 ? `${w} (${k}×)` : w)),
  };
}
