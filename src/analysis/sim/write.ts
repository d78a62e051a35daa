// Writes simulated events as a real trace directory through the trace layer's own writer (one
// ThreadTraceWriter per node × thread, manifest.json), so analyses are checked on the exact bytes a
// run produces and read back by readTrace. Each event is written by the writer method of its kind
// with its fields in schema order: a new record kind needs no change here.
import type { TraceEvent, RecordDef } from '../../trace/schema.js';
import { NAMING_KINDS, RECORDS, WRITTEN_AT, type NamingKind } from '../../trace/schema.js';
import type { TraceManifest } from '../../trace/manifest.js';
import { openTraceDir, writeManifest } from '../../trace/dir.js';
import { traceFileName } from '../../trace/format.js';
import { ThreadTraceWriter } from '../../trace/writer.js';

export function writeSimTrace(dir: string, manifest: TraceManifest, events: Iterable<TraceEvent>): TraceManifest {
  const m: TraceManifest = { ...manifest, files: [] };
  openTraceDir(dir, m);
  const writers = new Map<number, ThreadTraceWriter>();
  // the simulator's numbers of each naming kind's field ("field:node:number") → the name
  const names = new Map<string, string>();
  const namer = new Map<string, NamingKind>(NAMING_KINDS.map((k) => [(RECORDS[k] as RecordDef).names!, k]));
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
  // a runtime writes a span when it ends: replay spans there so file order stays causal
  const order = [...events].map((e, i) => [e, i] as const)
    .sort((a, b) => at(a[0]) - at(b[0]) || a[1] - b[1]).map((x) => x[0]);
  for (const e of order) {
    const s = w(e.node, e.thread);
    const def = RECORDS[e.kind] as RecordDef;
    const r = e as unknown as Record<string, unknown>;
    if (def.names !== undefined) { names.set(`${def.names}:${e.node}:${r[def.names] as number}`, r.name as string); continue; }
    const values = def.fields.map(([f]) => {
      const v = r[f];
      // the writer numbers names itself: translate the simulator's numbers through the names
      const nk = namer.get(f);
      return nk ? (s[nk] as (n: string) => number)(names.get(`${f}:${e.node}:${v as number}`)!) : v;
    });
    (s as unknown as Record<string, (...a: unknown[]) => void>)[e.kind]!(...values);
  }
  for (const x of writers.values()) x.close();
  m.files.sort((a, b) => a.node - b.node || a.thread - b.thread);
  writeManifest(dir, m);
  return m;
}

function at(e: TraceEvent): number { return (e as unknown as Record<string, number>)[WRITTEN_AT[e.kind]]!; }
