// The one read loop of every command that reads a trace: the merged events of a trace directory
// pushed through a trace model whose listeners the caller registers, with progress, and one
// account of what the reader and the model dropped.
import { readTraceColumns } from './merge.js';
import { readTraceColumnsThreaded, threadedReading, type ThreadedReadOptions } from './merge-threaded.js';
import { estimateEvents, traceFilesBytes } from './manifest-reader.js';
import { TraceModel } from './model/model.js';
import type { TraceManifest } from './manifest.js';
import type { DamageReport } from './damage.js';

/** Events read so far, and the estimate of all (from the files' sizes). */
export type ReadProgress = (eventsDone: number, eventsEstimated: number) => void;

export interface ModelRead {
  model: TraceModel;
  manifest: TraceManifest;
  /** what the reader found damaged (complete: the stream was read to its end) */
  readerWarnings: string[];
  /** bytes of the trace files */
  bytes: number;
  /** the reader's warnings, then the model's with how often each occurred */
  warnings(): string[];
  damage(): DamageReport;
}

/**
 * Read the trace in `dir` once: `listen` registers the listeners on the model (analyses that
 * build on the model take it in their constructors), then every event goes through the model,
 * which is ended. `progress` is told about every 65 536 events and once at the end. `worker`:
 * decode and merge in a worker thread (merge-threaded.ts), overlapping the model on two cores.
 * `recycle`: the listeners keep no fragment past the call that hands it (TraceModel.recycles).
 */
export function readModel(dir: string, listen: (model: TraceModel) => void, progress?: ReadProgress, read: ThreadedReadOptions & { worker?: boolean; recycle?: boolean } = {}): ModelRead {
  const { worker, recycle, ...opts } = read;
  const trace = worker && threadedReading() ? readTraceColumnsThreaded(dir, opts) : readTraceColumns(dir, opts);
  const model = new TraceModel(trace.manifest, [], { recycle });
  model.damage = trace.damage; // one account of what the reader and the model dropped
  listen(model);
  const bytes = traceFilesBytes(dir, trace.manifest);
  const estimate = progress ? estimateEvents(bytes) : 0;
  let k = 0, told = 0;
  // the records flow as batches of columns: no object per record unless a listener asks for one
  trace.runs((rows, from, to) => {
    model.pushRows(rows, from, to);
    k += to - from;
    if (progress && k - told >= 0x10000) { told = k - (k & 0xffff); progress(told, estimate); }
  });
  if (progress) progress(k, k);
  model.end();
  return {
    model, manifest: trace.manifest, readerWarnings: trace.warnings, bytes,
    warnings: () => [...trace.warnings, ...[...model.warnings.entries()].map(([w, n]) => (n > 1 ? `${w} (${n}×)` : w))],
    damage: () => model.damage.report(),
  };
}
