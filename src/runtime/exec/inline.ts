// The system thread as an executor: fragments of codes measured to be tiny run right where they
// became ready, with no hand-off to a worker and back (two thread wake-ups that cost far more
// than the fragment). It runs on behalf of an idle lane, so at most `lanes` ucodes ever run at
// once. The ucode module is imported here too.
import { pathToFileURL } from 'node:url';
import type { ImportDef } from '../../program/compile.js';
import type { TraceSink } from '../../trace/schema.js';
import { threadCpuNs, wallNs } from '../../trace/clock.js';
import type { DfValue } from '../../ucode/value.js';
import { bindUcodes, callUcode, ContractError, type Ucode } from './call.js';
import type { BatchResult, Task } from './protocol.js';

let inlineDepth = 0;
let exitGuarded = false;

/** A ucode running on the system thread must not end the process: process.exit becomes an error. */
function guardExit(): void {
  if (exitGuarded) return;
  exitGuarded = true;
  const realExit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => {
    if (inlineDepth > 0) throw new ContractError(`a ucode called process.exit(${code ?? ''})`);
    return realExit(code as number | undefined);
  }) as typeof process.exit;
}

export class InlineExecutor {
  private fns: Ucode[] | null = null;
  private readonly now: () => number;

  constructor(private readonly imports: readonly ImportDef[], private readonly tr?: TraceSink) {
    this.now = tr ? wallNs : () => performance.now() * 1e6;
  }

  /** Import the ucode module on this thread (before the program starts). */
  async load(bundle: string | undefined): Promise<void> {
    this.use(bundle ? ((await import(pathToFileURL(bundle).href)) as Record<string, unknown>) : undefined);
  }

  /** Use the functions of an already loaded module (in-process harnesses). */
  use(mod: Record<string, unknown> | undefined): void {
    this.fns = bindUcodes(mod, this.imports);
    guardExit();
  }

  get ready(): boolean {
    return this.fns !== null;
  }

  /** Run `tasks` (no forwarded inputs) now, as lane `lane`. */
  run(batch: number, lane: number, tasks: readonly Task[]): BatchResult {
    const fns = this.fns!, tr = this.tr, now = this.now;
    const outs: (DfValue | null)[][] = [];
    const start = new Float64Array(tasks.length), fin = new Float64Array(tasks.length);
    const result: BatchResult = { lane, batch, outs, start, fin };
    inlineDepth++;
    try {
      for (let i = 0; i < tasks.length; i++) {
        const t = tasks[i]!;
        const t0 = now();
        if (tr) tr.cfStart(t0, threadCpuNs(), t.cf, lane + 1);
        start[i] = t0;
        let o: (DfValue | null)[];
        try {
          o = callUcode(fns[t.imp]!, this.imports[t.imp]!, t.args, (k) => t.keys[k]!);
        } catch (e) {
          if (tr) tr.cfFinish(now(), threadCpuNs(), t.cf, lane + 1);
          const ex = e instanceof Error ? e : new Error(String(e));
          result.error = { task: i, message: ex.message, stack: ex.stack, kind: e instanceof ContractError ? 'contract' : 'ucode' };
          break;
        }
        if (tr) { const c1 = threadCpuNs(); const t1 = now(); tr.cfFinish(t1, c1, t.cf, lane + 1); fin[i] = t1; }
        else fin[i] = now();
        outs.push(o);
      }
    } finally {
      inlineDepth--;
    }
    if (outs.length < tasks.length) { result.start = start.subarray(0, outs.length); result.fin = fin.subarray(0, outs.length); }
    return result;
  }
}
