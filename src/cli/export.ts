// `luna export perfetto DIR -o out.json` (`-o -`: standard output), `luna export tables DIR [-o OUT] [--format csv,parquet]`,
// `luna export otf2 DIR [-o OUT]`
import { exportOtf2, exportPerfetto, exportPerfettoProto, exportTables, Otf2UnavailableError, type TableFormat } from '../trace/index.js';
import { progressBar } from './progress.js';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { outputTarget } from './argv.js';
import { EXIT_TRACE_DAMAGED, formatDamage } from '../trace/damage.js';

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
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  const bar = progressBar();
  try {
    bar.phase('exporting', 1);
    const update = (done: number, est: number): void => bar.update(done, est);
    let r;
    try { r = fmt === 'json' ? exportPerfetto(dir, outputTarget(out), update) : exportPerfettoProto(dir, outputTarget(out), update); } finally { bar.stop(); }
    process.stderr.write(formatDamage(r.damage, dir));
    for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    const what = 'events' in r ? `${r.events} trace events (Chrome JSON)` : `${r.packets} Perfetto packets (protobuf, ${r.slices} slices)`;
    process.stderr.write(`luna: wrote ${what} to ${out === '-' ? 'standard output' : out}\n`);
    return r.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0;
  } catch (e) {
    bar.stop();
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

export async function exportOtf2Command(dir: string, o: { output?: string }): Promise<number> {
  if (o.output === '-') {
    process.stderr.write('luna: error: an OTF2 archive is a directory of files: -o takes a directory, not - (standard output)\n');
    return 2;
  }
  const bad = notATraceDir(dir);
  if (bad !== undefined) return bad;
  const out = o.output ?? `${dir.replace(/[\\/]+$/, '')}.otf2`;
  const bar = progressBar();
  let phase = '';
  try {
    const r = exportOtf2(dir, out, (done, est, p) => {
      if (p !== phase) { phase = p; bar.phase(p === 'reading' ? 'reading the trace' : 'writing OTF2', 1); }
      bar.update(done, est);
    });
    bar.stop();
    process.stderr.write(formatDamage(r.damage, dir));
    for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    const events = Object.values(r.events).reduce((a, b) => a + b, 0);
    process.stderr.write(`luna: wrote OTF2 archive ${r.anchor} (${r.locations} locations, ${events} events: ${r.cfs} CF executions, ${r.messages} DF messages)\n`);
    return r.damage.total > 0 ? EXIT_TRACE_DAMAGED : 0;
  } catch (e) {
    bar.stop();
    if (e instanceof Otf2UnavailableError) {
      process.stderr.write(`luna: error: ${e.message}\n`);
      return 1;
    }
    return traceErrorExit(e);
  }
}
