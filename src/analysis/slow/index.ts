// SLOW analysis of a fragmented program's run (SPEC §5; seeds 003 §4 and 000 §3.2).

import type { TraceEvent, TraceManifest } from '../../trace/events.js';
import { SlowAnalyzer } from './analyzer.js';
import { finishReport } from './report.js';
import type { SlowOptions, SlowReport } from './types.js';

export * from './types.js';
export { splitIdle, type IdleSplit } from './split.js';
export { SlowAnalyzer } from './analyzer.js';
export { interpretSlow } from './interpret.js';
export { formatSlowTable } from './format.js';
export { parseDuration } from './fmt.js';
export { analyzeSlowTrace } from './trace.js';

/** One streaming pass over the merged, time-ordered events of a run. */
export function analyzeSlow(manifest: TraceManifest, events: Iterable<TraceEvent>, opts: SlowOptions = {}): SlowReport {
  const an = new SlowAnalyzer(manifest, opts);
  for (const e of events) an.push(e);
  return finishReport(an);
}

/** The same over an async stream (a trace reader that yields while it reads files). */
export async function analyzeSlowAsync(manifest: TraceManifest, events: AsyncIterable<TraceEvent> | Iterable<TraceEvent>, opts: SlowOptions = {}): Promise<SlowReport> {
  const an = new SlowAnalyzer(manifest, opts);
  for await (const e of events) an.push(e);
  return finishReport(an);
}
