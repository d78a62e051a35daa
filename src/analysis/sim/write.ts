// Writes simulated events as a real trace directory through the trace layer's own writer (one
// ThreadTraceWriter per node × thread, manifest.json), so analyses are checked on the exact bytes a
// run produces and read back by readTrace. Each event is written by the writer method of its kind
// with its fields in schema order: a new record kind needs no change here.
import type { TraceEvent, RecordDef } from '../../trace/schema.js';
import { RECORDS, WRITTEN_AT } from '../../trace/schema.js';
import type { TraceManifest } from '../../trace/manifest.js';
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
  // a runtime writes a span when it ends: replay spans there so file order stays causal
  const order = [...events].map((e, i) => [e, i] as const)
    .sort((a, b) => at(a[0]) - at(b[0]) || a[1] - b[1]).map((x) => x[0]);
  for (const e of order) {
    const s = w(e.node, e.thread);
    if (e.kind === 'dfName') { names.set(`${e.node}:${e.df}`, e.name); continue; }
    const def = RECORDS[e.kind] as RecordDef;
    const values = def.fields.map(([f]) => {
      const v = (e as unknown as Record<string, unknown>)[f];
      // the writer numbers DFs itself: translate the simulator's numbers through the names
      return f === 'df' ? s.dfName(names.get(`${e.node}:${v as number}`)!) : v;
    });
    (s as unknown as Record<string, (...a: unknown[]) => void>)[e.kind]!(...values);
  }
  for (const x of writers.values()) x.close();
  m.files.sort((a, b) => a.node - b.node || a.thread - b.thread);
  writeManifest(dir, m);
  return m;
}

function at(e: TraceEvent): number { return (e as unknown as Record<string, number>)[WRITTEN_AT[e.kind]]!; }
