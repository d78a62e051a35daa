// `luna export perfetto DIR -o out.json`
import { exportPerfetto } from '../trace/index.js';
import { traceErrorExit } from './trace-errors.js';

export async function exportPerfettoCommand(dir: string, out: string): Promise<number> {
  try {
    const r = await exportPerfetto(dir, out);
    for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    process.stderr.write(`luna: wrote ${r.events} trace events to ${out}\n`);
    return 0;
  } catch (e) {
    return traceErrorExit(e);
  }
}
