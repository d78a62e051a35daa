// Export of a trace to Chrome trace event JSON (opens in Perfetto and chrome://tracing), built
// from the trace model in one streaming pass and bounded memory: events are appended to a
// string batch written every ~1 MiB (all of it: write-all.ts).
//
// Mapping: pid = node, tid = lane (0 = the node's system thread). A CF is a complete ("X")
// slice on its lane, named as the program names it (`link[5]`), with its code fragment, global
// id, label indices and CPU time in its arguments. System busy spans are "X" slices on tid 0.
// Flow arrows go from each input's producer slice to the consumer slice (across nodes too),
// emitted when the consumer finishes (its producers have finished by then). Transfers are
// async slices (send start → send end) with instants at arrival; counters ("C") carry the
// ready-queue length and live DF bytes per node. SPMD operations are slices (B at enter, E at
// exit) on the track of the thread that ran the rank, named `op @ call site`; a collective's
// exit carries its bytes, root and synchronisation; lock acquisitions and releases are instants.
import type { DamageReport } from '../damage.js';
import { closeSync } from 'node:fs';
import { writeAllText } from './write-all.js';
import { createRegular } from '../../core/files.js';
import { readModel, type ReadProgress } from '../read.js';
import type { TraceModel } from '../model/model.js';
import type { DfRec, Fragment } from '../model/records.js';
import { DDA_OPS, type TraceEvent } from '../schema.js';
import { SpmdResolver, spmdOpName, syncIn, syncOut } from '../model/spmd.js';

// Chrome wants µs; rounding to whole ns first keeps ts and ts+dur of a slice consistent.
const us = (ns: number): number => Math.round(ns) / 1000;
const EPS = 1; // ns: flow ends sit this far inside their slices so they bind to them

