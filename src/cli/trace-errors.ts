// Commands that read traces: a bad or missing trace is a message and exit 1 (a damaged
// manifest: exit 2), never a stack.
import { statSync } from 'node:fs';
import { TraceFormatError } from '../trace/format.js';
import { ManifestError } from '../trace/manifest-reader.js';

export function traceErrorExit(e: unknown): number {
  // `… -o - | head`: the reader has what it wanted; stop quietly
  if ((e as NodeJS.ErrnoException).code === 'EPIPE') return 0;
  if (e instanceof ManifestError) {
    process.stderr.write(`luna: error: ${e.message}\n`);
    return 2;
  }
  if (e instanceof TraceFormatError || (e as NodeJS.ErrnoException).code !== undefined) {
    process.stderr.write(`luna: error: ${(e as Error).message}\n`);
    return 1;
  }
  throw e;
}

/**
 * A TRACE argument that is not a directory: the message (and exit 1) before any reader opens
 * files inside it, so the user reads what is wrong rather than an ENOTDIR.
 */
export function notATraceDir(dir: string, say: (line: string) => void = (l) => { process.stderr.write(l); }): number | undefined {
  let problem: string | undefined;
  try {
    if (!statSync(dir).isDirectory()) problem = `${dir} is a file; a trace is a directory (written by luna run --trace DIR)`;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    problem = code === 'ENOENT' || code === 'ENOTDIR' ? `no trace directory ${dir} (luna run --trace DIR writes one)` : `cannot read the trace directory ${dir}: ${(e as Error).message}`;
  }
  if (problem === undefined) return undefined;
  say(`luna: error: ${problem}\n`);
  return 1;
}
