// The manifest written beside the per-thread files of a trace directory: what ran, where, how
// it ended, and the static tables the records refer to (code fragments, spawn sites).
import type { RunStatus } from './schema.js';

export type { TraceEvent, TraceEventKind } from './schema.js';

/** A spawn site of the program (a statement): what trace records' `site` numbers refer to. */
export interface SiteInfo {
  /** label (explicit, or `_l<line>`) */
  label: string;
  /** index into codes */
  code: number;
  kind: 'call' | 'subcall' | 'for' | 'while' | 'if';
  file: string;
  line: number;
  col: number;
  /** number of the statement in its block (part of CF global ids) */
  spawnNo: number;
}

export interface TraceManifest {
  format: 'luna-ts-trace';
  version: number;
  program: string;
  args: string[];
  nodes: number;
  /** worker threads (lanes) per node */
  threads: number;
  /** physical cores of the machine(s): nodes × threads above it oversubscribe */
  cores?: number;
  /** code-fragment index → name (imports by alias, subs by name, 'for'/'while'/'if' kinds) */
  codes: string[];
  /** spawn-site index → site (empty for traces made by the simulator) */
  sites?: SiteInfo[];
  /** scheduling policy of the run, e.g. "default", "priority", "replay" */
  policy?: string;
  clock: {
    /** true when CF CPU times come from an exact per-thread clock */
    cpuExact: boolean;
    /** per-node offset (ns) added to that node's wall times to put them on node 0's clock */
    offsets: number[];
  };
  startedAt: string;
  /** how the run ended ("running" while it runs or when it never wrote its end) */
  status?: RunStatus;
  /** the error of a failed or hung run */
  message?: string;
  versions: { lunaTs: string; node: string };
  /** files of this trace, relative to the directory */
  files: { node: number; thread: number; path: string }[];
}
