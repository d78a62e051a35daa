// Commands that read traces: a bad or missing trace is a message and exit 1, never a stack.
import { TraceFormatError } from '../trace/format.js';

export function traceErrorExit(e: unknown): number {
  if (e instanceof TraceFormatError || (e as NodeJS.ErrnoException).code !== undefined) {
    process.stderr.write(`luna: error: ${(e as Error).message}\n`);
    return 1;
  }
  throw e;
}
