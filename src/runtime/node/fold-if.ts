// An `if` decided where it is spawned. A structured CF costs the system thread its making, a turn
// in the queue and an examination; an `if` whose condition reads no DF and that carries no rule of
// its own would spend all that only to evaluate a condition already known when its loop iteration
// or block is spawned. The spawner evaluates such a condition at once and spawns the body's
// statements in the `if`'s place, with the ids, environment and priority the `if` would have given
// them (the PIC at the seed's size: 3 336 of the 4 352 CFs its system thread examined were such
// `if`s). A condition that reads a DF, or fails, leaves the `if` a CF as before: it waits for the
// DF, or its examination reports the failure naming it.
import type { IfSite, Site } from '../../program/compile.js';
import { truthy, type Frame } from '../../program/expr.js';
import type { DfValue } from '../../ucode/value.js';

const NO_ENV: unknown[] = [];

/**
 * Whether `site` is an `if` the spawner may decide: no rule of its own (locator, priority,
 * `stealable`, `request`, `delete`, `>>`: each needs the `if` as a CF) and no DF declared in its
 * body (their keys take the `if`'s block id, which a spawned CF makes).
 */
export function decidable(site: Site): site is IfSite {
  return site.kind === 'if' && site.locator === undefined && site.priority === undefined && !site.stealable
    && site.requests.length === 0 && site.deletes.length === 0 && site.setdfs.length === 0 && site.body.dfs.length === 0;
}

/** A frame for a condition over the environment alone: any DF read marks it undecided. */
export class ConditionFrame implements Frame {
  env: unknown[] = NO_ENV;
  missing = false;
  located = 0;
  constructor(readonly size: number, readonly self: number) {}

  read(): DfValue | undefined {
    this.missing = true;
    return undefined;
  }

  /** `site`'s condition over `env`: true or false, or undefined when it reads a DF or fails. */
  decide(site: IfSite, env: unknown[]): boolean | undefined {
    this.env = env;
    this.missing = false;
    try {
      const go = truthy(site.cond, this);
      return this.missing ? undefined : go;
    } catch {
      // the CF's examination evaluates it again and reports the failure with its position
      return undefined;
    } finally {
      this.env = NO_ENV;
    }
  }
}
