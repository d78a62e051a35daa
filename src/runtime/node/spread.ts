// Spread loops (see SchedulingPolicy.spreadLoop): a `for` loop every node of a run unrolls, each
// spawning only the CFs placed there, instead of one node spawning them all and migrating the
// others'. Placement is decided here, before a CF exists, by the one placement question
// (place.ts) with a frame that has no DF to read.
import type { Site } from '../../program/compile.js';
import type { Frame } from '../../program/expr.js';
import type { SchedulingPolicy } from '../policy/types.js';
import { placeOf, UnbornView } from './place.js';

/**
 * A loop spread over the nodes. A CF whose placement needs a DF is spawned where the loop began
 * and placed as usual. (An iteration's block DFs need nothing agreed: their keys are made of the
 * iteration's global id, the same on every node.)
 */
export interface Spread {
  /** the node where the loop began */
  readonly origin: number;
}

/** Places CFs from the environment alone: any DF read makes it `missing`. */
export class Placer implements Frame {
  env: unknown[] = [];
  missing = false;
  located = 0;
  private readonly view = new UnbornView();
  constructor(readonly size: number, readonly self: number, private readonly policy: SchedulingPolicy) {}

  read(): undefined {
    this.missing = true;
    return undefined;
  }

  /**
   * The node CF site `s` of iteration `iter` (in the block with id prefix `prefix`) runs on in
   * `env`, when that needs no DF; -1 when it does (or its locator fails: the CF is then spawned
   * where the loop began, and examining it there says why).
   */
  place(s: Site, env: unknown[], prefix: string, iter: number): number {
    this.env = env;
    this.missing = false;
    let at: number;
    try { at = placeOf(this.policy, this.view.set(s, prefix, iter), this); } catch { return -1; }
    return this.missing ? -1 : at;
  }
}
