// `luna export perfetto DIR -o out.json` (`-o -`: standard output), `luna export tables DIR [-o OUT] [--format csv,parquet]`
import { exportPerfetto, exportTables, type TableFormat } from '../trace/index.js';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { outputTarget } from './argv.js';
import { EXIT_TRACE_DAMAGED, formatDamage } from '../trace/damage.js';
import { progressBar } from './progress.js';

export async function exportPerfettoCommand(dir: string, out: string): Promise<number> {
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  const bar = progressBar();
  try {
    bar.phase('exporting', 1);
    let r;
    try { r = exportPerfetto(dir, outputTarget(out), (done, est) => bar.update(done, est)); } finally { bar.stop(); }
    process.stderr.write(formatDamage(r.damage, dir));
    for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    process.stderr.write(`luna: wrote ${r.events} trace events to ${out === '-' ? 'standard output' : out}\n`);
    return r.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0;
  } catch (e) {
    return traceErrorExit(e);
  }
}

/** `--format csv`, `parquet` or `csv,parquet`; null when it names anything else. */
export function parseTableFormats(v: string): TableFormat[] | null {
  const fs = v.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
  if (fs.length === 0 || !fs.every((f): f is TableFormat => f === 'csv' || f === 'parquet')) return null;
  return [...new Set(fs)];
}

export async function exportTablesCommand(dir: string, o: { output?: string; format: string }): Promise<number> {
  const formats = parseTableFormats(o.format);
  if (!formats) {
    process.stderr.write(`luna: error: --format must be csv, parquet or csv,parquet, got ${JSON.stringify(o.format)}\n`);
    return 2;
  }
  if (o.output === '-') {
    process.stderr.write('luna: error: luna export tables writes one file per table: -o takes a directory, not - (standard output)\n');
    return 2;
  }
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  const out = o.output ?? `${dir.replace(/[\\/]+$/, '')}.tables`;
  const bar = progressBar();
  try {
    bar.phase('exporting', 1);
    let r;
    try { r = exportTables(dir, out, formats, (done, est) => bar.update(done, est)); } finally { bar.stop(); }
    process.stderr.write(formatDamage(r.damage, dir));
    for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    const counts = Object.entries(r.rows).map(([t, n]) => `${t} ${n}`).join(', ');
    process.stderr.write(`luna: wrote ${formats.join(' and ')} tables to ${out} (rows: ${counts})\n`);
    return r.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0;
  } catch (e) {
    return traceErrorExit(e);
  }
}
