// A run-time error of the program: it stops the run and names the fragment, node and cause.
import type { Cf } from './fragment.js';

export class RunFault extends Error {
  constructor(message: string, readonly cf?: Cf, readonly node?: number) { super(message); }

  /** The same fault attributed to `cf` when it does not name a fragment yet. */
  static blame(e: unknown, cf: Cf): unknown {
    return e instanceof RunFault && !e.cf ? new RunFault(e.message, cf, e.node) : e;
  }
}
