// `luna export perfetto DIR -o out.json` (`-o -`: standard output), `luna export tables DIR [-o OUT] [--format csv,parquet]`,
// `luna export otf2 DIR [-o OUT]`
import { exportOtf2, exportPerfetto, exportPerfettoProto, exportTables, Otf2UnavailableError, type TableFormat } from '../trace/index.js';
import { progressBar, type Progress } from './progress.js';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { outputTarget } from './argv.js';
import { EXIT_TRACE_DAMAGED, formatDamage, type DamageReport } from '../trace/damage.js';
import { reexecForExport } from './export-heap.js';

/**
 * What every export shares: the trace directory checked, a progress bar while it runs, the damage
 * and warnings, one summary line, exit 3 when the trace was damaged. `refused` turns an error the
 * export knows into an exit code (undefined: the trace errors' own handling).
 */
function exportFrame<R extends { damage: DamageReport; warnings: readonly string[] }>(
  dir: string, run: (bar: Progress) => R, summary: (r: R) => string, refused?: (e: unknown) => number | undefined,
): number {
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  // a large trace: the same command in a node with an export's young generation (export-heap.ts)
  const again = reexecForExport(dir);
  if (again !== undefined) return again;
  const bar = progressBar();
  let r: R;
  try { r = run(bar); } catch (e) { bar.stop(); return refused?.(e) ?? traceErrorExit(e); }
  bar.stop();
  process.stderr.write(formatDamage(r.damage, dir));
  for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
  process.stderr.write(`luna: ${summary(r)}\n`);
  return r.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0;
}

/**
 * `--format proto` (default: Perfetto's protobuf, TrackEvent) or `json` (Chrome trace events);
 * a `.json` output name picks JSON when no format is given.
 */
export async function exportPerfettoCommand(dir: string, out: string, format?: string): Promise<number> {
  const fmt = format ?? (/\.json$/i.test(out) ? 'json' : 'proto');
  if (fmt !== 'proto' && fmt !== 'json') {
    process.stderr.write(`luna: error: --format must be proto or json, got ${JSON.stringify(format)}\n`);
    return 2;
  }
  return exportFrame(dir, (bar) => {
    bar.phase('exporting', 1);
    const update = (done: number, est: number): void => bar.update(done, est);
    return fmt === 'json' ? exportPerfetto(dir, outputTarget(out), update) : exportPerfettoProto(dir, outputTarget(out), update);
  }, (r) => {
    const what = 'events' in r ? `${r.events} trace events (Chrome JSON)` : `${r.packets} Perfetto packets (protobuf, ${r.slices} slices)`;
    return `wrote ${what} to ${out === '-' ? 'standard output' : out}`;
  });
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
  const out = o.output ?? `${dir.replace(/[\\/]+$/, '')}.tables`;
  return exportFrame(dir, (bar) => {
    bar.phase('exporting', 1);
    return exportTables(dir, out, formats, (done, est) => bar.update(done, est));
  }, (r) => `wrote ${formats.join(' and ')} tables to ${out} (rows: ${Object.entries(r.rows).map(([t, n]) => `${t} ${n}`).join(', ')})`);
}

export async function exportOtf2Command(dir: string, o: { output?: string }): Promise<number> {
  if (o.output === '-') {
    process.stderr.write('luna: error: an OTF2 archive is a directory of files: -o takes a directory, not - (standard output)\n');
    return 2;
  }
  const out = o.output ?? `${dir.replace(/[\\/]+$/, '')}.otf2`;
  let phase = '';
  return exportFrame(dir, (bar) => exportOtf2(dir, out, (done, est, p) => {
    if (p !== phase) { phase = p; bar.phase(p === 'reading' ? 'reading the trace' : 'writing OTF2', 1); }
    bar.update(done, est);
  }), (r) => {
    const events = Object.values(r.events).reduce((a, b) => a + b, 0);
    return `wrote OTF2 archive ${r.anchor} (${r.locations} locations, ${events} events: ${r.cfs} CF executions, ${r.messages} DF messages)`;
  }, (e) => {
    if (!(e instanceof Otf2UnavailableError)) return undefined;
    process.stderr.write(`luna: error: ${e.message}\n`);
    return 1;
  });
}
