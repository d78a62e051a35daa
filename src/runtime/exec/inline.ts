// The system thread as an executor: fragments of codes measured to be tiny run right where they
// became ready, with no hand-off to a worker and back (two thread wake-ups that cost far more
// than the fragment). It runs on behalf of an idle lane, so at most `lanes` ucodes ever run at
// once. The ucode module is imported here too. Imports that may wait for their node never run
// here: this thread is the one that would answer them.
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks'; // not the global's lazy getter (see node/runtime.ts)
import type { ImportDef } from '../../core/imports.js';
import type { TraceSink } from '../../trace/schema.js';
import { CpuClockGate, wallNs } from '../../trace/clock.js';
import type { DfValue } from '../../ucode/value.js';
import { bindUcodes, callDirect, callUcode, directOf, nameOfKey, outputCount, type DirectCall, type Ucode } from './call.js';
import { ContractError } from './contract.js';
import { NativeFault, stepOn, type DirectForm, type NativeUcodes } from '../../ucode/cpp/native.js';
import type { Task, TaskError, WireRequest } from './protocol.js';
import { IDENTITY, ThreadContext, type Route } from './context.js';
import { installContext } from '../../ucode/context.js';
import type { RequestDesk } from './desk.js';

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

/** The asynchronous work `who` started, as the contract error it is (and no longer pending). */
function leftAsync(who: string): ContractError {
  const type = asyncMade;
  asyncMade = null;
  return new ContractError(`${who} started asynchronous work (${type}): ucodes are synchronous, they must not start timers or promises`);
}

/** What a ucode's call here threw (a C++ crash a contract error, as on a worker), as the run's failure. */
function failure(e: unknown): InlineFailure {
  asyncMade = null;
  const ex = e instanceof NativeFault ? new ContractError(e.message) : e instanceof Error ? e : new Error(String(e));
  return new InlineFailure({ task: 0, message: ex.message, stack: ex.stack, kind: ex instanceof ContractError ? 'contract' : 'ucode' });
}

/**
 * The system thread's route to its own desk: the CF's identity is answered at once, posts are
 * delivered once the ucode has returned (a handler never runs inside a ucode), and nothing can
 * wait (imports that may are never run here).
 */
class InlineRoute implements Route {
  readonly posted: WireRequest[] = [];
  lane = 0;
  constructor(private readonly desk: RequestDesk | undefined) {}

  call(kind: string, _payload: unknown, cf: number): never | ReturnType<Route['call']> {
    const host = this.desk?.host;
    if (kind === IDENTITY && host) {
      const { label, gid } = host.identify(cf);
      return { id: 0, ok: true, value: { label, gid }, wait: 0, resource: 'the identity of its CF' };
    }
    throw new ContractError(`a ucode on the system thread asked its node for '${kind}': it cannot wait for the thread it runs on`);
  }

  post(kind: string, payload: unknown, cf: number): void {
    if (!this.desk) throw new ContractError('this node takes no requests');
    this.posted.push({ id: 0, kind, payload, cf, post: true });
  }

  /** Hand the posts of the ucode that returned to their handlers. */
  deliver(): void {
    for (const m of this.posted.splice(0)) this.desk!.receive(this.lane, m);
  }
}

export class InlineExecutor {
  private fns: Ucode[] | null = null;
  /**
   * per import, its direct form (C++ ucodes) and its output count, found once: a tiny fragment's
   * run calls it without callUcode's layer (the per-fragment path runs unoptimised for the first
   * thousands of fragments, where every call and property read counts)
   */
  private directs: (DirectCall | undefined)[] = [];
  private outs: number[] = [];
  private readonly now: () => number;
  /** wall times of the last run, when it was timed or traced */
  start = 0;
  fin = 0;

  /** traced: which codes' CFs read the CPU clock */
  private readonly gate: CpuClockGate | undefined;
  private readonly route: InlineRoute;
  private readonly ctx: ThreadContext;

  /** `desk`: the node's request desk (its handlers get the posts of ucodes run here) */
  constructor(private readonly imports: readonly ImportDef[], private readonly tr?: TraceSink, desk?: RequestDesk, node = 0) {
    this.now = tr ? wallNs : () => performance.now() * 1e6;
    this.gate = tr ? new CpuClockGate(imports.length) : undefined;
    this.route = new InlineRoute(desk);
    this.ctx = new ThreadContext(node, 1, tr, this.route, tr ? wallNs : this.now);
  }

