// A worker's request port: a ucode asks its node's system thread (context().request) and waits
// for the answer the way a worker waits for a fed value — it spins briefly, then sleeps on its
// lane's flag, and keeps answering its peers' feed requests meanwhile, so a producer that the
// system thread's answer depends on is never stuck behind the waiting worker. The system thread
// posts the answer, counts it in the lane's answers flag and wakes the worker if it sleeps.
// Every wait is traced as a `wait` record of the kind and resource the handler declared.
import { abortFlag, answersFlag, AWAKE, SLEEPING, type WireAnswer, type WireRequest } from './protocol.js';
import type { Route } from './context.js';
import type { TraceSink } from '../../trace/schema.js';

/** How requests travel (a MessagePort to the system thread; tests may give another). */
export interface RequestChannel {
  post(m: WireRequest): void;
  /** the next answer that arrived, if any */
  receive(): WireAnswer | undefined;
}

export interface RequestPortOptions {
  /** the pool's shared flags, and this worker's lane */
  flags: Int32Array;
  lane: number;
  lanes: number;
  channel: RequestChannel;
  /** answer the peers' feed requests while waiting; whether something for them arrived */
  serve?: () => void;
  pending?: () => boolean;
  /** this thread's trace sink and clocks */
  trace?: TraceSink;
  now: () => number;
  cpuNs?: () => number;
  /** how long to spin before sleeping, ms (default REQUEST_SPIN_MS) */
  spinMs?: number;
}

/**
 * Spin before sleeping: the fed-value wait's 20 µs, measured there (exec/worker.ts). A handler
 * answering at once returns within one turn of the system thread's event loop, a few µs when
 * it is idle; a longer spin takes the core the system thread needs on 2 cores.
 */
export const REQUEST_SPIN_MS = 0.02;

export class RequestPort implements Route {
  /** how the last call got its answer: checks of the port, sleeps on the flag, wall ns waited */
  readonly last = { checks: 0, sleeps: 0, ns: 0 };
  private seq = 0;
  private answersSeen = 0;
  private readonly ABORT: number;
  private readonly ANSWERS: number;

  constructor(private readonly o: RequestPortOptions) {
    this.ABORT = abortFlag(o.lanes);
    this.ANSWERS = answersFlag(o.lanes, o.lane);
  }

  call(kind: string, payload: unknown, cf: number): WireAnswer | null {
    const id = ++this.seq;
    const o = this.o;
    const t0 = o.now();
    const c0 = o.trace && o.cpuNs ? o.cpuNs() : NaN;
    o.channel.post({ id, kind, payload, cf });
    const a = this.await(id);
    const t1 = o.now();
    this.last.ns = t1 - t0;
    // aborted: the kind is all that is known of what it waited for (0 = 'request')
    if (o.trace) o.trace.wait(t0, t1, o.cpuNs ? o.cpuNs() - c0 : NaN, cf, -1, a?.wait ?? 0, a?.resource ?? kind);
    return a;
  }

  post(kind: string, payload: unknown, cf: number): void {
    this.o.channel.post({ id: 0, kind, payload, cf, post: true });
  }

  private await(id: number): WireAnswer | null {
    const { flags, lane } = this.o;
    const last = this.last;
    last.checks = 0;
    last.sleeps = 0;
    const until = performance.now() + (this.o.spinMs ?? REQUEST_SPIN_MS);
    for (;;) {
      last.checks++;
      const a = this.take(id);
      if (a !== undefined) return a;
      this.o.serve?.(); // a producer of what the answer depends on may wait for us
      if (flags[this.ABORT] !== 0) return null;
      if (performance.now() < until) continue;
      Atomics.store(flags, lane, SLEEPING);
      if (Atomics.load(flags, this.ANSWERS) === this.answersSeen && !this.o.pending?.() && flags[this.ABORT] === 0) {
        Atomics.wait(flags, lane, SLEEPING);
        last.sleeps++;
      }
      Atomics.store(flags, lane, AWAKE);
    }
  }

  /** The answer to request `id`, if it came (answers to requests given up on are dropped). */
  private take(id: number): WireAnswer | undefined {
    const n = Atomics.load(this.o.flags, this.ANSWERS);
    if (n === this.answersSeen) return undefined;
    this.answersSeen = n;
    let found: WireAnswer | undefined;
    for (let m = this.o.channel.receive(); m !== undefined; m = this.o.channel.receive()) if (m.id === id) found = m;
    return found;
  }
}
