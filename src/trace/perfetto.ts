// Export of a trace directory to Chrome trace event JSON (opens in Perfetto and
// chrome://tracing). Streamed: events are appended to a string batch that is written with
// fs.writeSync every ~1 MiB, never one giant string.
//
// Mapping: pid = node, tid = thread (0 = system thread). A CF is a complete ("X") slice on the
// worker that ran it, or an async ("b"/"e") slice when it overlaps another CF of that thread
// (slices of one track must nest). System busy spans are "X" slices on thread 0. Flow arrows
// ("s" bound to the producer slice, "f" with "bp":"e" bound to the consumer slice) go from each
// DF's producer CF to each CF that read it; a DF that crossed nodes is matched by its name
// (DF numbers are node-local) from the consumer node's dfReceive back to the producing node.
// Transfers are async slices (dfSendStart→dfSendEnd); counters ("C") carry the ready-queue
// length and live DF bytes per node.

import { closeSync, openSync, writeSync } from 'node:fs';
import type { TraceEvent } from './events.js';
import { readTrace } from './merge.js';

interface Slice { pid: number; tid: number; t0: number; t1: number }
interface OpenCf { tid: number; t: number; cpu: number; async: boolean }
interface CfInfo { name: string; gid: string; ready?: number }

const key = (node: number, id: number): number => node * 4294967296 + id;
// Chrome wants µs; rounding to whole ns first keeps ts and ts+dur of a slice consistent.
const us = (ns: number): number => Math.round(ns) / 1000;
const EPS = 1; // ns: flow ends sit this far inside their slices so they bind to them

class JsonOut {
  private parts: string[] = [];
  private size = 0;
  count = 0;
  private first = true;
  constructor(private readonly fd: number) {
    writeSync(fd, '{"displayTimeUnit":"ns","traceEvents":[\n');
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
    if (this.parts.length) writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }
  end(meta: Record<string, unknown>): void {
    this.flush();
    writeSync(this.fd, `\n],"metadata":${JSON.stringify(meta)}}\n`);
  }
}