class JsonOut {
  private parts: string[] = [];
  private size = 0;
  count = 0;
  private first = true;
  constructor(private readonly fd: number) {
    writeAllText(fd, '{"displayTimeUnit":"ns","traceEvents":[\n');
  }
  ev(obj: Record<string, unknown>): void {
    const s = (this.first ? '' : ',\n') + JSON.stringify(obj);
    this.first = false;
    this.parts.push(s);
    this.size += s.length;
    this.count++;
    if (this.size > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.parts.length) writeAllText(this.fd, this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }
  end(meta: Record<string, unknown>): void {
    this.flush();
    writeAllText(this.fd, `\n],"metadata":${JSON.stringify(meta)}}\n`);
  }
}

/** Write the trace in `dir` as Chrome trace event JSON to `outFile` (a path, or a file descriptor). */
export function exportPerfetto(dir: string, outFile: string | number, progress?: ReadProgress): { events: number; warnings: string[]; damage: DamageReport } {
  const fd = typeof outFile === 'number' ? outFile : createRegular(outFile, 'Perfetto trace');
  const out = new JsonOut(fd);
  let nextId = 1;
  const sends = new Map<string, number[]>(); // open transfers → async ids
  try {
    const read = readModel(dir, (model) => listen(model, out, () => nextId++, sends), progress);
    const m = read.manifest;
    const warnings = read.warnings();
    out.end({ program: m.program, args: m.args, nodes: m.nodes, threads: m.threads, status: m.status ?? 'running', cpuClockExact: m.clock?.cpuExact ?? false, warnings });
    return { events: out.count, warnings, damage: read.damage() };
  } finally {
    if (typeof outFile !== 'number') closeSync(fd);
  }
}

/** The events of the model's records, written as they are resolved. */
function listen(model: TraceModel, out: JsonOut, newId: () => number, sends: Map<string, number[]>): void {
  for (let n = 0; n < model.N; n++) {
    out.ev({ ph: 'M', name: 'process_name', pid: n, tid: 0, args: { name: `node ${n}` } });
    out.ev({ ph: 'M', name: 'process_sort_index', pid: n, tid: 0, args: { sort_index: n } });
    for (let t = 0; t <= model.T; t++) {
      out.ev({ ph: 'M', name: 'thread_name', pid: n, tid: t, args: { name: t === 0 ? 'system' : `lane ${t}` } });
      out.ev({ ph: 'M', name: 'thread_sort_index', pid: n, tid: t, args: { sort_index: t } });
    }
  }
  const dfName = (e: { node: number; thread: number; df: number }): string => model.dfOf(e.node, e.thread, e.df)?.name ?? `df${e.df}`;
  const flow = (from: Fragment, to: Fragment, df: DfRec): void => {
    if (from.slot < 0 || !(from.finish === from.finish)) return;
    const id = newId();
    out.ev({ ph: 's', cat: 'df', name: df.name, id, pid: from.node, tid: from.lane, ts: us(Math.max(from.start, from.finish - Math.min(EPS, (from.finish - from.start) / 2))) });
    out.ev({ ph: 'f', bp: 'e', cat: 'df', name: df.name, id, pid: to.node, tid: to.lane, ts: us(to.start + Math.min(EPS, (to.finish - to.start) / 2)) });
  };
  model.use(SpmdResolver).listen({
    enter(e, site) {
      out.ev({ ph: 'B', cat: 'spmd', name: `${spmdOpName(e.op)} @ ${site}`, pid: e.node, tid: e.thread, ts: us(e.t), args: { rank: e.rank, at: site } });
    },
    exit(e) {
      out.ev({ ph: 'E', cat: 'spmd', pid: e.node, tid: e.thread, ts: us(e.t) });
    },
    cexit(e) {
      const args: Record<string, unknown> = { seq: e.seq, sent: e.sent, received: e.recv, sync: `IN_${syncIn(e.sync).toUpperCase()} | OUT_${syncOut(e.sync).toUpperCase()}` };
      if (e.root >= 0) args.root = e.root;
      out.ev({ ph: 'E', cat: 'spmd', pid: e.node, tid: e.thread, ts: us(e.t), args });
    },
    lock(e) {
      out.ev({ ph: 'i', s: 't', cat: 'spmd', name: `${e.kind === 'spmdAlock' ? 'acquire' : 'release'} lock ${e.lock}`, pid: e.node, tid: e.thread, ts: us(e.t), args: { rank: e.rank } });
    },
  });
  /** the row of dynamic array operations (nodes that have one) */
  const DDA_TID = 1022, ddaRows = new Set<number>();
  model.listen({
    finish(f, inputs) {
      const args: Record<string, unknown> = { code: model.codeName(f.code), gid: f.gid, cpu_us: +(f.cpu / 1000).toFixed(3) };
      if (f.labelIdx) args.indices = f.labelIdx;
      if (f.ready === f.ready) args.wait_us = +((f.start - f.ready) / 1000).toFixed(3);
      if (inputs.length) args.inputs = inputs.map((x) => x.name);
      const site = model.sites[f.site];
      if (site) args.at = `${site.file}:${site.line}:${site.col}`;
      out.ev({ ph: 'X', cat: 'cf', name: f.name, pid: f.node, tid: f.lane, ts: us(f.start), dur: (Math.round(f.finish) - Math.round(f.start)) / 1000, args });
      for (const x of inputs) if (x.producer) flow(x.producer, f, x);
    },
    sysBusy(node, t0, t1) {
      out.ev({ ph: 'X', cat: 'system', name: 'system busy', pid: node, tid: 0, ts: us(t0), dur: (Math.round(t1) - Math.round(t0)) / 1000 });
    },
    counter(node, name, t, value) {
      out.ev({ ph: 'C', name: name === 'readyQueue' ? 'ready queue' : 'live DF bytes', pid: node, tid: 0, ts: us(t), args: name === 'readyQueue' ? { length: value } : { bytes: value } });
    },
    wait(w) {
      const args: Record<string, unknown> = { kind: w.kind, resource: w.resource };
      if (w.fragment) args.cf = w.fragment.name;
      if (w.rank >= 0) args.rank = w.rank;
      if (w.cpu === w.cpu) args.cpu_us = +(w.cpu / 1000).toFixed(3);
      out.ev({ ph: 'X', cat: 'wait', name: `wait ${w.kind} ${w.resource}`, pid: w.node, tid: w.thread, ts: us(w.start), dur: (Math.round(w.end) - Math.round(w.start)) / 1000, args });
    },
    migrate(node, f, cf, toNode, t) {
      out.ev({ ph: 'i', s: 't', name: `migrate ${f ? f.name : `CF ${cf}`} to node ${toNode}`, pid: node, tid: 0, ts: us(t), args: f ? { gid: f.gid } : {} });
    },
    eventKinds: ['cfReceive', 'dfSendStart', 'dfSendEnd', 'dfReceive', 'programStart', 'programFinish', 'ddaOp'],
    event(e: TraceEvent) {
      switch (e.kind) {
        case 'ddaOp':
          // a row of their own (they span many system-thread slices), named at the first
          if (!ddaRows.has(e.node)) {
            ddaRows.add(e.node);
            out.ev({ ph: 'M', name: 'thread_name', pid: e.node, tid: DDA_TID, args: { name: 'dynamic arrays' } });
          }
          out.ev({ ph: 'X', cat: 'dynamic array', name: `${DDA_OPS[e.op] ?? 'operation'} of dynamic array ${e.array}`, pid: e.node, tid: DDA_TID, ts: us(e.t), dur: (Math.round(e.end) - Math.round(e.t)) / 1000, args: { exchanged_bytes: e.exchanged, rearranged_bytes: e.rearranged } });
          break;
        case 'cfReceive': {
          const f = model.fragmentOf(e.node, e.cf);
          out.ev({ ph: 'i', s: 't', name: `receive ${f ? f.name : `CF ${e.gid}`} from node ${e.fromNode}`, pid: e.node, tid: 0, ts: us(e.t), args: { gid: e.gid } });
          break;
        }
        case 'dfSendStart': {
          const id = newId();
          const k = `${e.node}:${e.df}:${e.toNode}`;
          const l = sends.get(k);
          if (l) l.push(id); else sends.set(k, [id]);
          out.ev({ ph: 'b', cat: 'transfer', name: `send ${dfName(e)} → node ${e.toNode}`, id, pid: e.node, tid: 0, ts: us(e.t), args: { bytes: e.bytes } });
          break;
        }
        case 'dfSendEnd': {
          const k = `${e.node}:${e.df}:${e.toNode}`;
          const id = sends.get(k)?.shift();
          if (id === undefined) break;
          if (sends.get(k)!.length === 0) sends.delete(k);
          out.ev({ ph: 'e', cat: 'transfer', name: `send ${dfName(e)} → node ${e.toNode}`, id, pid: e.node, tid: 0, ts: us(e.t) });
          break;
        }
        case 'dfReceive':
          out.ev({ ph: 'i', s: 't', name: `receive ${dfName(e)} from node ${e.fromNode}`, pid: e.node, tid: 0, ts: us(e.t), args: { bytes: e.bytes } });
          break;
        case 'programStart':
        case 'programFinish':
          out.ev({ ph: 'i', s: 'g', name: e.kind === 'programStart' ? 'program start' : 'program finish', pid: e.node, tid: 0, ts: us(e.t) });
          break;
        default: break;
      }
    },
  });
}
