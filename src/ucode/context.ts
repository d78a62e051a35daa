// The ucode context: what a running ucode may know of its fragment and ask of its node. One
// object per thread, handed out by `context()` while a ucode runs (docs/language.md §7.10).
//
// A function of the API module rather than an extra argument or `this`: existing ucodes keep
// their signatures (and `luna check` keeps checking them against their imports), arrow
// functions and helpers deep inside a ucode reach it alike, and the runtime pays one field
// store per call to mark which fragment runs. The object lives in a global slot, not in a
// module variable: a ucode module bundles its own copy of this file.
import type { TraceSink, WaitKind } from '../trace/schema.js';
import { UcodeError } from './df.js';

export interface UcodeContext {
  /** the running CF's number on this node, as the trace records it (cfStart.cf) */
  readonly cf: number;
  /** this node's rank */
  readonly node: number;
  /** the lane of the thread running it, as the trace records it (1..T) */
  readonly lane: number;
  /** the CF's label with its indices, `x[3]` (asked of the node on first use: read it once) */
  readonly label: string;
  /** the CF's global id, `3_5_0` (asked of the node on first use) */
  readonly gid: string;
  /** what the CF's import declares: it may wait for its node (`: WAITS`, or a `block` parameter) */
  readonly waits: boolean;
  /** @internal whether the call holds blocks (its `block` parameters) */
  readonly holding?: boolean;
  /** this thread's trace sink (undefined: the run is not traced) */
  readonly trace: TraceSink | undefined;
  /** the run's clock, ns (the trace's time base) */
  now(): number;
  /**
   * Ask this node's system thread: the handler a layer registered for `kind` answers, now or
   * later, and the ucode waits for the answer (booked as a wait of the handler's kind). Only
   * for imports that may wait. Throws the handler's refusal as a RequestFailed.
   */
  request(kind: string, payload?: unknown): unknown;
  /** Tell this node's system thread something that needs no answer (any import may). */
  post(kind: string, payload?: unknown): void;
  /** Record a wait the ucode did by itself on [begin, end) (run-clock ns) for `resource`. */
  traceWait(kind: WaitKind, resource: string, begin: number, end: number): void;
}

/** A request its handler refused (reply.fail): the ucode may catch it (test `e.name`: modules bundle their own copy of this class). */
export class RequestFailed extends UcodeError {
  override readonly name = 'RequestFailed';
}

const SLOT = Symbol.for('luna-ts.ucode.context');
type Slot = { [SLOT]?: UcodeContext };

/** The context of the ucode running on this thread; throws outside a ucode. */
export function context(): UcodeContext {
  const c = (globalThis as Slot)[SLOT];
  if (c === undefined || c.cf < 0) throw new UcodeError('context() is available only while a ucode runs');
  return c;
}

/** @internal The runtime installs its thread's context (once per thread). */
export function installContext(c: UcodeContext): void {
  (globalThis as Slot)[SLOT] = c;
}
