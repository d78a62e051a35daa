// The system thread as an executor: fragments of codes measured to be tiny run right where they
// became ready, with no hand-off to a worker and back (two thread wake-ups that cost far more
// than the fragment). It runs on behalf of an idle lane, so at most `lanes` ucodes ever run at
// once. The ucode module is imported here too.
import { pathToFileURL } from 'node:url';
import type { ImportDef } from '../../program/compile.js';
import type { TraceSink } from '../../trace/schema.js';
import { CpuClockGate, wallNs } from '../../trace/clock.js';
import type { DfValue } from '../../ucode/value.js';
import { bindUcodes, callUcode, ContractError, nameOfKey, type Ucode } from './call.js';
import type { NativeUcodes } from '../../ucode/cpp/native.js';
import type { Task, TaskError } from './protocol.js';

let inlineDepth = 0;
let exitGuarded = false;
/** the first asynchronous work a ucode running here started (as on a worker: a contract error) */
let asyncMade: string | null = null;

/**
 * Wrap `obj[name]` (a scheduler: setTimeout, process.nextTick, …) so that a call from a ucode
 * running here is recorded as `what`. Node's own modules schedule through internal bindings,
 * so the runtime pays nothing; util.promisify's custom form is kept.
 */
function watch(obj: object, name: string, what: string): void {
  const o = obj as Record<string, unknown>;
  const real = o[name] as (...a: unknown[]) => unknown;
  const wrapped = function (this: unknown, ...a: unknown[]): unknown {
    if (inlineDepth > 0 && asyncMade === null) asyncMade = what;
    return real.apply(this, a);
  };
  for (const k of Reflect.ownKeys(real)) if (k !== 'length' && k !== 'name' && k !== 'prototype') Object.defineProperty(wrapped, k, Object.getOwnPropertyDescriptor(real, k)!);
  o[name] = wrapped;
}

/**
 * A ucode running on the system thread must not end the process (process.exit becomes an
 * error) nor leave asynchronous work behind (its timer would run, and could throw, long after
 * it returned): it breaks the same contract as on a worker. Timers, immediates and microtasks
 * are caught at the call, naming the fragment. Promises and process.nextTick are not (an
 * async_hooks hook would slow every promise of this thread by a few percent, and Node's own
 * streams use process.nextTick — console.log in a ucode): a returned promise is refused
 * (call.ts), and an error they throw later ends the run (NodeRuntime.uncaught).
 */
function guardExit(): void {
  if (exitGuarded) return;
  exitGuarded = true;
  watch(globalThis, 'setTimeout', 'Timeout');
  watch(globalThis, 'setInterval', 'Timeout');
  watch(globalThis, 'setImmediate', 'Immediate');
  watch(globalThis, 'queueMicrotask', 'Microtask');
  const realExit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => {
    if (inlineDepth > 0) throw new ContractError(`a ucode called process.exit(${code ?? ''})`);
    return realExit(code as number | undefined);
  }) as typeof process.exit;
}

/** A ucode failed on the system thread. */
export class InlineFailure extends Error {
  constructor(readonly error: TaskError) { super(error.message); }
}

export class InlineExecutor {
  private fns: Ucode[] | null = null;
  private readonly now: () => number;
  /** wall times of the last run, when it was timed or traced */
  start = 0;
  fin = 0;

  /** traced: which codes' CFs read the CPU clock */
  private readonly gate: CpuClockGate | undefined;

  constructor(private readonly imports: readonly ImportDef[], private readonly tr?: TraceSink) {
    this.now = tr ? wallNs : () => performance.now() * 1e6;
    this.gate = tr ? new CpuClockGate(imports.length) : undefined;
  }

  /** Import the ucode module (and the C++ library) on this thread (before the program starts). */
  async load(bundle: string | undefined, native?: NativeUcodes): Promise<void> {
    // before the import: ucode stack traces point into ucodes.ts (the bundle's inline source map)
    process.setSourceMapsEnabled(true);
    this.use(bundle ? ((await import(pathToFileURL(bundle).href)) as Record<string, unknown>) : undefined, native);
  }

  /** Use the functions of an already loaded module (in-process harnesses). */
  use(mod: Record<string, unknown> | undefined, native?: NativeUcodes): void {
    this.fns = bindUcodes(mod, this.imports, native);
    guardExit();
  }

  get ready(): boolean {
    return this.fns !== null;
  }

  /**
   * Run task `t` (no forwarded inputs) now, as lane `lane`: its outputs, or an InlineFailure.
   * `timed`: record start and finish (always when tracing).
   */
  run(t: Task, lane: number, timed: boolean): (DfValue | null)[] {
    const tr = this.tr;
    const clock = timed || tr !== undefined;
    let cpu = false;
    if (clock) {
      this.start = this.now();
      if (tr) cpu = this.gate!.start(tr, this.start, t.imp, t.cf, lane + 1);
    }
    inlineDepth++;
    try {
      const o = callUcode(this.fns![t.imp]!, this.imports[t.imp]!, t.args, t.keys, nameOfKey);
      if (asyncMade !== null) {
        const type = asyncMade;
        asyncMade = null;
        throw new ContractError(`ucode ${this.imports[t.imp]!.symbol} started asynchronous work (${type}): ucodes are synchronous, they must not start timers or promises`);
      }
      if (clock) {
        if (tr) this.traceFinish(t, lane, cpu);
        else this.fin = this.now();
      }
      return o;
    } catch (e) {
      asyncMade = null;
      if (tr) this.traceFinish(t, lane, cpu);
      const ex = e instanceof Error ? e : new Error(String(e));
      throw new InlineFailure({ task: 0, message: ex.message, stack: ex.stack, kind: e instanceof ContractError ? 'contract' : 'ucode' });
    } finally {
      inlineDepth--;
    }
  }

  private traceFinish(t: Task, lane: number, cpu: boolean): void {
    this.fin = this.gate!.finish(this.tr!, this.start, t.imp, t.cf, lane + 1, cpu, this.now);
  }

}
