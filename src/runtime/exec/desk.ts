// The request desk of a node, on its system thread: the other end of every worker's request
// port. A layer registers a handler per request kind (the dynamic array, the SPMD layer, a
// test's resource); the desk hands it each request with a reply it answers, at once or later,
// exactly once. A refusal (reply.fail) reaches the ucode as an exception it may catch; a handler
// that throws is a fault of the run naming the CF and the request.
import { WAIT_KINDS, type WaitKind } from '../../trace/schema.js';
import { IDENTITY } from './context.js';
import { T_INT, T_JS, T_RAW } from '../../ucode/value.js';
import { rawAwaited, rawLet } from './shm.js';
import { ASK_LATER, LATER_KEY } from '../../ucode/dda.js';
import type { Task, WireAnswer, WireRequest } from './protocol.js';
import type { DfValue } from '../../ucode/value.js';

/** A request as its handler sees it. */
export interface Request {
  readonly kind: string;
  readonly payload: unknown;
  /** this node's rank, the lane (0-based) of the worker that asks, the CF it runs (node-local number) */
  readonly node: number;
  readonly lane: number;
  readonly cf: number;
  /** the asking CF in words: `CF x[3] (ucode c_f, id 3_1) at prog.fa:9:5` */
  who(): string;
}

export interface Reply {
  answer(value?: unknown): void;
  /** refuse: the ucode gets a RequestFailed with `message` */
  fail(message: string): void;
}

export interface RequestHandler {
  /** what a wait for these requests is (WAIT_KINDS), as the trace and SLOW book it */
  readonly wait: WaitKind;
  /** the resource a request is for, as the trace and hang reports name it (default: the kind) */
  resource?(payload: unknown): string;
  /** answer now or later, exactly once (a post's reply goes nowhere) */
  handle(r: Request, reply: Reply): void;
  /**
   * Whether the handler is working on an answer it owes by itself (a timer, a file, a thread):
   * the node is then busy. A handler that waits for something else of the run — a message on a
   * channel (counted by the control protocol), another CF's release — is not busy. Absent:
   * never busy. A handler that stops being busy without answering calls desk.wake().
   */
  busy?(): boolean;
}

/**
 * A code fragment the desk answers itself: a CF of the import named by its symbol is not run by
 * a ucode that asks and waits (holding its worker for the whole wait) but asked here by the
 * system thread, and completed when the answer comes. For imports that do nothing but ask (the
 * runtime's own, e.g. a dynamic array's global count): the same request, handler and answer.
 */
export interface DeskCall {
  /** the request kind it asks */
  readonly kind: string;
  /** the request's payload from the task's arguments (throws a message naming the misuse) */
  payload(args: readonly unknown[], keys: readonly string[]): unknown;
  /** the CF's outputs (aligned with its params) from the answer */
  outputs(value: unknown): (DfValue | null)[];
}

/** What an asked CF waited for: the kind (indexes WAIT_KINDS) and resource its handler declared. */
export interface Waited { readonly wait: number; readonly resource: string }

/** How an asked CF ends (RequestDesk.ask): its outputs, or null and why; what it waited for. */
export type AskDone = (outs: (DfValue | null)[] | null, error?: string, waited?: Waited) => void;

/** What the desk needs of its node. */
export interface DeskHost {
  readonly node: number;
  /** the label and global id of running CF `cf`, and the CF in words */
  identify(cf: number): { label: string; gid: string; text: string; origin?: { file: string; line: number; col: number } };
  /** fail the run, blaming running CF `cf` */
  fault(cf: number, message: string): void;
}

/**
 * What a layer gives a node's executors: its request handlers, registered on the node's desk,
 * and the modules every worker thread imports before its first CF (they register the kinds of
 * blocks the layer provides, see blocks.ts).
 */
export interface UcodeLayer {
  register?(desk: RequestDesk): void;
  workerModules?: readonly string[];
}

