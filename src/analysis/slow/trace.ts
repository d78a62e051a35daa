// File-based entry point: analyze a trace directory written by a run (or by the simulator).

import type { ReadTraceOptions } from '../../trace/merge.js';
import { readModel, type ReadProgress } from '../../trace/read.js';
import { SlowAnalyzer } from './analyzer.js';
import { finishReport } from './report.js';
import type { SlowOptions, SlowReport } from './types.js';

/** Read `dir` (manifest + per-thread files, merged in time order) and analyze it in one pass. */
export function analyzeSlowTrace(dir: string, opts: SlowOptions = {}, read: ReadTraceOptions = {}, progress?: ReadProgress): SlowReport {
  let an!: SlowAnalyzer;
  const r = readModel(dir, (model) => { an = new SlowAnalyzer(model, opts); }, progress, read);
  const report = finishReport(an);
  // damage found while reading (complete now that the stream is consumed) goes with the report
  for (const w of r.readerWarnings) report.warnings.push(`trace: ${w}`);
  return report;
}
