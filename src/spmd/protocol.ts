// What a rank's worker and its node's system thread tell each other (structured-cloned over the
// rank's MessagePort), and what a rank's worker starts with.

import type { DirectLink } from '../runtime/transport/types.js';

export interface RankInit {
  rank: number;
  threads: number;
  node: number;
  nodes: number;
  /** the node's board (board.ts) and its internal scratch array (collectives' partial results) */
  board: SharedArrayBuffer;
  scratch: SharedArrayBuffer;
  /** the bundled program (an ESM file) */
  program: string;
  /** argv of the program after its file */
  args: string[];
  /** trace: the directory and this rank's thread number on its node */
  trace?: { dir: string; thread: number };
  /** the run's clock origin (trace/clock.ts), decimal */
  origin: string;
  /** ms to spin before sleeping in a wait for ranks of this node */
  spinMs: number;
  /** ms to spin before sleeping in a wait for another node (a remote access, a barrier across nodes) */
  remoteSpinMs: number;
  /** CPUs the node may count on (its share of the machine): waits spin only while the node's busy threads fit */
  cpus: number;
  /** ms a wait spins when they do not fit */
  crowdedSpinMs: number;
  /**
   * per node, its link's socket as this rank may write it (null: this node, or no such link): the
   * node's last arriver at a barrier writes its ARRIVED frame (wire tag `arrivedWire`) itself
   */
  links: (DirectLink | null)[];
  arrivedWire: number;
  /** the wire tag of a remote read (GET), which a rank writes itself too (request id 2·rank + 1) */
  getWire: number;
  /**
   * the host segment (segment.ts), when every node of the run maps it: its descriptor in this
   * process and its size; the rank's barriers arrive, release and sleep there
   */
  segment?: { fd: number; bytes: number };
}

/** Requests a rank sends its node; those with an id get an Answer. */
export type RankRequest =
  | { k: 'alloc'; id: number; arr: number; length: number; block: number; type: ElemType; site: string }
  | { k: 'get'; id: number; arr: number; owner: number; local: number; count: number; size: number }
  | { k: 'put'; id: number; arr: number; owner: number; local: number; bytes: Uint8Array }
  | { k: 'inbox'; id: 0; buffer: SharedArrayBuffer }
  | { k: 'lock'; id: number; lock: number; attempt: boolean }
  | { k: 'unlock'; id: number; lock: number }
  | { k: 'flags'; id: 0; rank: number; words: number[] }
  | { k: 'arrive'; id: 0; phase: number; to?: number[] }
  | { k: 'park'; id: 0; rank: number; text: string; site: string; barrier?: { head: string; phase: number } }
  | { k: 'done'; id: 0; rank: number }
  | { k: 'fault'; id: 0; rank: number; message: string };

export interface Answer {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export const ELEM_TYPES = {
  f64: Float64Array, f32: Float32Array, i32: Int32Array, u32: Uint32Array,
  i16: Int16Array, u16: Uint16Array, i8: Int8Array, u8: Uint8Array,
} as const;
export type ElemType = keyof typeof ELEM_TYPES;
export type ElemArray = InstanceType<(typeof ELEM_TYPES)[ElemType]>;

/** the internal scratch array: per rank SCRATCH_SLOTS slots of SLOT_VALUES f64 */
export const SCRATCH_SLOTS = 8;
export const SLOT_VALUES = 512;
export const SCRATCH_ARRAY = 0;
