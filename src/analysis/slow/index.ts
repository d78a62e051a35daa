// SLOW analysis of a fragmented program's run (SPEC §5; seeds 003 §4 and 000 §3.2).

import type { TraceEvent } from '../../trace/schema.js';
import type { TraceManifest } from '../../trace/manifest.js';
import { TraceModel } from '../../trace/model/model.js';
import { SlowAnalyzer } from './analyzer.js';
import { finishReport } from './report.js';
import type { SlowOptions, SlowReport } from './types.js';

export * from './types.js';
export { splitIdle, type IdleSplit } from './split.js';
export { SlowAnalyzer } from './analyzer.js';
export { interpretSlow, interpretFindings, heldReady, FINDING_KINDS, type Finding, type FindingKind } from './interpret.js';
export { OPTION, RULE } from './features.js';
export { formatSlowTable } from './format.js';
export { analyzeSlowTrace } from './trace.js';

/** One streaming pass over the merged, time-ordered events of a run. */
export function analyzeSlow(manifest: TraceManifest, events: Iterable<TraceEvent>, opts: SlowOptions = {}): SlowReport {
  const model = new TraceModel(manifest);
  const an = new SlowAnalyzer(model, opts);
  for (const e of events) model.push(e);
  return finishReport(an);
}
