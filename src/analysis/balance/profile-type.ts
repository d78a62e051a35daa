// The profile a balancer reads (profile.ts reads it from a trace): its columns, declared apart so
// that the readers (profile.ts, read-columns.ts) and the balancer's modules share it without a
// circle between the two readers.
import type { Names } from './names.js';
export interface Profile {
  program: string;
  args: string[];
  /** nodes and worker threads per node of the traced run */
  nodes: number;
  threads: number;
  /** the traced run's policy (a distribution applied shows here) */
  policy: string;
  /** atomic CFs, in the order they finished */
  n: number;
  /** global id of each (names.ts) */
  gid: Names;
  /** node each ran on */
  node: Int32Array;
  /** node that spawned each (where its cfCreated was written; differs from `node` when it was shipped) */
  spawn?: Int32Array;
  /** execution interval, ns from the start of the run */
  start: Float64Array;
  finish: Float64Array;
  /** creation, ns from the start of the run (CFs fed by no other CF cannot start before it) */
  created: Float64Array;
  /** thread CPU time of each execution, ns (its work, without the time the thread was descheduled) */
  cpu: Float64Array;
  /** the CPU clock was exact on every node (else cpu is an estimate) */
  cpuExact: boolean;
  code: Int32Array;
  /** dependences, by consumer (CSR): producers of CF i's inputs are depFrom[depStart[i] .. depStart[i+1]) */
  depStart: Int32Array;
  depFrom: Int32Array;
  /** the DF each dependence reads (index into the DF columns) */
  depDf: Int32Array;
  /** DFs written by atomic CFs: key, writer, bytes, the node that kept it in the traced run */
  dfs: number;
  /** key of each DF (names.ts) */
  dfKey: Names;
  dfWriter: Int32Array;
  dfBytes: Float64Array;
  dfOwner: Int32Array;
  /** DF transfers between nodes (one per hop): bytes and time from send to arrival */
  xferBytes: Float64Array;
  xferNs: Float64Array;
  /** sender's time from the start of each hop's send until the DF was handed to the network, ns */
  sendNs?: Float64Array;
  /** per node: the system thread's busy (wall) time, and its workers' CPU over wall time (how much of a core they got) */
  sysWallNs?: Float64Array;
  workerShare?: Float64Array;
  /** host of each node (-1: unknown) and the cores of each host (manifest.machines) */
  hostOf?: Int32Array;
  hostCores?: number[];
  /** end of the run, ns from its start */
  tEnd: number;
  warnings: string[];
}
