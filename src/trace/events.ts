// The decoded form of trace records: what readers yield, what the simulator produces and what
// the analyses consume. Mirrors TraceSink (sink.ts) one-to-one; `node` and `thread` say who
// recorded it (thread 0 = the node's system thread, 1..T = its worker threads).
// Times: float64 nanoseconds on the run's common clock; `cpu` = thread CPU time in ns.

interface Base { t: number; node: number; thread: number }

export type TraceEvent =
  | (Base & { kind: 'programStart' })
  | (Base & { kind: 'programFinish' })
  | (Base & { kind: 'cfCreated'; cf: number; parentCf: number; code: number; gid: string; label: string })
  | (Base & { kind: 'cfMigrate'; cf: number; toNode: number })
  | (Base & { kind: 'cfReceive'; cf: number; fromNode: number; remoteCf: number; gid: string; code: number; label: string })
  | (Base & { kind: 'cfReady'; cf: number })
  | (Base & { kind: 'cfInput'; cf: number; df: number })
  | (Base & { kind: 'cfStart'; cpu: number; cf: number })
  | (Base & { kind: 'cfFinish'; cpu: number; cf: number })
  | (Base & { kind: 'dfName'; df: number; name: string })
  | (Base & { kind: 'dfComputed'; df: number; producerCf: number; bytes: number })
  | (Base & { kind: 'dfSendStart'; df: number; toNode: number; bytes: number })
  | (Base & { kind: 'dfSendEnd'; df: number; toNode: number })
  | (Base & { kind: 'dfReceive'; df: number; fromNode: number; bytes: number })
  | (Base & { kind: 'dfDeleted'; df: number })
  | (Base & { kind: 'sysBusy'; end: number })
  | (Base & { kind: 'readyQueue'; value: number })
  | (Base & { kind: 'liveBytes'; value: number });

export type TraceEventKind = TraceEvent['kind'];

/** The manifest written beside the per-thread files of a trace directory. */
export interface TraceManifest {
  format: 'luna-ts-trace';
  version: number;
  program: string;
  args: string[];
  nodes: number;
  /** worker threads per node */
  threads: number;
  /** code-fragment index → name (imports by alias, subs by name, 'for'/'while'/'if' kinds) */
  codes: string[];
  clock: {
    /** true when CF CPU times come from an exact per-thread clock */
    cpuExact: boolean;
    /** per-node offset (ns) added to that node's wall times to put them on node 0's clock */
    offsets: number[];
  };
  startedAt: string;
  versions: { lunaTs: string; node: string };
  /** files of this trace, relative to the directory */
  files: { node: number; thread: number; path: string }[];
}
