// The host segment: memory that the node processes of one machine share (a file under /dev/shm
// mapped by every node and every rank, native/shm.c), for the synchronisation among processes.
// Ranks arrive and release a barrier phase there as the ranks of one process do on their node's
// board, and sleep on its BARRIER word with the kernel's futex, which a rank of any process wakes;
// their collectives' counters (entry, data, exit, kind) are there too, with an EPOCH word their
// waits sleep on. Nothing travels through the nodes' sockets or system threads for them, so a
// barrier across processes costs what one within a process does: a spin on a word another core
// writes, or one wake-up.
//
// Node 0 creates the file and tells the others its path and machine; a node on the same machine
// opens it and says so; when every node did, node 0 turns the segment on for all (HOSTMODE) and
// unlinks the file (the nodes hold descriptors, their ranks map those). Otherwise (another host,
// no addon, LUNA_SPMD_SHM=0) the barrier goes through the sockets as before (docs/spmd.md).
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadAddon } from '../core/addon.js';

interface ShmAddon {
  open(path: string, bytes: number, create: boolean): number;
  unlink(path: string): number;
  close(fd: number): number;
  map(fd: number, bytes: number): ArrayBuffer | number;
  wait(buffer: ArrayBuffer, index: number, expected: number, ms: number): number;
  wake(buffer: ArrayBuffer, index: number, count: number): number;
}

let addon: ShmAddon | null | undefined;
function shm(): ShmAddon | null {
  if (addon === undefined) addon = process.platform === 'linux' ? loadAddon<ShmAddon>('luna_shm') ?? null : null;
  return addon;
}

/** Whether the host segment can be used here: the addon is built and LUNA_SPMD_SHM is not 0. */
export function segmentsAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LUNA_SPMD_SHM !== '0' && shm() !== null;
}

// Words (Int32). Each rank's arrival has a cache line of its own: ranks of different cores write
// them at once, and a shared line would bounce between the cores at every arrival.
const MAGIC = 0;
/** the last barrier phase every rank of the run arrived at (ranks spin and sleep on it) */
export const SEG_BARRIER = 1;
/** ranks of any node asleep on SEG_BARRIER now: a release wakes only when there are some */
export const SEG_SLEEPERS = 2;
/** bumped on each change of a rank's collective counters (collective waits sleep on it) */
export const SEG_EPOCH = 3;
/** ranks of any node asleep on SEG_EPOCH now */
export const SEG_EPOCH_SLEEPERS = 4;
const HEADER = 16;
const LINE = 16;
/** a rank's words: its barrier phase, then its collective counters at their board offsets (board.ts) */
const RANK_LINE = 32;
const MAGIC_VALUE = 0x4c53484d; // "LSHM"

/** the last barrier phase node n's ranks all arrived at (the nodes count these arrivals as messages) */
export function segNodePhase(n: number): number {
  return HEADER + 2 * n;
}

/** the changes node n's ranks made to their collective counters (counted as messages too) */
export function segNodeChanges(n: number): number {
  return HEADER + 2 * n + 1;
}

/** rank t's line: its last barrier phase at +0, its board word w (CENTRY, CDATA, CEXIT, CKIND…) at +w */
export function segRank(nodes: number, t: number): number {
  return HEADER + Math.ceil((2 * nodes) / LINE) * LINE + t * RANK_LINE;
}

/** rank t's last barrier phase */
export function segArrive(nodes: number, t: number): number {
  return segRank(nodes, t);
}

export function segmentBytes(nodes: number, threads: number): number {
  return 4 * segRank(nodes, threads);
}

/** One mapping of the segment (each thread maps its own). */
export class Segment {
  readonly words: Int32Array;
  private constructor(private readonly buffer: ArrayBuffer) {
    this.words = new Int32Array(buffer);
  }

