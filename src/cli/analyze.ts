// `luna analyze slow TRACE`: SLOW characteristics, breakdowns, blame, critical path, advice.
// `luna analyze patterns TRACE`: the pattern engine's tree (pattern → call site → rank).
import { analyzeSlowTrace, formatSlowTable, interpretFindings, interpretSlow, type SlowModel } from '../analysis/slow/index.js';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { progressBar } from './progress.js';
import { DurationError, parseDuration } from '../core/duration.js';
import { EXIT_TRACE_DAMAGED, formatDamage, type DamageReport } from '../trace/damage.js';
import { analyzePatternsTrace, formatPatterns } from '../analysis/patterns/index.js';

/**
 * Exit code of an analysis of a run that did not complete (failed, hung, lost, interrupted, or
 * its end never recorded): the result is printed in full, but it covers only part of the run.
 * It wins over EXIT_TRACE_DAMAGED (a killed run's trace is often cut as well).
 */
export const EXIT_RUN_INCOMPLETE = 4;

/** A duration option in ns (undefined: not given), or the exit code after saying what is wrong with it. */
function durationOption(flag: string, v: string | undefined): { ns?: number; exit?: number } {
  if (v === undefined) return {};
  try { return { ns: parseDuration(v) }; } catch (e) {
    if (!(e instanceof DurationError)) throw e;
    process.stderr.write(`luna: error: ${flag}: ${e.message}\n`);
    return { exit: 2 };
  }
}

/**
 * The frame of every trace analysis command: the directory checked, the analysis run under a
 * progress bar, what was dropped said first (nobody reads the numbers without knowing), the
 * result printed, warnings, and the exit code (`print` may return its own, else 3 when damaged).
 */
function traceAnalysis<R extends { damage: DamageReport; warnings: readonly string[] }>(dir: string, analyse: (progress: (done: number, est: number) => void) => R, print: (r: R) => number | undefined): number {
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  try {
    const bar = progressBar();
    bar.phase('analysing', 1);
    let report: R;
    try {
      report = analyse((done, est) => bar.update(done, est));
    } finally { bar.stop(); }
    process.stderr.write(formatDamage(report.damage, dir));
    const code = print(report);
    for (const w of report.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    return code ?? (report.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0);
  } catch (e) {
    return traceErrorExit(e);
  }
}

export async function analyzeSlowCommand(dir: string, o: { json?: boolean; model: string; window?: string; compare?: boolean }): Promise<number> {
  if (o.model !== 'kireev2024' && o.model !== 'litvinov2017') {
    process.stderr.write(`luna: error: --model must be kireev2024 or litvinov2017, got ${JSON.stringify(o.model)}\n`);
    return 2;
  }
  const win = durationOption('--window', o.window);
  if (win.exit !== undefined) return win.exit;
  return traceAnalysis(dir, (progress) => analyzeSlowTrace(dir, { model: o.model as SlowModel, windowNs: win.ns, compare: o.compare }, {}, progress), (report) => {
    if (o.json) process.stdout.write(JSON.stringify({ ...report, advice: interpretSlow(report), findings: interpretFindings(report) }, null, 2) + '\n');
    else {
      process.stdout.write(formatSlowTable(report) + '\n');
      const advice = interpretSlow(report);
      if (advice.length) process.stdout.write('\nWhat it means and what to change:\n' + advice.map((a) => `  - ${a}`).join('\n') + '\n');
    }
    if (!report.run.complete) {
      process.stderr.write(`luna: the run did not complete (${report.run.status}): the analysis covers only its part before that (exit ${EXIT_RUN_INCOMPLETE})\n`);
      return EXIT_RUN_INCOMPLETE;
    }
    return undefined;
  });
}

export async function analyzePatternsCommand(dir: string, o: { json?: boolean; compare?: boolean; quantum?: string }): Promise<number> {
  const q = durationOption('--quantum', o.quantum);
  if (q.exit !== undefined) return q.exit;
  return traceAnalysis(dir, (progress) => analyzePatternsTrace(dir, { compare: o.compare, quantumNs: q.ns }, progress), (report) => {
    if (o.json) process.stdout.write(JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n');
    else process.stdout.write(formatPatterns(report) + '\n');
    if (!report.run.complete) {
      process.stderr.write(`luna: the run did not complete (${report.run.status}): the patterns cover only its part before that (exit ${EXIT_RUN_INCOMPLETE})\n`);
      return EXIT_RUN_INCOMPLETE;
    }
    return undefined;
  });
}