/** What a ucode's ask without waiting (ucode/dda.ts ASK_LATER) carries: the request, and the token its output's marker holds. */
interface LaterRequest { kind: string; payload: unknown; token: number }

/** A request being handled, for hang reports: `busy` whether its handler works on it by itself. */
export interface Outstanding { lane: number; cf: number; kind: string; resource: string; since: number; busy: boolean }

/**
 * A layer's reservation of one of its blocks for a CF about to be sent to a worker (exec/blocks.ts
 * `block` parameters): the handle the worker gets instead, carrying the block as granted, or null
 * (not free now: the worker asks for it as the CF starts, as without a reservation). The worker
 * claims the reservation as the CF starts; until then the layer may take it back for anyone who
 * asks for the block (a CF running, a global operation), so a CF waiting on a lane never holds one.
 */
export type BlockReserver = (handle: { block: string; id: string | number }, cf: number, who: () => string) => object | null;

export class RequestDesk {
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly reservers = new Map<string, BlockReserver>();
  private readonly calls = new Map<string, DeskCall>();
  private readonly open = new Map<number, { lane: number; cf: number; kind: string; resource: string; since: number; h: RequestHandler }>();
  private nextOpen = 0;
  /** ASK_LATER requests by `${lane}:${token}`: the answer once it came, the CF's completion once its worker returned it */
  private readonly later = new Map<string, { answer?: WireAnswer; done?: (a: WireAnswer) => void; arrived?: boolean }>();
  host: DeskHost | undefined;
  /** called when a ucode starts waiting for an answer, or a handler stops being busy (the node may be idle now) */
  onWait: () => void = () => {};

  /** `send(lane, answer)`: how answers reach the workers (the pool's request ports). */
  constructor(private readonly send: (lane: number, a: WireAnswer) => void) {}

  register(kind: string, h: RequestHandler): void {
    if (kind === IDENTITY) throw new Error(`request kind '${kind}' is the runtime's own`);
    if (this.handlers.has(kind)) throw new Error(`two handlers for request kind '${kind}'`);
    if (!WAIT_KINDS.includes(h.wait)) throw new Error(`request kind '${kind}': unknown wait kind '${String(h.wait)}'`);
    this.handlers.set(kind, h);
  }

  /** CFs of import `symbol` are asked by the system thread (ask), not run on a worker. */
  registerCall(symbol: string, c: DeskCall): void {
    if (this.calls.has(symbol)) throw new Error(`two desk calls for import '${symbol}'`);
    this.calls.set(symbol, c);
  }

  /** Blocks of kind `kind` (a block handle's `block`) are reserved by `r` for the CFs sent to workers (reserve). */
  registerReserver(kind: string, r: BlockReserver): void {
    if (this.reservers.has(kind)) throw new Error(`two reservers for blocks of kind '${kind}'`);
    this.reservers.set(kind, r);
  }

  /**
   * Before `tasks` leave for a worker: each `block` argument (`blockParams[t.imp]`: the import's
   * block parameters, null when it has none) whose layer reserves it now is replaced by the
   * reserved handle, so the CF starts without a round trip through this thread for its block.
   */
  reserve(tasks: readonly Task[], blockParams: readonly (readonly number[] | null)[]): void {
    if (this.reservers.size === 0) return;
    for (let k = 0; k < tasks.length; k++) {
      const t = tasks[k]!, ps = blockParams[t.imp];
      if (ps == null) continue;
      for (let j = 0; j < ps.length; j++) {
        const i = ps[j]!, v = t.args[i] as DfValue | null | undefined;
        if (v == null || v.t !== T_JS || typeof v.v !== 'object' || v.v === null) continue;
        const h = v.v as { block?: unknown; id?: unknown };
        const r = typeof h.block === 'string' ? this.reservers.get(h.block) : undefined;
        if (r === undefined || (typeof h.id !== 'string' && typeof h.id !== 'number')) continue;
        const cf = t.cf;
        const reserved = r(h as { block: string; id: string | number }, cf, () => this.host?.identify(cf).text ?? `CF ${cf}`);
        // a new value: the one in the store stays the plain handle
        if (reserved !== null) t.args[i] = { t: T_JS, v: reserved };
      }
    }
  }

