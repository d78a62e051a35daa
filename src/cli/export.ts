// `luna export perfetto DIR -o out.json`
import { exportPerfetto } from '../trace/index.js';
import { TraceFormatError } from '../trace/format.js';

export async function exportPerfettoCommand(dir: string, out: string): Promise<number> {
  try {
    const r = await exportPerfetto(dir, out);
    for (const w of r.warnings) process.stderr.write(`luna: warning: ${w}\n`);
    process.stderr.write(`luna: wrote ${r.events} trace events to ${out}\n`);
    return 0;
  } catch (e) {
    if (e instanceof TraceFormatError || (e as NodeJS.ErrnoException).code !== undefined) {
      process.stderr.write(`luna: error: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  }
}
