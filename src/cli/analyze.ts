// `luna analyze slow TRACE`: SLOW characteristics, breakdowns, blame, critical path, advice.
import { analyzeSlowTrace, formatSlowTable, interpretFindings, interpretSlow, type SlowModel } from '../analysis/slow/index.js';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { progressBar } from './progress.js';
import { DurationError, parseDuration } from '../core/duration.js';
import { EXIT_TRACE_DAMAGED, formatDamage } from '../trace/damage.js';

/**
 * Exit code of an analysis of a run that did not complete (failed, hung, lost, interrupted, or
 * its end never recorded): the result is printed in full, but it covers only part of the run.
 * It wins over EXIT_TRACE_DAMAGED (a killed run's trace is often cut as well).
 */
export const EXIT_RUN_INCOMPLETE = 4;

export async function analyzeSlowCommand(dir: string, o: { json?: boolean; model: string; window?: string; compare?: boolean }): Promise<number> {
  if (o.model !== 'kireev2024' && o.model !== 'litvinov2017') {
    process.stderr.write(`luna: error: --model must be kireev2024 or litvinov2017, got ${JSON.stringify(o.model)}\n`);
    return 2;
  }
  let windowNs: number | undefined;
  if (o.window !== undefined) {
    try { windowNs = parseDuration(o.window); } catch (e) {
      if (!(e instanceof DurationError)) throw e;
      process.stderr.write(`luna: error: --window: ${e.message}\n`);
      return 2;
    }
  }
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  try {
    const bar = progressBar();
    bar.phase('analysing', 1);
    let report;
    try {
      report = analyzeSlowTrace(dir, { model: o.model as SlowModel, windowNs, compare: o.compare }, {}, (done, est) => bar.update(done, est));
    } finally { bar.stop(); }
    // what was dropped comes first, so nobody reads the numbers without knowing
    process.stderr.write(formatDamage(report.damage, dir));
    if (o.json) process.stdout.write(JSON.stringify({ ...report, advice: interpretSlow(report), findings: interpretFindings(report) }, null, 2) + '\n');
    else {
      process.stdout.write(formatSlowTable(report) + '\n');
      const advice = interpretSlow(report);
      if (advice.length) process.stdout.write('\nWhat it means and what to change:\n' + advice.map((a) => `  - ${a}`).join('\n') + '\n');
    }
    for (const w of report.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    if (!report.run.complete) {
      process.stderr.write(`luna: the run did not complete (${report.run.status}): the analysis covers only its part before that (exit ${EXIT_RUN_INCOMPLETE})\n`);
      return EXIT_RUN_INCOMPLETE;
    }
    return report.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0;
  } catch (e) {
    return traceErrorExit(e);
  }
}
