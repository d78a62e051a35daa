// The node's board: one SharedArrayBuffer of Int32 words that the ranks of a node and its system
// thread share. Every rank's synchronisation counters are on every node's board (a node mirrors
// the counters of other nodes' ranks as their updates arrive), so a rank waits for any other by
// reading memory; each change bumps EPOCH, the one word sleepers wait on.

/** set once the run stops: every wait ends with RunAborted */
export const ABORT = 0;
/** bumped on each change a waiter may be waiting for (Atomics.wait on it) */
export const EPOCH = 1;
/** ranks asleep on EPOCH now: a change notifies only when there are some (a notify costs 13 µs) */
export const SLEEPERS = 2;
/** messages the node's ranks posted to the system thread, all ranks together */
export const POSTED = 3;
/** the last barrier phase every rank of this node arrived at (one message tells the other nodes) */
export const NODE_ARRIVE = 4;
/**
 * the last barrier phase every rank of the run arrived at, as known here: whoever completes a
 * phase (the last rank of the node to arrive, or the system thread when another node's arrival
 * completes it) raises it, and barrier waiters spin and sleep on this one word alone
 */
export const BARRIER = 5;
/**
 * the node's ranks on a CPU: started and neither asleep nor returned. A wait spins only while
 * these (and, for a wait on another node, the system thread that must take the reply) fit in the
 * node's CPUs (RankInit.cpus): a spinner beyond them holds the core the thread it waits for needs.
 */
export const AWAKE = 6;
/**
 * the ranks' requests the system thread handled, what they sent written to the sockets: a rank
 * writes a message to another node's socket itself only when this equals POSTED (nothing it
 * asked before could arrive after it)
 */
export const HANDLED = 7;
/** messages the node's ranks wrote to other nodes' sockets themselves (barrier arrivals, remote reads; counted as sent for termination detection) */
export const DIRECT = 8;
const HEADER = 10;

// per rank
/** what the rank does: RUNNING, PARKED (asleep in a wait) or DONE (returned) */
export const STATE = 0;
/** bumped each time the rank parks */
export const PARKS = 1;
/** answers the system thread gave this rank */
export const REPLIES = 2;
/** the value of the word SLEEPWORD names the rank sleeps on while PARKED: asleep for good unless that word moves */
export const SLEEPON = 3;
/** the barrier phases this rank notified */
export const ARRIVE = 4;
/** the collective operations this rank entered, moved its data for (its contribution is ready) and left */
export const CENTRY = 5;
export const CDATA = 6;
export const CEXIT = 7;
/** the board word the rank sleeps on while PARKED (EPOCH, BARRIER, or its own REPLIES or LANDED) */
export const SLEEPWORD = 8;
/** bumped each time the rank goes to sleep (Atomics.wait): tests count the wake-ups an operation costs */
export const SLEEPS = 9;
/**
 * bytes of the rank's pending remote read that landed in its inbox (the system thread writes the
 * reply's chunks there as they arrive; -1: refused, the reason follows as an answer)
 */
export const LANDED = 10;
/** the kind of the rank's collective k at CKIND + k % KIND_RING (mismatches are found there) */
export const CKIND = 11;
export const KIND_RING = 16;
/** bytes of the rank's pending remote read (its node lands a reply the rank asked for itself by them) */
export const READSIZE = CKIND + KIND_RING;
export const RANK_WORDS = READSIZE + 1;
/** the words of a rank's record its node sends to the others when they change */
export const MIRRORED = [ARRIVE, CENTRY, CDATA, CEXIT] as const;
/** a rank's collective words (counters and kinds): with the host segment they live there (segment.ts) */
export function collectiveWord(w: number): boolean {
  return w === CENTRY || w === CDATA || w === CEXIT || (w >= CKIND && w < CKIND + KIND_RING);
}

export const RUNNING = 0, PARKED = 1, DONE = 2;

/** locks whose home is a rank of this node: 0 free, else holder + 1, with WAITERS when other nodes queue */
export const MAX_LOCKS = 4096;
export const WAITERS = 1 << 30;

export function boardWords(threads: number): number {
  return HEADER + threads * RANK_WORDS + MAX_LOCKS;
}

export function rankBase(rank: number): number {
  return HEADER + rank * RANK_WORDS;
}

export function lockWord(threads: number, lock: number): number {
  return HEADER + threads * RANK_WORDS + lock;
}

/** Tell sleepers something changed. */
export function bump(board: Int32Array): void {
  Atomics.add(board, EPOCH, 1);
  if (Atomics.load(board, SLEEPERS) > 0) Atomics.notify(board, EPOCH);
}

/** Wake whoever sleeps on word w (a rank's REPLIES or LANDED, BARRIER) — only when some rank sleeps at all. */
export function wake(board: Int32Array, w: number): void {
  if (Atomics.load(board, SLEEPERS) > 0) Atomics.notify(board, w);
}

/**
 * Barrier phase p is complete when every rank of the run arrived at it (other nodes' ranks as
 * mirrored here): raise BARRIER and wake its sleepers. Called by each arriving rank and by the
 * system thread on another node's arrival; with sequentially consistent stores and loads the last
 * of them sees every arrival, and the compare-exchange lets one of several release it.
 */
export function releaseIfComplete(board: Int32Array, threads: number, p: number): boolean {
  for (let t = 0; t < threads; t++) if (Atomics.load(board, rankBase(t) + ARRIVE) < p) return false;
  if (Atomics.compareExchange(board, BARRIER, p - 1, p) !== p - 1) return false;
  wake(board, BARRIER);
  return true;
}
