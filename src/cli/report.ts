// `luna report TRACE [-o report.html]` and `luna report A B -o cmp.html` (`-o -`: standard output).
import { statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { progressBar } from './progress.js';
import { EXIT_TRACE_DAMAGED, formatDamage } from '../trace/damage.js';

/** Why `out` cannot be written, checked before minutes of analysis. */
function badOutput(out: string): string | undefined {
  if (out === '-') return undefined;
  try {
    if (statSync(out).isDirectory()) return `-o ${out} is a directory; give a file name, e.g. ${out.replace(/[\\/]+$/, '')}/report.html`;
  } catch { /* a new file */ }
  const dir = dirname(resolve(out));
  try {
    if (!statSync(dir).isDirectory()) return `cannot write ${out}: ${dirname(out)} is not a directory`;
  } catch {
    return `cannot write ${out}: no directory ${dirname(out)} (create it first)`;
  }
  return undefined;
}

export async function reportCommand(traces: string[], o: { output?: string; distribution?: string }): Promise<number> {
  if (traces.length === 0 || traces.length > 2) {
    process.stderr.write(`luna: error: luna report takes one trace directory, or two to compare (A before, B after); got ${traces.length}\n`);
    return 2;
  }
  const out = o.output ?? 'report.html';
  const badOut = badOutput(out);
  if (badOut) { process.stderr.write(`luna: error: ${badOut}\n`); return 2; }
  for (const t of traces) {
    const bad = notATraceDir(t);
    if (bad !== undefined) return bad;
  }
  let distribution: { path: string; nodes: number; cfs: Record<string, number> } | undefined;
  if (o.distribution !== undefined) {
    const { readDistribution, DistributionError } = await import('../runtime/policy/distribution-file.js');
    try {
      const d = readDistribution(o.distribution);
      distribution = { path: o.distribution, nodes: d.nodes, cfs: d.cfs };
    } catch (e) {
      if (e instanceof DistributionError) { process.stderr.write(`luna: error: ${e.message}\n`); return 2; }
      throw e;
    }
  }
  const bar = progressBar();
  try {
    const { reportHtml } = await import('../report/index.js');
    const { html, runs } = reportHtml(traces, {
      phase: (name) => bar.phase(name, 1),
      events: (done, total) => bar.update(done, total),
    }, { distribution });
    bar.phase('writing', 1);
    if (out === '-') process.stdout.write(html); else writeFileSync(out, html);
    bar.stop();
    for (const [i, r] of runs.entries()) process.stderr.write(formatDamage(r.slow.damage, traces[i]!));
    for (const [i, r] of runs.entries()) for (const w of r.slow.warnings) process.stderr.write(`luna: warning: ${runs.length > 1 ? `${traces[i]}: ` : ''}${w}\n`);
    if (out !== '-') process.stderr.write(`luna: wrote ${out} (${(Buffer.byteLength(html) / 1048576).toFixed(1)} MiB; open it in a browser, it works offline)\n`);
    return runs.some((r) => r.slow.damage.total > 0) ? EXIT_TRACE_DAMAGED : 0;
  } catch (e) {
    bar.stop();
    return traceErrorExit(e);
  }
}