  /** Whether CFs of import `symbol` are asked here (ask) rather than run. */
  answers(symbol: string): boolean {
    return this.calls.has(symbol);
  }

  /**
   * Ask for task `t` of import `symbol` (answers(symbol)) on the system thread: `done` gets its
   * outputs when the handler answers, or the refusal (as the ucode's RequestFailed would say it),
   * and what the CF waited for, as a worker's wait record would name it. No worker waits
   * meanwhile; the request is outstanding (hang reports: lane -1).
   */
  ask(symbol: string, t: Task, done: AskDone): void {
    const c = this.calls.get(symbol)!;
    let payload: unknown;
    try { payload = c.payload(t.args, t.keys); } catch (e) { done(null, e instanceof Error ? e.message : String(e)); return; }
    this.handle(-1, { id: 0, kind: c.kind, payload, cf: t.cf }, (a) => {
      if (a.ok) done(c.outputs(a.value), undefined, a);
      else done(null, `request '${c.kind}' for ${a.resource} refused: ${a.error ?? 'no reason given'}`, a);
    });
  }

  /** Requests handed to handlers and not answered yet (what waits for what, for hang reports). */
  outstanding(): Outstanding[] {
    return [...this.open.values()].map(({ h, ...o }) => ({ ...o, busy: h.busy?.() ?? false }));
  }

  /** Requests waiting for an answer. */
  get waiting(): number {
    return this.open.size;
  }

  /** Whether the ucode of lane `lane` waits for an answer (its worker does nothing else meanwhile). */
  blocked(lane: number): boolean {
    for (const o of this.open.values()) if (o.lane === lane) return true;
    return false;
  }

  /**
   * Whether a handler works on an answer it owes by itself, or a request asked without waiting is
   * still on its way: the worker returned the CF (settle) before the request port brought its
   * ASK_LATER here (two channels, no order between them). It will come: the node is not idle.
   */
  busy(): boolean {
    for (const o of this.open.values()) if (o.h.busy?.()) return true;
    for (const e of this.later.values()) if (e.done !== undefined && e.arrived !== true) return true;
    return false;
  }

  /** A handler stopped being busy without answering: the node may have nothing left to do. */
  wake(): void {
    this.onWait();
  }

  /** A request from the worker of lane `lane`. */
  receive(lane: number, m: WireRequest): void {
    if (m.kind === ASK_LATER && m.post) { this.askLater(lane, m); return; }
    this.handle(lane, m, (a) => this.send(lane, a));
  }

  /**
   * A ucode asked without waiting (ASK_LATER): handled as a request of no lane (its worker runs
   * other CFs meanwhile; hang reports name the CF), its answer kept for settle().
   */
  private askLater(lane: number, m: WireRequest): void {
    const r = m.payload as LaterRequest;
    const key = `${lane}:${r.token}`;
    const seen = this.later.get(key);
    if (seen) seen.arrived = true; else this.later.set(key, { arrived: true });
    this.handle(-1, { id: 0, kind: r.kind, payload: r.payload, cf: m.cf }, (a) => {
      const e = this.later.get(key);
      if (e?.done) { this.later.delete(key); e.done(a); } else this.later.set(key, { answer: a, arrived: true });
    });
  }

