// A run-time error of the program: it stops the run and names the fragment, node and cause.
import type { Site } from '../../program/compile.js';
import type { Origin } from '../../lang/source.js';
import type { Cf } from './fragment.js';

/** A CF known only by its spawn site and global id: one that ran on another node. */
export interface CfRef { site: Site; gid: string }

export class RunFault extends Error {
  /**
   * `cf`: the fragment to blame, on this node; `node`: where it ran when not here; `at`: the
   * fragment when it is known only by reference (it ran on `node`).
   */
  constructor(message: string, readonly cf?: Cf, readonly node?: number, readonly at?: CfRef) { super(message); }

  /** The same fault attributed to `cf` when it does not name a fragment yet. */
  static blame(e: unknown, cf: Cf): unknown {
    return e instanceof RunFault && !e.cf && !e.at ? new RunFault(e.message, cf, e.node) : e;
  }
}

/**
 * A request from another node that the owner of the DF refuses (it was freed by its
 * `req_count`, or destroyed before it was computed): the requesting node reports it, naming its
 * own CF.
 */
export class RequestRefused extends RunFault {}

export function where(o: Origin): string {
  return o.line > 0 ? `${o.file}:${o.line}:${o.col}` : o.file;
}

/** `CF w[2] (ucode c_set, id 3_2) at prog.fa:8:5`; without `gid` when the instance is not known. */
export function describeSite(s: Site, label: string, gid?: string): string {
  const what = s.kind === 'call' ? `ucode ${s.imp.symbol}` : s.kind === 'subcall' ? `sub ${s.target.name}` : s.kind;
  const id = gid === undefined ? '' : `, id ${gid === '' ? 'main' : gid}`;
  return `CF ${label} (${what}${id}) at ${where(s.origin)}`;
}
