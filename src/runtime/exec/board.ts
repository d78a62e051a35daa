// The ready board: batches posted ahead to every worker lane of a node, each taken by the first
// lane that finishes what it runs, without a round trip through the system thread. The system
// thread posts a ready CF (in the order its policy asks) when no lane is idle; a lane that ends
// its batch finds the entry on its port and claims it with one compare-and-swap; the other lanes
// skip it. Claims are counted in the lanes' shared in-flight counts, so the system thread sees a
// lane that took an entry as busy the moment it took it, and books its result as any other.
//
// One Int32Array in a SharedArrayBuffer: per lane its batches in flight, then SLOTS claim slots.
// Entry `seq` lives in slot seq % SLOTS, which reads seq + 1 while open and -(lane + 1) once
// taken. A lane that reads an old entry late finds another number there and skips it, so a slot
// is reused without the lanes acknowledging anything; only the open entries must be fewer than
// SLOTS (the policy keeps a few open: SchedulingPolicy.boardAhead).

/** claim slots: more than any policy keeps open at once */
export const BOARD_SLOTS = 64;

/** A board entry as it travels on a lane's port: the entry's number and its batch. */
export interface WireBoard<B> {
  board: number;
  batch: B;
}

export class ReadyBoard {
  /** per lane: batches in flight, sent to it or taken by it from the board (not yet booked) */
  readonly inflight: Int32Array;
  private readonly slots: Int32Array;
  /** the next entry's number */
  private seq = 0;
  /** entries posted and not seen taken yet (system thread) */
  private readonly posted: number[] = [];
  /** entries the lanes took (system thread, counted as they are seen taken) */
  taken = 0;

  /** `buffer`: the one made by bufferFor(lanes) (a worker's view of the system thread's board) */
  constructor(readonly lanes: number, readonly buffer: SharedArrayBuffer = ReadyBoard.bufferFor(lanes)) {
    this.inflight = new Int32Array(buffer, 0, lanes);
    this.slots = new Int32Array(buffer, 4 * lanes, BOARD_SLOTS);
  }

  static bufferFor(lanes: number): SharedArrayBuffer {
    return new SharedArrayBuffer(4 * (lanes + BOARD_SLOTS));
  }

  /** System thread: open a new entry; its number goes on the lanes' ports with its batch. */
  post(): number {
    const seq = this.seq;
    this.seq = (seq + 1) & 0x3fffffff;
    Atomics.store(this.slots, seq % BOARD_SLOTS, seq + 1);
    this.posted.push(seq);
    return seq;
  }

  /** System thread: entries posted that no lane has taken yet. */
  open(): number {
    const p = this.posted;
    let k = 0;
    for (let i = 0; i < p.length; i++) {
      const s = p[i]!;
      if (Atomics.load(this.slots, s % BOARD_SLOTS) === s + 1) p[k++] = s;
      else this.taken++;
    }
    p.length = k;
    return k;
  }

  /**
   * Lane `lane`: take entry `seq` if it is still open, counting it in the lane's batches in flight
   * before any other thread can see it taken (the system thread must never see an entry gone and
   * the lane idle).
   */
  claim(seq: number, lane: number): boolean {
    Atomics.add(this.inflight, lane, 1);
    if (Atomics.compareExchange(this.slots, seq % BOARD_SLOTS, seq + 1, -(lane + 1)) === seq + 1) return true;
    Atomics.sub(this.inflight, lane, 1);
    return false;
  }
}
