// Writes a simulated run as a real trace directory through the trace layer's own writer
// (one ThreadTraceWriter per node × thread, manifest.json), so the analyzer can be checked on
// the exact bytes a run produces and read back by readTrace.

import type { TraceEvent, TraceManifest } from '../../trace/events.js';
import { openTraceDir, writeManifest } from '../../trace/dir.js';
import { traceFileName } from '../../trace/format.js';
import { ThreadTraceWriter } from '../../trace/writer.js';

export function writeSimTrace(dir: string, manifest: TraceManifest, events: Iterable<TraceEvent>): TraceManifest {
  const m: TraceManifest = { ...manifest, files: [] };
  openTraceDir(dir, m);
  const writers = new Map<number, ThreadTraceWriter>();
  const names = new Map<string, string>(); // "node:df" (simulator numbering) → DF name
  const w = (node: number, thread: number): ThreadTraceWriter => {
    const k = node * 4096 + thread;
    let x = writers.get(k);
    if (!x) {
      x = ThreadTraceWriter.open(dir, node, thread, { cpuExact: true });
      writers.set(k, x);
      m.files.push({ node, thread, path: traceFileName(node, thread) });
    }
    return x;
  };
  // the writer numbers DFs itself: translate the simulator's numbers through the names
  const df = (e: { node: number; thread: number; df: number }) => w(e.node, e.thread).dfName(names.get(`${e.node}:${e.df}`)!);
  // a runtime writes sysBusy when the busy span ends: replay it there so file order stays causal
  const order = [...events].map((e, i) => [e, i] as const)
    .sort((a, b) => at(a[0]) - at(b[0]) || a[1] - b[1]).map((x) => x[0]);
  for (const e of order) {
    const s = w(e.node, e.thread);
    switch (e.kind) {
      case 'programStart': s.programStart(e.t); break;
      case 'programFinish': s.programFinish(e.t); break;
      case 'cfCreated': s.cfCreated(e.t, e.cf, e.parentCf, e.code, e.gid, e.label); break;
      case 'cfMigrate': s.cfMigrate(e.t, e.cf, e.toNode); break;
      case 'cfReceive': s.cfReceive(e.t, e.cf, e.fromNode, e.remoteCf, e.gid, e.code, e.label); break;
      case 'cfReady': s.cfReady(e.t, e.cf); break;
      case 'cfInput': s.cfInput(e.cf, df(e)); break;
      case 'cfStart': s.cfStart(e.t, e.cpu, e.cf); break;
      case 'cfFinish': s.cfFinish(e.t, e.cpu, e.cf); break;
      case 'dfName': names.set(`${e.node}:${e.df}`, e.name); break;
      case 'dfComputed': s.dfComputed(e.t, df(e), e.producerCf, e.bytes); break;
      case 'dfSendStart': s.dfSendStart(e.t, df(e), e.toNode, e.bytes); break;
      case 'dfSendEnd': s.dfSendEnd(e.t, df(e), e.toNode); break;
      case 'dfReceive': s.dfReceive(e.t, df(e), e.fromNode, e.bytes); break;
      case 'dfDeleted': s.dfDeleted(e.t, df(e)); break;
      case 'sysBusy': s.sysBusy(e.t, e.end); break;
      case 'readyQueue': s.readyQueue(e.t, e.value); break;
      case 'liveBytes': s.liveBytes(e.t, e.value); break;
    }
  }
  for (const x of writers.values()) x.close();
  m.files.sort((a, b) => a.node - b.node || a.thread - b.thread);
  writeManifest(dir, m);
  return m;
}

function at(e: TraceEvent): number { return e.kind === 'sysBusy' ? e.end : e.t; }
