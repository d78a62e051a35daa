// `luna analyze slow TRACE`: SLOW characteristics, breakdowns, blame, critical path, advice.
import { analyzeSlowTrace, formatSlowTable, interpretSlow, type SlowModel } from '../analysis/slow/index.js';
import { traceErrorExit } from './trace-errors.js';

/** "10ms", "250us", "1.5s", "2000ns" → ns */
export function parseDuration(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)$/.exec(s.trim());
  if (!m) return undefined;
  const k = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2] as 'ns'];
  return Number(m[1]) * k;
}

export async function analyzeSlowCommand(dir: string, o: { json?: boolean; model: string; window?: string; compare?: boolean }): Promise<number> {
  if (o.model !== 'kireev2024' && o.model !== 'litvinov2017') {
    process.stderr.write(`luna: error: --model must be kireev2024 or litvinov2017, got ${JSON.stringify(o.model)}\n`);
    return 2;
  }
  let windowNs: number | undefined;
  if (o.window !== undefined) {
    windowNs = parseDuration(o.window);
    if (!windowNs || windowNs <= 0) {
      process.stderr.write(`luna: error: --window must be a duration like 10ms, 500us or 1s, got ${JSON.stringify(o.window)}\n`);
      return 2;
    }
  }
  try {
    const report = analyzeSlowTrace(dir, { model: o.model as SlowModel, windowNs, compare: o.compare });
    if (o.json) process.stdout.write(JSON.stringify({ ...report, advice: interpretSlow(report) }, null, 2) + '\n');
    else {
      process.stdout.write(formatSlowTable(report) + '\n');
      const advice = interpretSlow(report);
      if (advice.length) process.stdout.write('\nWhat it means and what to change:\n' + advice.map((a) => `  - ${a}`).join('\n') + '\n');
    }
    for (const w of report.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    return 0;
  } catch (e) {
    return traceErrorExit(e);
  }
}