  /** Import the ucode module (and the C++ library) on this thread (before the program starts). */
  async load(bundle: string | undefined, native?: NativeUcodes): Promise<void> {
    // before the import: ucode stack traces point into ucodes.ts (the bundle's inline source map)
    process.setSourceMapsEnabled(true);
    this.use(bundle ? ((await import(pathToFileURL(bundle).href)) as Record<string, unknown>) : undefined, native);
  }

  /** Use the functions of an already loaded module (in-process harnesses). */
  use(mod: Record<string, unknown> | undefined, native?: NativeUcodes): void {
    const fns = (this.fns = bindUcodes(mod, this.imports, native));
    this.directs = fns.map(directOf);
    this.outs = this.imports.map(outputCount);
    this.ready = true;
    guardExit();
    installContext(this.ctx);
  }

  /** the ucodes are loaded: fragments may run here (a field, not a getter: asked for every fragment) */
  ready = false;
  /** how a task's keys name its DFs (a planned loop's steps hand numbers for their outputs: node/loop-inline.ts) */
  nameOf: (key: string | number) => string = nameOfKey;

  /**
   * Run task `t` (no forwarded inputs) now, as lane `lane`: its outputs, or an InlineFailure.
   * `timed`: record start and finish (always when tracing).
   */
  run(t: Task, lane: number, timed: boolean): (DfValue | null)[] {
    const imp = t.imp, def = this.imports[imp]!;
    if (def.waits) throw new Error(`internal: ucode ${def.symbol} may wait for its node and was run on its system thread`);
    const tr = this.tr;
    const clock = timed || tr !== undefined;
    let cpu = false;
    if (clock) {
      this.start = this.now();
      if (tr) cpu = this.gate!.start(tr, this.start, imp, t.cf, lane + 1);
    }
    inlineDepth++;
    // (written when it changes: one lane borrowed CF after CF, a read is cheaper than two writes)
    const route = this.route, ln = lane + 1;
    if (route.lane !== ln) this.ctx.lane = route.lane = ln;
    let o: (DfValue | null)[];
    try {
      const direct = this.directs[imp];
      o = direct !== undefined
        ? callDirect(direct, def, this.outs[imp]!, t.args, t.keys, this.nameOf, this.ctx, t.cf)
        : callUcode(this.fns![imp]!, def, t.args, t.keys, this.nameOf, this.ctx, t.cf);
      if (asyncMade !== null) throw leftAsync(`ucode ${def.symbol}`);
      if (clock) {
        if (tr) this.traceFinish(t, lane, cpu);
        else this.fin = this.now();
      }
    } catch (e) {
      route.posted.length = 0;
      if (tr) this.traceFinish(t, lane, cpu);
      throw failure(e);
    } finally {
      inlineDepth--;
    }
    // outside the ucode: what a handler schedules is the layer's, not the ucode's
    if (route.posted.length > 0) route.deliver();
    return o;
  }

  /** Import `imp`'s direct C++ form (its entry and kinds: a planned loop of them may be stepped natively), if it has one. */
  directForm(imp: number): DirectForm | undefined {
    return this.directs[imp] as DirectForm | undefined;
  }

  /**
   * Step a planned loop natively (ucode/cpp/native.ts stepOn) as lane 0, untimed here (the
   * addon times 1 call in 16 itself), on the terms of `run`: no asynchronous work left behind,
   * the ucodes' posts delivered after, a fault an InlineFailure. `step` makes the running
   * step the context's (`enter`) when its ucode asks.
   */
  stepOn(buffer: ArrayBuffer, from: number, t: number, last: number, budgetNs: number, step: () => void, nameOf: (param: string | number) => string, onTimed: () => boolean): void {
    inlineDepth++;
    const route = this.route;
    if (route.lane !== 1) this.ctx.lane = route.lane = 1;
    try {
      stepOn(buffer, from, t, last, budgetNs, step, nameOf, onTimed);
      if (asyncMade !== null) throw leftAsync('a ucode');
    } catch (e) {
      route.posted.length = 0;
      throw failure(e);
    } finally {
      inlineDepth--;
      this.ctx.leave();
    }
    if (route.posted.length > 0) route.deliver();
  }

  /** CF `cf` of import `imp` runs now (a natively stepped step whose ucode asks its context). */
  enter(cf: number, imp: number): void {
    this.ctx.enter(cf, this.imports[imp]!);
  }

  private traceFinish(t: Task, lane: number, cpu: boolean): void {
    this.fin = this.gate!.finish(this.tr!, this.start, t.imp, t.cf, lane + 1, cpu, this.now);
  }

}
