// Spread loops (see SchedulingPolicy.spreadLoop): a `for` loop every node of a run unrolls, each
// spawning only the CFs its locators place there, instead of one node spawning them all and
// migrating the others'. Placement is decided here, before a CF exists, from its environment.
import type { Site } from '../../program/compile.js';
import type { Frame } from '../../program/expr.js';

/**
 * A loop spread over the nodes. A CF whose placement needs a DF is spawned where the loop began
 * and placed as usual.
 */
export interface Spread {
  /** the node where the loop began */
  readonly origin: number;
  /** block DFs of iteration i are numbered dfBase + (i − first) on the origin: one name everywhere */
  readonly dfBase: number;
  readonly first: number;
}

/** Evaluates locators from the environment alone: any DF read makes it `missing`. */
export class Placer implements Frame {
  env: unknown[] = [];
  missing = false;
  constructor(readonly size: number, readonly self: number) {}

  read(): undefined {
    this.missing = true;
    return undefined;
  }

  /**
   * The node CF site `s` runs on in `env` when its locator needs no DF; -1 when it does (or
   * fails: the CF is then spawned where the loop began, and examining it there says why).
   */
  place(s: Site, env: unknown[]): number {
    if (!s.locator) return 0;
    this.env = env;
    this.missing = false;
    let at: number;
    try { at = s.locator(this); } catch { return -1; }
    return this.missing ? -1 : at;
  }
}
