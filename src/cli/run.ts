// `luna run`: load, check, run on 1..N nodes, print faults and hangs; exit 0 / 1.
import { loadProgram } from '../program/load.js';
import { runSingleNode } from '../runtime/run.js';

export interface RunCliOptions {
  threads?: number;
  nodes?: number;
  define: Record<string, string>;
  ucodes?: string;
  trace?: string;
  quiet?: boolean;
  bind?: string;
}

export async function runCommand(file: string, args: string[], o: RunCliOptions): Promise<number> {
  const loaded = await loadProgram(file, { defines: o.define, ucodes: o.ucodes?.split(',').filter(Boolean) });
  if (!loaded.program) {
    process.stderr.write(loaded.text + '\n');
    return 1;
  }
  if (loaded.diagnostics.length > 0 && !o.quiet) process.stderr.write(loaded.text + '\n');
  const res = await runSingleNode({ program: loaded.program, bundle: loaded.bundle?.file, args, threads: o.threads });
  if (!res.ok) {
    process.stderr.write(`luna: error: ${res.message}\n`);
    return 1;
  }
  return 0;
}
