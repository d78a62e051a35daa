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

/** One machine of a run. */
export interface MachineInfo {
  host: string;
  /** CPUs the run's processes there could use: the union of its nodes' CPU sets (hardware threads, honouring CPU affinity) */
  cores: number;
  /** nodes (ranks) that ran on it */
  nodes: number[];
  /** CPUs the machine has online (absent in older traces) */
  cpus?: number;
  /** per node of `nodes`: the CPUs that node's process could use — fewer than `cpus` when a launcher bound it (absent in older traces) */
  nodeCpus?: number[];
}

export interface TraceManifest {
  format: 'luna-ts-trace';
  version: number;
  program: string;
  args: string[];
  nodes: number;
  /** worker threads (lanes) per node */
  threads: number;
  /** CPUs of the launching machine (node 0's); `machines` says where every node ran */
  cores?: number;
  /** what started the nodes: `local` (luna run), `mpirun`, `srun`, `pmi` (absent in older traces) */
  launcher?: string;
  /**
   * The machines the nodes ran on: host name, the CPUs its processes could use (hardware
   * threads, honoring CPU affinity) and which nodes ran there. More busy threads than `cores`
   * on one machine oversubscribe it. Absent in older traces; a node listed nowhere ran on a
   * machine the launcher could not ask (the analysis then assumes nothing about it).
   */
  machines?: MachineInfo[];
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