/** Write `dir` as Chrome trace event JSON to `outFile`; returns how many trace events it wrote. */
export async function exportPerfetto(dir: string, outFile: string): Promise<{ events: number; warnings: string[] }> {
  const trace = readTrace(dir);
  const m = trace.manifest;
  const fd = openSync(outFile, 'w');
  const out = new JsonOut(fd);
  try {
    // Track names.
    const nodes = new Set<number>();
    for (const f of m.files.length ? m.files : []) nodes.add(f.node);
    for (let n = 0; n < m.nodes; n++) nodes.add(n);
    for (const n of [...nodes].sort((a, b) => a - b)) {
      out.ev({ ph: 'M', name: 'process_name', pid: n, tid: 0, args: { name: `node ${n}` } });
      out.ev({ ph: 'M', name: 'process_sort_index', pid: n, tid: 0, args: { sort_index: n } });
      for (let t = 0; t <= m.threads; t++) {
        out.ev({ ph: 'M', name: 'thread_name', pid: n, tid: t, args: { name: t === 0 ? 'system' : `worker ${t}` } });
        out.ev({ ph: 'M', name: 'thread_sort_index', pid: n, tid: t, args: { sort_index: t } });
      }
    }
    const codeName = (c: number): string => m.codes[c] ?? `code${c}`;
    const info = new Map<number, CfInfo>(); // (node, cf) → name, gid
    const open = new Map<number, OpenCf>(); // running CFs
    const openOnThread = new Map<number, number>(); // (node, thread) → running CF count
    const slices = new Map<number, Slice>(); // finished CF slices usable as flow ends
    const inputs = new Map<number, number[]>(); // consumer (node, cf) → its input df keys
    const dfNames = new Map<number, string>(); // (node, df) → name
    const producer = new Map<number, number>(); // (node, df) → producer (node, cf)
    const producerByName = new Map<string, number>(); // df name → producer (node, cf)
    const received = new Set<number>(); // (node, df) that came from another node
    const flows: { from: number; to: number; df: string }[] = [];
    const sends = new Map<string, number[]>(); // open transfers → async ids
    const sysEnd = new Map<number, number>(); // node → end of its last busy slice
    let nextId = 1;

    const producerOf = (node: number, df: number): number | undefined => {
      const k = key(node, df);
      if (!received.has(k)) {
        const p = producer.get(k);
        if (p !== undefined) return p;
      }
      const name = dfNames.get(k);
      return name === undefined ? undefined : producerByName.get(name);
    };

    for (const e of trace.events) {
      const pid = e.node;
      switch (e.kind) {
        case 'cfCreated':
        case 'cfReceive':
          info.set(key(pid, e.cf), { name: e.label ? `${codeName(e.code)} ${e.label}` : codeName(e.code), gid: e.gid });
          if (e.kind === 'cfReceive') instant(out, e, `receive CF ${e.gid} from node ${e.fromNode}`);
          break;
        case 'cfMigrate':
          instant(out, e, `migrate CF ${info.get(key(pid, e.cf))?.gid ?? e.cf} to node ${e.toNode}`);
          break;
        case 'cfReady': {
          const i = info.get(key(pid, e.cf));
          if (i) i.ready = e.t;
          break;
        }
        case 'cfInput': {
          const k = key(pid, e.cf);
          let l = inputs.get(k);
          if (!l) inputs.set(k, (l = []));
          l.push(e.df);
          break;
        }
        case 'cfStart': {
          const tk = key(pid, e.thread);
          const busy = openOnThread.get(tk) ?? 0;
          openOnThread.set(tk, busy + 1);
          open.set(key(pid, e.cf), { tid: e.thread, t: e.t, cpu: e.cpu, async: busy > 0 });
          // Resolve producers now: DF numbers and names may be reused later.
          const l = inputs.get(key(pid, e.cf));
          if (l) {
            for (const df of l) {
              const from = producerOf(pid, df);
              if (from !== undefined) flows.push({ from, to: key(pid, e.cf), df: dfNames.get(key(pid, df)) ?? `df${df}` });
            }
            inputs.delete(key(pid, e.cf));
          }
          break;
        }
        case 'cfFinish': {
          const k = key(pid, e.cf);
          const o = open.get(k);
          if (!o) break;
          open.delete(k);
          const tk = key(pid, o.tid);
          openOnThread.set(tk, (openOnThread.get(tk) ?? 1) - 1);
          const i = info.get(k);
          const name = i?.name ?? `cf ${e.cf}`;
          const args: Record<string, unknown> = { gid: i?.gid ?? '?', cf: e.cf, cpu_us: +((e.cpu - o.cpu) / 1000).toFixed(3) };
          if (i?.ready !== undefined) args.wait_us = +((o.t - i.ready) / 1000).toFixed(3);
          if (o.async) {
            const id = nextId++;
            out.ev({ ph: 'b', cat: 'cf', name, id, pid, tid: o.tid, ts: us(o.t), args });
            out.ev({ ph: 'e', cat: 'cf', name, id, pid, tid: o.tid, ts: us(e.t) });
          } else {
            out.ev({ ph: 'X', cat: 'cf', name, pid, tid: o.tid, ts: us(o.t), dur: (Math.round(e.t) - Math.round(o.t)) / 1000, args });
            slices.set(k, { pid, tid: o.tid, t0: o.t, t1: e.t });
          }
          info.delete(k);
          break;
        }
        case 'dfName':
          dfNames.set(key(pid, e.df), e.name);
          break;
        case 'dfComputed': {
          const k = key(pid, e.df);
          received.delete(k);
          if (e.producerCf >= 0) {
            const p = key(pid, e.producerCf);
            producer.set(k, p);
            const name = dfNames.get(k);
            if (name !== undefined) producerByName.set(name, p);
          }
          break;
        }
        case 'dfSendStart': {
          const id = nextId++;
          const sk = `${pid}:${e.df}:${e.toNode}`;
          const l = sends.get(sk);
          if (l) l.push(id);
          else sends.set(sk, [id]);
          const name = `send ${dfNames.get(key(pid, e.df)) ?? `df${e.df}`} → node ${e.toNode}`;
          out.ev({ ph: 'b', cat: 'transfer', name, id, pid, tid: e.thread, ts: us(e.t), args: { bytes: e.bytes } });
          break;
        }
        case 'dfSendEnd': {
          const sk = `${pid}:${e.df}:${e.toNode}`;
          const id = sends.get(sk)?.shift();
          if (id === undefined) break;
          const name = `send ${dfNames.get(key(pid, e.df)) ?? `df${e.df}`} → node ${e.toNode}`;
          out.ev({ ph: 'e', cat: 'transfer', name, id, pid, tid: e.thread, ts: us(e.t) });
          break;
        }
        case 'dfReceive':
          received.add(key(pid, e.df));
          instant(out, e, `receive ${dfNames.get(key(pid, e.df)) ?? `df${e.df}`} from node ${e.fromNode}`, { bytes: e.bytes });
          break;
        case 'dfDeleted':
          break;
        case 'sysBusy': {
          const last = sysEnd.get(pid) ?? -Infinity;
          if (e.t < last) {
            const id = nextId++;
            out.ev({ ph: 'b', cat: 'system', name: 'system busy', id, pid, tid: e.thread, ts: us(e.t) });
            out.ev({ ph: 'e', cat: 'system', name: 'system busy', id, pid, tid: e.thread, ts: us(e.end) });
          } else {
            out.ev({ ph: 'X', cat: 'system', name: 'system busy', pid, tid: e.thread, ts: us(e.t), dur: (Math.round(e.end) - Math.round(e.t)) / 1000 });
            sysEnd.set(pid, e.end);
          }
          break;
        }
        case 'readyQueue':
          out.ev({ ph: 'C', name: 'ready queue', pid, tid: 0, ts: us(e.t), args: { length: e.value } });
          break;
        case 'liveBytes':
          out.ev({ ph: 'C', name: 'live DF bytes', pid, tid: 0, ts: us(e.t), args: { bytes: e.value } });
          break;
        case 'programStart':
        case 'programFinish':
          out.ev({ ph: 'i', s: 'g', name: e.kind === 'programStart' ? 'program start' : 'program finish', pid, tid: e.thread, ts: us(e.t) });
          break;
      }
    }

    // Flow arrows, once every slice is known (JSON events need not be in time order).
    for (const f of flows) {
      const a = slices.get(f.from);
      const b = slices.get(f.to);
      if (!a || !b) continue; // an end is async or unfinished: flows bind to thread slices only
      const id = nextId++;
      out.ev({ ph: 's', cat: 'df', name: f.df, id, pid: a.pid, tid: a.tid, ts: us(Math.max(a.t0, a.t1 - Math.min(EPS, (a.t1 - a.t0) / 2))) });
      out.ev({ ph: 'f', bp: 'e', cat: 'df', name: f.df, id, pid: b.pid, tid: b.tid, ts: us(b.t0 + Math.min(EPS, (b.t1 - b.t0) / 2)) });
    }
    out.end({ program: m.program, args: m.args, nodes: m.nodes, threads: m.threads, cpuClockExact: m.clock?.cpuExact ?? false, warnings: trace.warnings });
  } finally {
    closeSync(fd);
  }
  return { events: out.count, warnings: trace.warnings };
}

function instant(out: JsonOut, e: TraceEvent, name: string, args?: Record<string, unknown>): void {
  out.ev({ ph: 'i', s: 't', name, pid: e.node, tid: e.thread, ts: us(e.t), ...(args ? { args } : {}) });
}
