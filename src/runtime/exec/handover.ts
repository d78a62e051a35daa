// Handing the tail of a fed batch to an idle lane. The system thread splits a step's work between
// the lanes when it sends their batches; when one lane runs dry (its batch done, or waiting for a
// value its partner has still to make) while the partner still holds several CFs it has not
// started, the split was wrong and the lane idles (the PIC at the seed's size on 1 × 2: ~300 ms a
// run of 3.3 s, docs/pic.md "An idle lane runs the tail of its partner's batch").
//
// The owner decides, not the idle lane: only the owner holds the inputs of its tasks (the values
// other lanes fed it, its batch's earlier outputs, its previous batch's), and only it knows which
// feed requests wait for their outputs. So an idle lane only says so (its word: HUNGRY); the owner,
// between two of its CFs, takes that word (HUNGRY → CLAIMED, one compare-and-swap, so one owner
// gives to it at a time) and posts it a gift: tasks from its batch's tail whose inputs are all at
// hand, with those inputs. The idle lane runs them in order and posts each one's outputs back; the
// owner puts them in its batch (answering the feed requests that wait for them, and in its
// result), so consumers and the system thread see one batch, as before. A gift's inputs are all
// present when it is sent, so it always completes: a lane that finds its word claimed runs the
// gift before anything else, and no lane waits on a cycle.
//
// This is mechanism only; when the owner gives and how much is the worker's policy (worker.ts).
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { DfValue } from '../../ucode/value.js';
import { wakeLane } from './protocol.js';

/** A lane's word: busy (or not a worker), idle and willing to run a gift, or given one that is on its way. */
export const BUSY = 0, HUNGRY = 1, CLAIMED = 2;

/** One task handed over, its inputs resolved but for those made by tasks earlier in the same gift. */
export interface GiftTask {
  /** its index in the owner's batch */
  ti: number;
  cf: number;
  imp: number;
  args: unknown[];
  /** the DFs' display keys (the batch's key table stays with the owner) */
  keys: string[];
  /** inputs made by earlier tasks of this gift: [arg, owner's task index, out] … */
  deps: number[] | null;
}

export interface Gift { kind: 'gift'; from: number; batch: number; tasks: GiftTask[] }

/** A handed task's outcome, posted back to its owner. */
export interface GiftBack {
  kind: 'back';
  from: number;
  batch: number;
  ti: number;
  /** its outputs (null: it did not run, see `error`) */
  outs: (DfValue | null)[] | null;
  start: number;
  fin: number;
  error?: { message: string; stack?: string; kind: 'ucode' | 'async' | 'contract' };
}

/** Int32s per lane in the shared state: its word, then the count of messages posted to it. */
const STRIDE = 2;

/** The shared state of `lanes` lanes' hand-overs. */
export function handoverBuffer(lanes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * STRIDE * lanes);
}

export class Handover {
  private readonly state: Int32Array;
  private seen = 0;
  /** tasks this lane handed to others, and ran for others (LUNA_HANDOVER_STATS) */
  given = 0;
  taken = 0;

  constructor(
    buf: SharedArrayBuffer,
    private readonly flags: Int32Array,
    private readonly me: number,
    /** per lane j, the port this worker shares with lane j's worker for hand-overs (null: none) */
    private readonly ports: readonly (MessagePort | null)[],
  ) {
    this.state = new Int32Array(buf);
  }

  /** This lane is idle and would run a gift. */
  hunger(): void {
    Atomics.compareExchange(this.state, STRIDE * this.me, BUSY, HUNGRY);
  }

  /**
   * This lane goes back to its own work. False when an owner claimed its word meanwhile: a gift
   * is on its way (or here), and the lane must run it first.
   */
  settle(): boolean {
    const w = Atomics.compareExchange(this.state, STRIDE * this.me, HUNGRY, BUSY);
    return w !== CLAIMED;
  }

  /** An owner claimed this lane's word and its gift has not been received yet. */
  claimed(): boolean {
    return Atomics.load(this.state, STRIDE * this.me) === CLAIMED;
  }

  /** A lane other than this one that is idle now (-1: none). */
  idleLane(): number {
    const ports = this.ports;
    for (let l = 0; l < ports.length; l++) if (ports[l] !== null && Atomics.load(this.state, STRIDE * l) === HUNGRY) return l;
    return -1;
  }

  /** Take lane `to`'s idle word before giving it work; false when it went back to its own meanwhile. */
  claim(to: number): boolean {
    return Atomics.compareExchange(this.state, STRIDE * to, HUNGRY, CLAIMED) === HUNGRY;
  }

  /** Post `m` to lane `to` and wake it. */
  post(to: number, m: Gift | GiftBack): void {
    this.ports[to]!.postMessage(m);
    Atomics.add(this.state, STRIDE * to + 1, 1);
    wakeLane(this.flags, to);
  }

  /** A gift or a gift's outcome came that this lane has not looked at. */
  pending(): boolean {
    return Atomics.load(this.state, STRIDE * this.me + 1) !== this.seen;
  }

  /** Each gift or outcome that came, in turn; a gift's arrival clears this lane's claimed word. */
  receive(each: (m: Gift | GiftBack) => void): void {
    const n = Atomics.load(this.state, STRIDE * this.me + 1);
    if (n === this.seen) return;
    this.seen = n;
    for (let l = 0; l < this.ports.length; l++) {
      const p = this.ports[l];
      if (p === null || p === undefined) continue;
      for (let m = receiveMessageOnPort(p); m !== undefined; m = receiveMessageOnPort(p)) {
        const x = m.message as Gift | GiftBack;
        if (x.kind === 'gift') Atomics.compareExchange(this.state, STRIDE * this.me, CLAIMED, BUSY);
        each(x);
      }
    }
  }
}
