// Export of a trace as an OTF2 archive (the format of Score-P, read by Vampir, Scalasca, Cube
// and otf2-print): `traces.otf2` (anchor), `traces.def` (global definitions) and `traces/`
// (an event file per location) in the output directory.
//
// Written through the OTF2 library itself by a small helper, native/otf2_writer.c, built at
// install time and linked statically: the library is the reference writer every OTF2 reader is
// built against, so the archive follows its format version, chunking and integer encoding by
// construction, which a hand-written writer would have to re-derive from the library's source.
// This module decides everything (locations, regions, order, ids); the helper only translates
// two record files into library calls.
//
// Mapping: a location group (process) per node under a system tree node per node; locations
// node × thread (0 = the system thread, k = worker lane k). Regions: one per code fragment
// (ucode, sub, for/while/if kind), `system busy`, and one per wait kind. Every CF execution is
// an Enter/Leave on its lane with the CF's node-local number, global id and instance name
// (`link[5]`) as attributes on Enter and its CPU time on Leave; waits and system busy spans are
// Enter/Leave too. DF transfers are MPI-style point-to-point events (MpiSend on the sender's
// system thread when the hop starts, MpiRecv on the receiver's when it arrives, in a
// communicator whose rank r is node r, each inside a zero-length `DF send` / `DF receive`
// region as MPI calls enclose them in Score-P's traces): Vampir draws them as message lines between nodes and
// Scalasca matches them, which a byte-count metric would not give. The ready-queue length and
// live DF bytes are asynchronous metrics on each node's system thread. Time: 1 tick = 1 ns, the
// trace's merged clock (every node on node 0's clock).
import { closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs';
import { makeDirectory } from '../../core/files.js';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { builtFile } from '../../core/addon.js';
import type { DamageReport } from '../damage.js';
import { SpmdResolver, spmdOpName } from '../model/spmd.js';
import type { SpmdOp } from '../schema.js';
import type { ModelListener, TraceModel } from '../model/model.js';
import type { Fragment, Transfer, Wait } from '../model/records.js';
import { readModel } from '../read.js';
import { Items, K_INTERVAL, K_METRIC, K_RECV, K_SEND, RecordFile, Spill, SPILL_BLOCK, UNDEFINED_U32 } from './otf2-stream.js';

export const OTF2_ARCHIVE_NAME = 'traces';
const HELPER = 'luna-otf2';
const STREAM_VERSION = 1;

// OTF2 enum values (OTF2_Definitions.h, OTF2_GeneralDefinitions.h)
const ROLE_FUNCTION = 1, ROLE_ARTIFICIAL = 31, ROLE_TASK_WAIT = 22, ROLE_POINT2POINT = 28;
const ROLE_CODE = 4, ROLE_CRITICAL = 12, ROLE_BARRIER = 15, ROLE_COLL_ONE2ALL = 23, ROLE_COLL_ALL2ONE = 24, ROLE_COLL_ALL2ALL = 25;
const ROLE_RMA = 29, ROLE_ALLOCATE = 35;
const PARADIGM_USER = 1, PARADIGM_MPI = 4, PARADIGM_MEASUREMENT_SYSTEM = 6, PARADIGM_UPC = 12;
/** The region role of each SPMD operation (OTF2_RegionRole; the paradigm is UPC's) */
const SPMD_ROLE: Record<SpmdOp, number> = {
  region: ROLE_CODE, barrier: ROLE_BARRIER, notify: ROLE_BARRIER, wait: ROLE_BARRIER,
  broadcast: ROLE_COLL_ONE2ALL, scatter: ROLE_COLL_ONE2ALL, gather: ROLE_COLL_ALL2ONE, reduce: ROLE_COLL_ALL2ONE,
  gather_all: ROLE_COLL_ALL2ALL, exchange: ROLE_COLL_ALL2ALL, permute: ROLE_COLL_ALL2ALL, prefix_reduce: ROLE_COLL_ALL2ALL,
  all_alloc: ROLE_ALLOCATE, lock: ROLE_CRITICAL, unlock: ROLE_CRITICAL, lock_attempt: ROLE_CRITICAL,
  put: ROLE_RMA, get: ROLE_RMA, memput: ROLE_RMA, memget: ROLE_RMA, memcpy: ROLE_RMA, fence: ROLE_RMA,
};
/** an interval's tag: an SPMD operation (its site in s1, bytes sent in num and received in s2) */
const TAG_SPMD = 1;
const TYPE_UINT64 = 4, TYPE_STRING = 11;
/** the most bytes one item's records take in the events file (a message hop: 67), and a Leave (27) */
const ITEM_BYTES = 80, LEAVE_BYTES = 32;

/** The attributes of the archive, in id order. */
export const OTF2_ATTRIBUTES = [
  { name: 'cf', type: TYPE_UINT64, doc: 'node-local CF number (as in the trace records)' },
  { name: 'gid', type: TYPE_STRING, doc: 'the CF global id (stable across runs)' },
  { name: 'instance', type: TYPE_STRING, doc: 'the CF as the program names it, e.g. link[5]' },
  { name: 'cpu_ns', type: TYPE_UINT64, doc: 'thread CPU time of the CF execution, ns' },
  { name: 'df', type: TYPE_STRING, doc: 'the DF a transfer carries' },
  { name: 'resource', type: TYPE_STRING, doc: 'what a wait waited for' },
  { name: 'site', type: TYPE_STRING, doc: 'the program\'s call site of an SPMD operation (file:line:col)' },
  { name: 'bytes_sent', type: TYPE_UINT64, doc: 'bytes an SPMD rank sent in a collective' },
  { name: 'bytes_received', type: TYPE_UINT64, doc: 'bytes an SPMD rank received in a collective' },
] as const;
const ATTR = { cf: 0, gid: 1, instance: 2, cpu: 3, df: 4, resource: 5, site: 6, sent: 7, recv: 8 };
const METRICS = [
  { name: 'ready queue', unit: 'CFs', doc: 'CFs ready to run on the node' },
  { name: 'live DF bytes', unit: 'bytes', doc: 'bytes of DFs alive on the node' },
];

/** The helper is missing: the OTF2 library was not there when the package was installed. */
export class Otf2UnavailableError extends Error {}

export interface Otf2Result {
  /** the archive's anchor file */
  anchor: string;
  locations: number;
  /** events written per location, by location name (`node 0 / lane 1`) */
  events: Record<string, number>;
  /** CF executions written (Enter/Leave pairs on worker lanes) */
  cfs: number;
  messages: number;
  warnings: string[];
  damage: DamageReport;
}

export type Otf2Progress = (done: number, estimated: number, phase: 'reading' | 'writing') => void;

/** Collects the model's records per location, then writes the helper's two record files. */
export class Otf2Collector implements ModelListener {
  private readonly locs = new Map<number, Items>();
  private readonly strings = new Map<string, number>();
  private nextString = 0;
  private readonly regions = new Map<string, { id: number; role: number; paradigm: number; doc: string }>();
  private readonly codeRegion: number[] = [];
  private readonly tags = new Map<number, number>();
  /** the regions that enclose each message event, as in traces of MPI programs */
  private sendRegion = -1;
  private recvRegion = -1;
  private minT = Infinity;
  private maxT = -Infinity;
  cfs = 0;
  messages = 0;
  /** intervals cut at the end of the interval they started in */
  clipped = 0;

  /** intervals and instants collected */
  get items(): number {
    let n = 0;
    for (const it of this.locs.values()) n += it.total;
    return n;
  }

  /**
   * `defs` receives the string definitions as they are made (unbounded in number: a gid per CF);
   * `spill` the items past a block per location, in sorted runs (null: all held until `write`).
   */
  constructor(private readonly model: TraceModel, private readonly defs: RecordFile, private readonly spill: Spill | null = null) {
    this.str('');
    this.spmdOps(model.use(SpmdResolver));
  }

  /**
   * An SPMD rank's operations as regions on its lane (UPC's paradigm, a role per kind: barrier,
   * one-to-all, all-to-one, all-to-all, allocation, critical for locks, RMA for remote access),
   * each with its call site, and a collective's bytes sent and received.
   */
  private spmdOps(r: SpmdResolver): void {
    const open = new Map<number, { t: number; op: number; site: number }[]>();
    const leave = (node: number, thread: number, t: number, sent: number, recv: number): void => {
      const st = open.get(node * 65536 + thread);
      const e = st?.pop();
      if (!e || !(t >= e.t)) return;
      const name = spmdOpName(e.op);
      const role = SPMD_ROLE[name as SpmdOp] ?? ROLE_FUNCTION;
      const a = this.span(e.t, t), b = this.spanEnd;
      this.at(node, thread).add(K_INTERVAL, a, b, this.region(`spmd ${name}`, role, PARADIGM_UPC, `the SPMD layer's ${name}`), TAG_SPMD, sent, e.site, recv, NaN);
    };
    r.listen({
      enter: (e, site) => {
        const k = e.node * 65536 + e.thread;
        let st = open.get(k);
        if (!st) open.set(k, (st = []));
        st.push({ t: e.t, op: e.op, site: this.str(site) });
      },
      exit: (e) => leave(e.node, e.thread, e.t, NaN, 0),
      cexit: (e) => leave(e.node, e.thread, e.t, e.sent, e.recv),
    });
  }

  /** A string definition's id; `unique` strings (one per CF) are not remembered. */
  str(s: string, unique = false): number {
    if (!unique) {
      const id = this.strings.get(s);
      if (id !== undefined) return id;
    }
    const id = this.nextString++;
    if (!unique) this.strings.set(s, id);
    this.defs.u8(0x53 /* S */).u32(id).utf8(s);
    return id;
  }

  /** A CF's instance name as a string definition (one per CF: written from its parts, not remembered). */
  private cfName(f: Fragment): number {
    const id = this.nextString++;
    this.defs.u8(0x53 /* S */).u32(id).utf8Cf(f.label, f.labelIdx);
    return id;
  }

  private region(name: string, role: number, paradigm: number, doc: string): number {
    let r = this.regions.get(name);
    if (!r) { r = { id: this.regions.size, role, paradigm, doc }; this.regions.set(name, r); }
    return r.id;
  }

  private at(node: number, thread: number): Items {
    const key = node * 65536 + thread;
    let it = this.locs.get(key);
    if (!it) { it = new Items(this.spill); this.locs.set(key, it); }
    return it;
  }

  /** the end of the latest span (span returns its start: no array per record) */
  private spanEnd = 0;

  /** A span's ticks (its end, never before its start, in spanEnd); the archive's bounds widened. */
  private span(t0: number, t1: number): number {
    const a = Math.round(t0), b = Math.max(a, Math.round(t1));
    if (a < this.minT) this.minT = a;
    if (b > this.maxT) this.maxT = b;
    this.spanEnd = b;
    return a;
  }

  finish(f: Fragment): void {
    if (f.slot < 0 || !(f.finish >= f.start)) return;
    let r = this.codeRegion[f.code];
    if (r === undefined) r = this.codeRegion[f.code] = this.region(this.model.codeName(f.code), ROLE_FUNCTION, PARADIGM_USER, 'code fragment');
    const a = this.span(f.start, f.finish), b = this.spanEnd;
    this.at(f.node, f.lane).add(K_INTERVAL, a, b, r, 0, f.cf, this.str(f.gid, true), this.cfName(f), f.cpu);
    this.cfs++;
  }

  sysBusy(node: number, t0: number, t1: number): void {
    const a = this.span(t0, t1), b = this.spanEnd;
    this.at(node, 0).add(K_INTERVAL, a, b, this.region('system busy', ROLE_ARTIFICIAL, PARADIGM_MEASUREMENT_SYSTEM, 'the node\'s system thread at work'), 0, NaN, UNDEFINED_U32, UNDEFINED_U32, NaN);
  }

  wait(w: Wait): void {
    if (!(w.end >= w.start)) return;
    const a = this.span(w.start, w.end), b = this.spanEnd;
    const r = this.region(`wait ${w.kind}`, ROLE_TASK_WAIT, PARADIGM_USER, `a thread waiting for a ${w.kind}`);
    this.at(w.node, w.thread).add(K_INTERVAL, a, b, r, 0, NaN, this.str(w.resource), UNDEFINED_U32, w.cpu);
  }

  transfer(t: Transfer): void {
    if (!(t.arrive >= t.sendStart)) return;
    const pair = t.from * 65536 + t.to;
    const tag = this.tags.get(pair) ?? 0;
    this.tags.set(pair, tag + 1);
    // defined once per DF record, from its key (a map of every DF name would grow with the run:
    // ~80 MiB at 10^6 fragments)
    let df = t.df.exportId;
    if (df < 0) { df = t.df.exportId = this.nextString++; this.defs.u8(0x53 /* S */).u32(df).utf8Df(t.df.key); }
    if (this.sendRegion < 0) {
      this.sendRegion = this.region('DF send', ROLE_POINT2POINT, PARADIGM_MPI, 'a DF transfer hop leaves this node');
      this.recvRegion = this.region('DF receive', ROLE_POINT2POINT, PARADIGM_MPI, 'a DF transfer hop arrives on this node');
    }
    const a = this.span(t.sendStart, t.arrive), b = this.spanEnd;
    this.at(t.from, 0).add(K_SEND, a, a, t.to, tag, t.bytes, df, UNDEFINED_U32, NaN);
    this.at(t.to, 0).add(K_RECV, b, b, t.from, tag, t.bytes, df, UNDEFINED_U32, NaN);
    this.messages++;
  }

  counter(node: number, name: 'readyQueue' | 'liveBytes', t: number, value: number): void {
    if (!Number.isFinite(value)) return;
    const a = this.span(t, t);
    this.at(node, 0).add(K_METRIC, a, a, name === 'readyQueue' ? 0 : 1, 0, Math.round(value), UNDEFINED_U32, UNDEFINED_U32, NaN);
  }

  /** Location id, name and group of a (node, thread) key. */
  private static loc(key: number): { id: number; node: number; thread: number; name: string } {
    const node = Math.floor(key / 65536), thread = key % 65536;
    return { id: key, node, thread, name: `node ${node} / ${thread === 0 ? 'system' : `lane ${thread}`}` };
  }

  /**
   * Writes each location's events in order to `ev` and the definitions to the defs file, ending
   * it; returns events per location name. `progress(items done)`.
   */
  write(ev: RecordFile, startedAt: string, progress?: (done: number) => void): Record<string, number> {
    // every node gets its system thread (the communicator's rank location), even when silent
    for (let n = 0; n < this.model.N; n++) this.at(n, 0);
    const keys = [...this.locs.keys()].sort((a, b) => a - b);
    const shift = this.minT < 0 ? -this.minT : 0;
    const T = (t: number): number => t + shift;
    const counts = new Map<number, number>();
    ev.bytes(Buffer.from('LUNAOTF2', 'latin1')).u32(STREAM_VERSION);
    let done = 0;
    for (const key of keys) {
      const it = this.locs.get(key)!;
      ev.u8(0x42 /* B */).u64(key);
      let events = 0;
      // open intervals, innermost last: their end (cut to the enclosing one's), region and CPU
      // time (typed: an array popped empty gives its store back, and pushing on it again makes a
      // new one, once per interval on a lane)
      let sEnd = new Float64Array(64), sRef = new Uint32Array(64), sCpu = new Float64Array(64), depth = 0;
      const leave = (d: number): void => {
        const cpu = sCpu[d]!;
        ev.reserve(LEAVE_BYTES).w8(0x58 /* X */).w64(T(sEnd[d]!)).w32(sRef[d]!);
        if (cpu === cpu) ev.w8(1).w32(ATTR.cpu).w8(TYPE_UINT64).w64(Math.max(0, Math.round(cpu)));
        else ev.w8(0);
        events++;
      };
      const items = it.merged();
      for (let run = items.peek(); run !== null; items.pop(), run = items.peek()) {
        const c = run.cols, i = run.p;
        const t = c.t0[i]!;
        while (depth > 0 && sEnd[depth - 1]! <= t) leave(--depth);
        const k = c.kind[i];
        ev.reserve(ITEM_BYTES);
        if (k === K_INTERVAL) {
          // an interval must end inside the one it starts in (a record that crosses it is clipped)
          let end = c.t1[i]!;
          if (depth > 0 && end > sEnd[depth - 1]!) { end = sEnd[depth - 1]!; this.clipped++; }
          ev.w8(0x45 /* E */).w64(T(t)).w32(c.ref[i]!);
          const num = c.num[i]!;
          if (c.tag[i] === TAG_SPMD) {
            if (num === num) ev.w8(3).w32(ATTR.sent).w8(TYPE_UINT64).w64(num).w32(ATTR.recv).w8(TYPE_UINT64).w64(c.s2[i]!).w32(ATTR.site).w8(TYPE_STRING).w64(c.s1[i]!);
            else ev.w8(1).w32(ATTR.site).w8(TYPE_STRING).w64(c.s1[i]!);
          } else if (num === num) {
            ev.w8(3).w32(ATTR.cf).w8(TYPE_UINT64).w64(num);
            ev.w32(ATTR.gid).w8(TYPE_STRING).w64(c.s1[i]!);
            ev.w32(ATTR.instance).w8(TYPE_STRING).w64(c.s2[i]!);
          } else if (c.s1[i] !== UNDEFINED_U32) ev.w8(1).w32(ATTR.resource).w8(TYPE_STRING).w64(c.s1[i]!);
          else ev.w8(0);
          if (depth === sEnd.length) {
            const g = <A extends Float64Array | Uint32Array>(a: A): A => { const b = new (a.constructor as new (n: number) => A)(2 * depth); b.set(a); return b; };
            sEnd = g(sEnd); sRef = g(sRef); sCpu = g(sCpu);
          }
          sEnd[depth] = end; sRef[depth] = c.ref[i]!; sCpu[depth] = c.cpu[i]!;
          depth++;
        } else if (k === K_SEND || k === K_RECV) {
          // Enter, the message event, Leave, all at the tick the hop left or arrived
          const region = k === K_SEND ? this.sendRegion : this.recvRegion;
          const tt = T(t);
          ev.w8(0x45 /* E */).w64(tt).w32(region).w8(0);
          ev.w8(k === K_SEND ? 0x50 /* P */ : 0x51 /* Q */).w64(tt).w32(c.ref[i]!).w32(c.tag[i]!).w64(c.num[i]!);
          ev.w8(1).w32(ATTR.df).w8(TYPE_STRING).w64(c.s1[i]!);
          ev.w8(0x58 /* X */).w64(tt).w32(region).w8(0);
          events += 2;
        } else {
          ev.w8(0x56 /* V */).w64(T(t)).w32(c.ref[i]!);
          ev.i64(c.num[i]!);
        }
        events++;
        if ((++done & 0xffff) === 0) progress?.(done);
      }
      while (depth > 0) leave(--depth);
      ev.u8(0x5a /* Z */);
      counts.set(key, events);
    }
    ev.flush();

    // definitions (every string defined before the record that refers to it starts)
    const d = this.defs;
    const realtime = Date.parse(startedAt);
    const minT = Number.isFinite(this.minT) ? this.minT : 0, maxT = Number.isFinite(this.maxT) ? this.maxT : 0;
    // 1 tick = 1 ns: the trace's times are CLOCK_MONOTONIC ns on node 0's clock
    d.u8(0x4b /* K */).u64(1e9).u64(T(minT)).u64(maxT - minT);
    // the realtime of the first tick, when the trace says when it started
    if (Number.isFinite(realtime)) d.u64(Math.max(0, realtime * 1e6 + minT)); else d.u64max();
    const machine = this.str('luna-ts run'), clsMachine = this.str('machine'), clsNode = this.str('node');
    d.u8(0x54 /* T */).u32(0).u32(machine).u32(clsMachine).u32(UNDEFINED_U32);
    for (let n = 0; n < this.model.N; n++) {
      const name = this.str(`node ${n}`);
      d.u8(0x54).u32(n + 1).u32(name).u32(clsNode).u32(0);
      d.u8(0x47 /* G */).u32(n).u32(name).u32(n + 1);
    }
    const events: Record<string, number> = {};
    for (const key of keys) {
      const l = Otf2Collector.loc(key);
      const name = this.str(l.name);
      d.u8(0x4c /* L */).u64(l.id).u32(name).u32(l.node).u64(counts.get(key)!);
      events[l.name] = counts.get(key)!;
    }
    for (const [name, r] of this.regions) {
      const ns = this.str(name), doc = this.str(r.doc);
      d.u8(0x52 /* R */).u32(r.id).u32(ns).u32(doc).u8(r.role).u8(r.paradigm);
    }
    OTF2_ATTRIBUTES.forEach((a, i) => {
      const ns = this.str(a.name), doc = this.str(a.doc);
      d.u8(0x41 /* A */).u32(i).u32(ns).u32(doc).u8(a.type);
    });
    METRICS.forEach((m, i) => {
      const ns = this.str(m.name), doc = this.str(m.doc), unit = this.str(m.unit);
      d.u8(0x4d /* M */).u32(i).u32(ns).u32(doc).u32(unit);
    });
    const comm = this.str('DF transfers');
    d.u8(0x43 /* C */).u32(comm).u32(this.model.N);
    for (let n = 0; n < this.model.N; n++) d.u64(n * 65536);
    d.u8(0x2e /* . */);
    d.flush();
    return events;
  }
}

/** The helper's path, or why there is none. */
export function otf2Helper(): string {
  const p = builtFile(HELPER);
  if (!p) {
    throw new Otf2UnavailableError(
      'OTF2 export needs the OTF2 library when luna-ts is installed (its helper build/Release/luna-otf2 was not built): '
      + 'install it (Debian/Ubuntu: apt-get install libotf2-trace-dev), then run `npm rebuild luna-ts` (in a checkout: npm run install)');
  }
  return p;
}

/**
 * Write the trace in `dir` as an OTF2 archive in `outDir` (created; an archive of the same name
 * there is replaced). `progress(done, estimated, phase)`: events while reading, items while writing.
 * `spillBlock`: items a location holds before they go to a sorted run on disk (SPILL_BLOCK).
 */
export function exportOtf2(dir: string, outDir: string, progress?: Otf2Progress, opts: { spillBlock?: number } = {}): Otf2Result {
  const helper = otf2Helper();
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw Object.assign(new Error(`${outDir} is a file; luna export otf2 writes an archive directory there`), { code: 'ENOTDIR' });
  makeDirectory(outDir, 'OTF2 archive directory');
  const anchor = join(outDir, `${OTF2_ARCHIVE_NAME}.otf2`);
  // the archive's own files only: the library will not write over an archive
  for (const f of [anchor, join(outDir, `${OTF2_ARCHIVE_NAME}.def`), join(outDir, OTF2_ARCHIVE_NAME)]) rmSync(f, { recursive: true, force: true });
  const evPath = join(outDir, '.luna-otf2.events'), defPath = join(outDir, '.luna-otf2.defs'), spillPath = join(outDir, '.luna-otf2.items');
  const fds = [openSync(evPath, 'w'), openSync(defPath, 'w'), openSync(spillPath, 'w+')];
  try {
    const defs = new RecordFile(fds[1]!);
    const spill = new Spill(fds[2]!, opts.spillBlock ?? SPILL_BLOCK);
    let c!: Otf2Collector;
    const read = readModel(dir, (model) => { c = new Otf2Collector(model, defs, spill); model.listen(c); }, progress && ((d, e) => progress(d, e, 'reading')), { worker: true, recycle: true });
    const items = c.items;
    const events = c.write(new RecordFile(fds[0]!), read.manifest.startedAt, progress && ((d) => progress(d, items, 'writing')));
    while (fds.length) closeSync(fds.pop()!);
    rmSync(spillPath, { force: true });
    const r = spawnSync(helper, [outDir, OTF2_ARCHIVE_NAME, evPath, defPath], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.error || r.status !== 0) {
      const why = r.error?.message ?? (r.stderr.trim().split('\n').filter(Boolean).slice(-3).join('; ') || `exit ${r.status ?? r.signal}`);
      throw Object.assign(new Error(`writing the OTF2 archive ${outDir} failed: ${why}`), { code: 'EOTF2' });
    }
    progress?.(items, items, 'writing');
    const warnings = read.warnings();
    if (c.clipped) warnings.push(`${c.clipped} span(s) crossed the end of the span they started in and were cut there (OTF2 needs nested regions per location)`);
    return { anchor, locations: Object.keys(events).length, events, cfs: c.cfs, messages: c.messages, warnings, damage: read.damage() };
  } finally {
    for (const fd of fds) closeSync(fd);
    for (const f of [evPath, defPath, spillPath]) rmSync(f, { force: true });
  }
}
