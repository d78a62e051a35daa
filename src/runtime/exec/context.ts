// The ucode context of one thread (src/ucode/context.ts says what a ucode sees): which CF runs,
// the thread's trace sink, what the CF's import may do, and the route to the node's system
// thread. The calling convention marks the fragment that runs (enter/leave); everything else is
// fixed per thread, so a call pays two field stores for it.
import { WAIT_KINDS, type TraceSink, type WaitKind } from '../../trace/schema.js';
import { RequestFailed, type UcodeContext } from '../../ucode/context.js';
import { UcodeError } from '../../ucode/df.js';
import { ContractError, RunAborted } from './contract.js';
import type { WireAnswer } from './protocol.js';
import type { Holding } from './blocks.js';

/** How a thread reaches its node's system thread (a worker's request port, or the desk itself). */
export interface Route {
  /** Send a request and wait for its answer (the route books the wait); null: the run aborted meanwhile. */
  call(kind: string, payload: unknown, cf: number): WireAnswer | null;
  /** Send a request that wants no answer. */
  post(kind: string, payload: unknown, cf: number): void;
}

/** The request kind the desk answers itself: the running CF's label and global id. */
export const IDENTITY = 'luna.cf';

/** What a context needs of the import being called. */
export interface CalledImport { readonly symbol: string; readonly waits: boolean }

export class ThreadContext implements UcodeContext {
  cf = -1;
  /** the trace's lane of the call in progress (a worker's is fixed; the system thread borrows lanes) */
  lane: number;
  private def: CalledImport | null = null;
  /** blocks held by the call in progress, released when it ends */
  readonly held: Holding[] = [];
  private identityOf = -1;
  private identity: { label: string; gid: string } = { label: '', gid: '' };

  constructor(
    readonly node: number,
    lane: number,
    readonly trace: TraceSink | undefined,
    private readonly route: Route,
    readonly now: () => number,
  ) {
    this.lane = lane;
  }

  /** CF `cf` of import `def` starts on this thread. */
  enter(cf: number, def: CalledImport): void {
    this.cf = cf;
    this.def = def;
  }

  /** The call ended (either way): its blocks are released, the context is idle. */
  leave(): void {
    const held = this.held;
    if (held.length > 0) releaseAll(held);
    this.cf = -1;
    this.def = null;
  }

  get waits(): boolean {
    return this.def?.waits ?? false;
  }

  get holding(): boolean {
    return this.held.length > 0;
  }

  get label(): string {
    return this.identify().label;
  }

  get gid(): string {
    return this.identify().gid;
  }

  request(kind: string, payload?: unknown): unknown {
    const def = this.running('request');
    if (!def.waits) {
      throw new ContractError(`ucode ${def.symbol} asked its node for '${kind}', but its import does not say it may wait: add ': WAITS' to the import (a ucode that waits never runs on the system thread, which answers it)`);
    }
    return this.ask(kind, payload);
  }

  post(kind: string, payload?: unknown): void {
    this.running('post');
    this.route.post(kind, payload, this.cf);
  }

  traceWait(kind: WaitKind, resource: string, begin: number, end: number): void {
    this.running('traceWait');
    const k = WAIT_KINDS.indexOf(kind);
    if (k < 0) throw new UcodeError(`traceWait: unknown wait kind '${String(kind)}' (one of ${WAIT_KINDS.join(', ')})`);
    if (!(end >= begin)) throw new UcodeError(`traceWait: the wait for ${resource} ends (${end}) before it begins (${begin})`);
    this.trace?.wait(begin, end, NaN, this.cf, -1, k, resource);
  }

  /** Ask the node and return the answer's value; a refusal is thrown. */
  ask(kind: string, payload: unknown): unknown {
    const a = this.route.call(kind, payload, this.cf);
    if (a === null) throw new RunAborted();
    if (!a.ok) throw new RequestFailed(`request '${kind}' for ${a.resource} refused: ${a.error ?? 'no reason given'}`);
    return a.value;
  }

  private running(what: string): CalledImport {
    if (this.def === null) throw new UcodeError(`${what}() of the ucode context outside a ucode call`);
    return this.def;
  }

  private identify(): { label: string; gid: string } {
    this.running('identity');
    if (this.identityOf !== this.cf) {
      this.identity = this.ask(IDENTITY, undefined) as { label: string; gid: string };
      this.identityOf = this.cf;
    }
    return this.identity;
  }
}

/** Release blocks in the reverse order of holding; the first error is thrown once all are released. */
function releaseAll(held: Holding[]): void {
  let first: unknown;
  while (held.length > 0) {
    try { held.pop()!.block.release(); } catch (e) { first ??= e; }
  }
  if (first !== undefined) throw first;
}

/** A context with no node behind it (executors built without one): asking throws. */
export function detachedContext(): ThreadContext {
  const none = (): never => { throw new ContractError('this executor has no request port: the ucode cannot ask its node anything here'); };
  return new ThreadContext(0, 0, undefined, { call: none, post: none }, () => performance.now() * 1e6);
}
