// A computation fragment instance on one node: a spawn site applied to an environment.
import type { Site } from '../program/compile.js';
import type { DfValue } from '../ucode/value.js';

export const NEW = 0, WAITING = 1, QUEUED = 2, DISPATCHED = 3, DONE = 4;

export class Cf {
  state = NEW;
  /** keys requested and not yet arrived */
  pend: string[] | null = null;
  /** values received for this CF: flat [key, value, key, value, …] (few inputs per CF) */
  got: (string | DfValue)[] | null = null;
  /** placement decided (locator evaluated, migration done) */
  placed = false;
  /** while: current counter; lazily unrolled for: next iteration */
  iter = 0;
  /** lazily unrolled for: last iteration */
  loopEnd = 0;
  /** atomic CFs: output keys and owners, filled at dispatch */
  outKeys: string[] | null = null;
  outOwners: number[] | null = null;
  /** replicated outputs: the nodes each gets posted to (indexed like outKeys) */
  replicas: number[][] | null = null;
  /** per output: request count (-1 unlimited, -2 drop, -3-k afterpush rule k); null = all -1 */
  outCounts: number[] | null = null;
  /** `>>` and `-->` actions after the call: flat [op, key, owner, …] */
  after: unknown[] | null = null;
  /** true when a worker executes it as the continuation of a CF in the same batch */
  chained = false;
  /** node this CF came from when it migrated here (-1 = spawned here) */
  from = -1;

  constructor(
    /** node-local number */
    readonly id: number,
    readonly site: Site,
    readonly env: unknown[],
    /** stable global id (`3_1_2`), '' for main or when ids are not needed */
    readonly gid: string,
  ) {}

  gotValue(key: string): DfValue | undefined {
    const g = this.got;
    if (g === null) return undefined;
    for (let i = 0; i < g.length; i += 2) if (g[i] === key) return g[i + 1] as DfValue;
    return undefined;
  }

  addGot(key: string, v: DfValue): void {
    (this.got ??= []).push(key, v);
  }

  isPending(key: string): boolean {
    return this.pend !== null && this.pend.includes(key);
  }

  /** Remove `key` from the pending list; true when nothing is pending any more. */
  arrived(key: string): boolean {
    const p = this.pend;
    if (p === null) return true;
    const i = p.indexOf(key);
    if (i >= 0) { p[i] = p[p.length - 1]!; p.pop(); }
    return p.length === 0;
  }
}