  /** Map the segment through descriptor fd of this process (a rank's worker maps its node's). */
  static map(fd: number, bytes: number): Segment {
    const a = shm();
    if (!a) throw new Error('the shared-memory addon is not built');
    const b = a.map(fd, bytes);
    if (typeof b === 'number') throw new Error(`cannot map the SPMD host segment (errno ${-b})`);
    return new Segment(b);
  }

  /**
   * Sleep while word w holds `expected`, at most ms (a wake from any process ends it): 'ok' when
   * woken (or spuriously), 'not-equal', 'timed-out' — as Atomics.wait answers.
   */
  wait(w: number, expected: number, ms: number): 'ok' | 'not-equal' | 'timed-out' {
    const r = shm()!.wait(this.buffer, w, expected, ms);
    return r === 1 ? 'not-equal' : r === 2 ? 'timed-out' : 'ok';
  }

  /** Wake every sleeper on word w, in every process. */
  wake(w: number): void {
    shm()!.wake(this.buffer, w, 0x7fffffff);
  }

  /** A rank's collective counters changed: bump EPOCH and wake its sleepers. */
  bump(): void {
    Atomics.add(this.words, SEG_EPOCH, 1);
    if (Atomics.load(this.words, SEG_EPOCH_SLEEPERS) > 0) this.wake(SEG_EPOCH);
  }

  /**
   * Barrier phase p is complete when every rank arrived at it: raise SEG_BARRIER and wake its
   * sleepers (as board.ts releaseIfComplete, among the ranks of every node of the machine).
   */
  releaseIfComplete(nodes: number, threads: number, p: number): boolean {
    const w = this.words;
    for (let t = 0; t < threads; t++) if (Atomics.load(w, segArrive(nodes, t)) < p) return false;
    if (Atomics.compareExchange(w, SEG_BARRIER, p - 1, p) !== p - 1) return false;
    if (Atomics.load(w, SEG_SLEEPERS) > 0) this.wake(SEG_BARRIER);
    return true;
  }
}

/** A node's open segment file: its descriptor (ranks map it), its path until unlinked, its mapping. */
export class SegmentFile {
  private constructor(readonly path: string, readonly fd: number, readonly bytes: number, readonly segment: Segment) {}

  /** Node 0: a new segment for `nodes` nodes and `threads` ranks, or undefined when none can be made. */
  static create(nodes: number, threads: number): SegmentFile | undefined {
    const a = shm();
    if (!a) return undefined;
    const dir = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const path = join(dir, `luna-spmd-${process.pid}-${randomBytes(6).toString('hex')}`);
    const bytes = segmentBytes(nodes, threads);
    const fd = a.open(path, bytes, true);
    if (fd < 0) return undefined;
    const f = SegmentFile.mapped(path, fd, bytes);
    if (!f) { a.unlink(path); return undefined; }
    Atomics.store(f.segment.words, MAGIC, MAGIC_VALUE);
    return f;
  }

  /** Another node: node 0's segment, if this node can open it (same machine) and it is one. */
  static open(path: string, nodes: number, threads: number): SegmentFile | undefined {
    const a = shm();
    if (!a) return undefined;
    const bytes = segmentBytes(nodes, threads);
    const fd = a.open(path, bytes, false);
    if (fd < 0) return undefined;
    const f = SegmentFile.mapped(path, fd, bytes);
    if (f && Atomics.load(f.segment.words, MAGIC) === MAGIC_VALUE) return f;
    if (f) f.close(); else a.close(fd);
    return undefined;
  }

  private static mapped(path: string, fd: number, bytes: number): SegmentFile | undefined {
    try { return new SegmentFile(path, fd, bytes, Segment.map(fd, bytes)); } catch { shm()!.close(fd); return undefined; }
  }

  /** Remove the file's name (the mappings and descriptors keep the memory). */
  unlink(): void {
    shm()!.unlink(this.path);
  }

  close(): void {
    shm()!.close(this.fd);
  }
}