  /**
   * The worker of lane `lane` returned CF outputs `outs`: when some hold LATER_KEY markers (the
   * ucode asked without waiting), `done` gets the outputs with the answers' values in their
   * place once every answer has come (or the first refusal, in the ucode's RequestFailed words)
   * and true is returned; false when none does (the CF is complete as it is).
   */
  settle(lane: number, outs: (DfValue | null)[], done: (outs: (DfValue | null)[] | null, error?: string) => void): boolean {
    let waiting = 0, failed = false;
    // its raw outputs are held until it completes (shm.ts rawAwaited): its batch is booked now
    let raws: Uint8Array[] | undefined;
    const complete = (o: (DfValue | null)[] | null, error?: string): void => {
      try { done(o, error); } finally { if (raws !== undefined) for (const v of raws) rawLet(v); }
    };
    for (let j = 0; j < outs.length; j++) {
      const token = laterToken(outs[j]);
      if (token === undefined) continue;
      waiting++;
      const key = `${lane}:${token}`;
      const got = (a: WireAnswer): void => {
        if (failed) return;
        if (!a.ok) { failed = true; complete(null, `the request for ${a.resource} refused: ${a.error ?? 'no reason given'}`); return; }
        outs[j] = toValue(a.value);
        if (--waiting === 0) complete(outs);
      };
      const e = this.later.get(key);
      if (e?.answer) { this.later.delete(key); queueMicrotask(() => got(e.answer!)); } else this.later.set(key, { done: got, arrived: e?.arrived });
    }
    if (waiting === 0) return false;
    for (let j = 0; j < outs.length; j++) {
      const v = outs[j];
      if (v != null && v.t === T_RAW) { rawAwaited(v.v); (raws ??= []).push(v.v); }
    }
    return true;
  }
  private handle(lane: number, m: WireRequest, send: (a: WireAnswer) => void): void {
    const host = this.host;
    if (host === undefined) throw new Error('request desk used before its node was attached');
    if (m.kind === IDENTITY) {
      const { label, gid } = host.identify(m.cf);
      send({ id: m.id, ok: true, value: { label, gid }, wait: 0, resource: 'the identity of its CF' });
      return;
    }
    const h = this.handlers.get(m.kind);
    const resource = h?.resource?.(m.payload) ?? m.kind;
    const wait = h === undefined ? 0 : WAIT_KINDS.indexOf(h.wait);
    if (h === undefined) {
      if (!m.post) send({ id: m.id, ok: false, error: `no layer handles requests of kind '${m.kind}' on node ${host.node}`, wait, resource });
      else host.fault(m.cf, `a ucode posted '${m.kind}', which no layer handles on node ${host.node}`);
      return;
    }
    const key = this.nextOpen++;
    if (!m.post) this.open.set(key, { lane, cf: m.cf, kind: m.kind, resource, since: performance.now(), h });
    let done = false;
    const finish = (a: Omit<WireAnswer, 'id' | 'wait' | 'resource'>): void => {
      if (done) throw new Error(`the handler of '${m.kind}' answered twice`);
      done = true;
      if (m.post) return;
      this.open.delete(key);
      send({ id: m.id, wait, resource, ...a });
    };
    const req: Request = { kind: m.kind, payload: m.payload, node: host.node, lane, cf: m.cf, who: () => host.identify(m.cf).text };
    try {
      h.handle(req, { answer: (value) => finish({ ok: true, value }), fail: (error) => finish({ ok: false, error }) });
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      host.fault(m.cf, `the handler of request '${m.kind}' for ${resource} failed: ${why}`);
      // the run fails: the worker stops waiting (its CF is dropped with the run)
      if (!done) finish({ ok: false, error: why });
    }
    // not answered at once: the asking worker waits, and the node may have nothing else to do
    if (!done && !m.post) this.onWait();
  }
}

/** The token of an output that the node sets later (a LATER_KEY marker), else undefined. */
function laterToken(v: DfValue | null | undefined): number | undefined {
  if (v == null || v.t !== T_JS || typeof v.v !== 'object' || v.v === null) return undefined;
  const t = (v.v as Record<string, unknown>)[LATER_KEY];
  return typeof t === 'number' ? t : undefined;
}

/** An answer as a DF value: numbers as ints when whole (a count), else as JS values. */
function toValue(x: unknown): DfValue {
  return typeof x === 'number' && Number.isInteger(x) ? { t: T_INT, v: x | 0 } : { t: T_JS, v: x };
}
