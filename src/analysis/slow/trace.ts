// File-based entry point: analyze a trace directory written by a run (or by the simulator).

import { readTrace, type ReadTraceOptions } from '../../trace/merge.js';
import { estimateEvents, traceFilesBytes } from '../../trace/manifest-reader.js';
import { TraceModel } from '../../trace/model/model.js';
import { SlowAnalyzer } from './analyzer.js';
import { finishReport } from './report.js';
import type { SlowOptions, SlowReport } from './types.js';

/** Read `dir` (manifest + per-thread files, merged in time order) and analyze it in one pass. */
export function analyzeSlowTrace(dir: string, opts: SlowOptions = {}, read: ReadTraceOptions = {}, progress?: (eventsDone: number, eventsEstimated: number) => void): SlowReport {
  const trace = readTrace(dir, read);
  const model = new TraceModel(trace.manifest);
  model.damage = trace.damage; // one account of what the reader and the model dropped
  const an = new SlowAnalyzer(model, opts);
  if (progress) {
    const estimate = estimateEvents(traceFilesBytes(dir, trace.manifest));
    let k = 0;
    for (const e of trace.events) {
      model.push(e);
      if ((++k & 0xffff) === 0) progress(k, estimate);
    }
    progress(k, k);
  } else for (const e of trace.events) model.push(e);
  const report = finishReport(an);
  // damage found while reading (complete now that the stream is consumed) goes with the report
  for (const w of trace.warnings) report.warnings.push(`trace: ${w}`);
  return report;
}
