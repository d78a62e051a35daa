// Messages between a node's system thread and its worker threads.
import type { MessagePort } from 'node:worker_threads';
import type { ParamType } from '../lang/ast.js';
import type { DfValue } from '../ucode/value.js';

export interface WorkerInit {
  index: number;
  /** bundled ucode module (absent when the program imports nothing) */
  bundle?: string;
  imports: { symbol: string; alias: string; params: ParamType[] }[];
  /** Int32Array over a SharedArrayBuffer: per-worker sleep flags */
  states: SharedArrayBuffer;
  port: MessagePort;
  trace?: { dir: string; node: number; origin: string };
}

/** One atomic CF for a worker. */
export interface Task {
  cf: number;
  imp: number;
  /** aligned with params: DfValue for value, number|string for int/real/string, null for name */
  args: unknown[];
  /** DF keys aligned with params ('' for plain values): for getName() and messages */
  keys: string[];
  /** in-batch forwarding: [argIndex, taskIndex, outOrdinal, …] for inputs produced earlier in this batch */
  fwd?: number[];
}

export interface Batch { id: number; tasks: Task[] }

export interface BatchResult {
  worker: number;
  batch: number;
  /** per task: values of its name params in order (null = not set) */
  outs: (DfValue | null)[][];
  error?: { task: number; message: string; stack?: string };
  /** when tracing: finish time of each task */
  fin?: Float64Array;
}

export const SLEEPING = 1, AWAKE = 0;
