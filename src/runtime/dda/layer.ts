// The distributed dynamic array as a layer of a node (docs/dda.md): the local descriptors (LD)
// of the arrays' blocks on this node, the global descriptors (GD) this node holds, the array's
// channel, its place among the control protocol's participants, and the request handlers its
// ucodes call through the request port.
//
// The centralized protocol of seed 002 §2.3/§3.2, one operation at a time per array:
//   GD → every node   LOCK     each LD is locked for the GD (CFs that want the block wait)
//   LD → GD           REPORT   its element count, as soon as no CF holds the block, and the
//                              elements its CFs sent to the block on the GD's node (carried)
//   GD → movers       MOVE     the migration tasks (plan.ts) and how many parts to expect
//   LD → LD           PART     elements, taken from the tail, appended at the receiver
//   LD → GD           READY    from each receiver: its sends done and every part it expected received
//   GD → every node   UNLOCK   the GD's node from now on; CFs waiting for the block get it
// A global count is LOCK/REPORT/UNLOCK, and so is a rearrangement whose plan moves nothing. MOVE
// goes only to the nodes that send or receive, and only receivers answer READY: a pure sender's
// parts leave while it handles MOVE, and its UNLOCK follows that MOVE on the same ordered link.
// Elements CFs sent by destination to the block on the GD's own node (a particle code's arrays
// keep their GD beside their block) travel in the REPORT itself: a count that delivers only such
// elements is LOCK/REPORT/UNLOCK too, one round trip instead of two.
// Messages to another node leave at the end of the turn that made them, all of a turn's for one
// node in one frame (post): a particle code's 64 arrays counted once a step, whose LOCKs (then
// REPORTs, then UNLOCKs) are made in bursts by the data that arrived together, share a frame per
// burst and node pair instead of a round trip each. Each array's protocol is the same message for
// message, in the same order on each link.
// On two nodes a node also tells the other node's GDs, between operations, what its CFs changed
// (STAND: the elements sent to the GD's node, ahead, and whether its LD is free with its counts),
// before the CFs' outputs leave on the same link; a count the GD can answer from that is answered
// there without a message (countInPlace).
// The GD moves to the first new node when its node is not among the new ones (its state travels
// in UNLOCK). Every node of the run has an LD of every array it has heard of (an empty one until
// elements come), so the GD asks every node.
import { Decoder, Encoder } from '../transport/codec.js';
import type { Channel, Router } from '../transport/router.js';
import { CHANNEL } from '../cluster/channels.js';
import type { Control } from '../cluster/control.js';
import type { ChannelHost, Participant, Wait } from '../cluster/layer.js';
import type { Reply, Request, RequestDesk } from '../exec/desk.js';
import { arrayRequest, DdaBlock, DEFRAG_ORDERS, type DdaHandle, type DdaPart, type DefragOrder } from '../../ucode/dda.js';
import { intValue, TYPE_NAMES, type DfValue } from '../../ucode/value.js';
import { rearrangeCall } from '../../ucode/builtins.js';
import { displayDf } from '../../core/dfkey.js';
import { GLOBAL_COUNT, REARRANGE } from '../../core/builtins.js';
import { planBlocks, type BlockMove, type Move } from './plan.js';

const LOCK = 1, REPORT = 2, MOVE = 3, PART = 4, READY = 5, UNLOCK = 6, OP = 7, DONE = 8, GD_MOVE = 9, BATCH = 10, STAND = 11;
/** the migration rounds of one operation: the elements CFs sent elsewhere, then the plan's */
const DELIVER = 0, PLAN = 1;

/** What an array is: fixed when it is first named, the same on every node. */
export interface ArraySpec {
  name: string;
  /** bytes per element */
  elsize: number;
  /** elements a new block has room for */
  capacity: number;
  order: DefragOrder;
  /** where its global descriptor starts (default node 0) */
  home: number;
  /** blocks on every node (default 1): each a unit a CF holds on its own */
  blocks?: number;
}

/** A global operation, as the GD queues it. */
export interface GlobalOp {
  kind: 'count' | 'rearrange';
  /** rearrange: the new node set, in order (the remainder goes to the last) */
  nodes?: number[];
  /** rearrange: relative speeds of the new nodes */
  weights?: number[];
  /** rearrange: move only between adjacent nodes (plan.ts) */
  neighbours?: boolean;
  /** who asked: node and its token there */
  from: number;
  token: number;
}

/** What the layer tells about itself (tests, benchmarks, the trace). */
export interface RearrangeDone { array: string; kind: GlobalOp['kind']; total: number; moves: Move[]; t0: number; t1: number; bytesMoved: number }

interface Waiter { cf: number; who: string; reply: Reply; since: number }

/** What a CF's worker gets of the block it holds (dda-worker.ts). */
export interface Granted { buffer: SharedArrayBuffer; numel: number; size: number; elsize: number; order: DefragOrder; name: string; rank: number; nodes: number; index: number; blocks: number }

/**
 * A block reserved for a CF sent to a worker (DdaNode.reserve), as its handle carries it: the
 * block as granted, and the shared word the worker claims it by (`token` → `-token`) as the CF
 * starts; the layer has taken it back when the word no longer holds the token.
 */
export interface DdaReservation { word: SharedArrayBuffer; token: number; grant: Granted }

/** One block of an array on this node: its memory, its holder, its part of the current round. */
class Blk {
  /** the CF holding the block (node-local number; -1: none) and its name */
  holder = -1;
  holderText = '';
  /** CFs waiting for the block, in order */
  readonly queue: Waiter[] = [];
  /** parts expected in the current round (-1: the MOVE has not come), parts received */
  expect = -1;
  got = 0;
  /** this round's sends, until made */
  sends: { to: number; toBlock: number; n: number }[] | null = null;
  /** free again before the operation's UNLOCK: the last round's parts are all in, it sent nothing in place */
  early = false;
  /** this operation: it sent views of itself (not free before UNLOCK), the bytes it received */
  sentInPlace = false;
  received = 0;
  /**
   * A reservation for the holder, a CF sent to a worker and not started (its token; 0: none):
   * the claim word holds the token until the worker claims it as the CF starts (its negative),
   * or the layer takes it back (0) for anyone who asks for the block (reserve, revoke)
   */
  reserved = 0;
  readonly claim = new Int32Array(new SharedArrayBuffer(4));
  constructor(readonly index: number, readonly block: DdaBlock) {}
}

/** The local descriptor of one array on this node: its blocks (one by default). */
class Local {
  readonly blocks: Blk[];
  /** locked by the GD for operation `epoch` (0: not locked) */
  gdLock = 0;
  gdNode: number;
  reported = false;
  /** the round's MOVE came and every block's sends are made */
  sendsDone = false;
  /** the current round's phase (DELIVER, PLAN) */
  phase = PLAN;
  /** this node's part of the operation, for its span: when LOCK came, the kind, the bytes it sent by destination and by the plan */
  lockedAt = 0;
  opKind = 0;
  sentExchanged = 0;
  sentRearranged = 0;
  /** elements CFs sent to this array's block on a node (DdaBlock.destinations), packed, until a global operation delivers them */
  pending = new Map<number, Uint8Array[]>();
  /** the pending parts this epoch's REPORT announced: the ones its delivery sends (more may come meanwhile from CFs of other arrays) */
  reportedParts = new Map<number, Uint8Array[]>();
  /** the GD (on another node) takes this LD as free with the counts it last told (STAND, or the last count's REPORT) */
  told = false;
  /** a count's REPORT went, then CFs sent elements to this LD: the GD must not take the REPORT as standing (it was told) */
  dirty = false;

  constructor(readonly spec: ArraySpec, rank: number) {
    const k = spec.blocks ?? 1;
    // the home node's first block starts with the capacity
    this.blocks = Array.from({ length: k }, (_, b) => new Blk(b, DdaBlock.create(spec.elsize, rank === spec.home && b === 0 ? spec.capacity : 0, spec.order, `array ${spec.name}, ${blockText(b, k)} of node ${rank}`)));
    this.gdNode = spec.home;
  }

  /** block 0: the only one of most arrays */
  get block(): DdaBlock { return this.blocks[0]!.block; }
  /** the node's elements, over its blocks */
  numel(): number { let n = 0; for (const b of this.blocks) n += b.block.getNumel(); return n; }
  /** every block free of CFs (a REPORT waits for it) */
  free(): boolean { return this.blocks.every((b) => b.holder === -1); }
  /** the block with the fewest elements (elements delivered by destination go there) */
  smallest(): Blk { let s = this.blocks[0]!; for (const b of this.blocks) if (b.block.getNumel() < s.block.getNumel()) s = b; return s; }
}

/** "block" for an array of one block a node, else "block b" (with `the`: "the block", "block b") */
function blockText(b: number, k: number, the = false): string { return k === 1 ? (the ? 'the block' : 'block') : `block ${b}`; }

/** What a GD knows of another node's LD between operations (STAND). */
interface Standing {
  /** its count per block when it said it was free (null: unknown, held, or parts wait there for a third node) */
  counts: number[] | null;
  /** elements it sent ahead for the GD's node, in arrival order, until an operation appends them */
  parts: Uint8Array[];
}

/** The global descriptor of one array, on the node that holds it. */
class Global {
  /** each node's count per block */
  counts = new Map<number, number[]>();
  /** the LDs' pending parts (elements, parts), delivered before the operation's own work */
  deliveries: (Move & { parts: number })[] = [];
  /** blocks a node holds (every node the same) */
  k = 1;
  /** elements for this node's block that came in REPORTs, appended once every LD has reported */
  carried: { from: number; bytes: Uint8Array }[] = [];
  /** DELIVER while they travel, then PLAN */
  phase = PLAN;
  /** elements delivered by destination in this operation */
  exchanged = 0;
  /** nodes whose LD changed after their REPORT to this operation (STAND): not standing after it */
  readonly stale = new Set<number>();
  op: GlobalOp | null = null;
  readonly queue: GlobalOp[] = [];
  epoch = 0;
  pending = 0;
  moves: Move[] = [];
  t0 = 0;
}

export class DdaNode implements Participant {
  readonly name = 'dynamic arrays';
  private readonly ch: Channel;
  private readonly enc = new Encoder(256);
  private readonly locals = new Map<string, Local>();
  private readonly globals = new Map<string, Global>();
  private readonly specs = new Map<string, ArraySpec>();
  /** operations that reached this node before the GD they are for */
  private readonly early = new Map<string, GlobalOp[]>();
  /** requests of this node's CFs for a global operation, by token */
  private readonly asked = new Map<number, { reply: Reply; array: string; kind: string; who: string }>();
  private nextToken = 1;
  private readonly rank: number;
  private readonly size: number;
  /** messages this layer sent, by kind (tests count the protocol's rounds with it) */
  readonly sent: Record<'lock' | 'report' | 'move' | 'part' | 'ready' | 'unlock' | 'carried' | 'stand', number> = { lock: 0, report: 0, move: 0, part: 0, ready: 0, unlock: 0, carried: 0, stand: 0 };
  /** global counts a GD here answered from the standing reports, without a message (tests, benchmarks) */
  countsInPlace = 0;
  /** per array, what the GD here knows of each other node's LD: its counts when free (null: unknown) and the parts it sent ahead */
  private readonly standing = new Map<string, Map<number, Standing>>();
  /** every finished global operation of a GD here (tests, benchmarks) */
  onDone: (d: RearrangeDone) => void = () => {};

  constructor(router: Router, private readonly control: Control, private readonly host: ChannelHost) {
    this.rank = router.rank;
    this.size = router.size;
    this.ch = router.channel(CHANNEL.dda, 'dynamic arrays', (from, tag, body, payload) => this.arrived(from, tag, body, payload), { counted: () => true });
    control.register(this);
  }

  // ------------------------------------------------------------------ arrays

  /** Make array `s` known here (again: it must be the same). */
  declare(s: ArraySpec): void {
    const had = this.specs.get(s.name);
    if (had !== undefined) {
      if (had.elsize !== s.elsize || had.order !== s.order) throw new Error(`array ${s.name} is named with ${s.elsize}-byte ${s.order} elements, but it has ${had.elsize}-byte ${had.order} ones`);
      if ((had.blocks ?? 1) !== (s.blocks ?? 1)) throw new Error(`array ${s.name} is named with ${s.blocks ?? 1} block(s) a node, but it has ${had.blocks ?? 1}`);
      return;
    }
    if (s.blocks !== undefined && !(Number.isInteger(s.blocks) && s.blocks >= 1)) throw new Error(`array ${s.name}: ${s.blocks} blocks a node is not a positive integer`);
    if (!Number.isInteger(s.elsize) || s.elsize <= 0) throw new Error(`array ${s.name}: element size ${s.elsize} is not a positive integer`);
    if (!Number.isInteger(s.capacity) || s.capacity < 0) throw new Error(`array ${s.name}: capacity ${s.capacity} is not a non-negative integer`);
    if (!DEFRAG_ORDERS.includes(s.order)) throw new Error(`array ${s.name}: order '${String(s.order)}' is none of ${DEFRAG_ORDERS.join(', ')}`);
    if (!Number.isInteger(s.home) || s.home < 0 || s.home >= this.size) throw new Error(`array ${s.name}: home node ${s.home} is not a node of this run (0..${this.size - 1})`);
    this.specs.set(s.name, s);
    this.locals.set(s.name, new Local(s, this.rank));
    if (s.home === this.rank) this.globals.set(s.name, new Global());
  }

  private local(name: string): Local {
    const l = this.locals.get(name);
    if (l === undefined) throw new Error(`no dynamic array named ${name} on node ${this.rank}`);
    return l;
  }

  /** This node's block of `name` (block `index` of several; tests, the system thread's view). */
  block(name: string, index = 0): DdaBlock {
    const l = this.local(name), x = l.blocks[index];
    if (x === undefined) throw new Error(`array ${name} has ${l.blocks.length} block(s) a node, no block ${index}`);
    return x.block;
  }

  /** This node's blocks of `name`. */
  blocks(name: string): DdaBlock[] { return this.local(name).blocks.map((x) => x.block); }

  /** blocks freed before their operation's UNLOCK, their parts in (tests, benchmarks: the overlap) */
  earlyFreed = 0;
  /** parts whose memory an empty receiving block kept instead of copying them (tests, benchmarks) */
  adoptedParts = 0;

  // ------------------------------------------------------------------ holding the block

  /**
   * CF `cf` (named by `who`) wants this node's block of `name`: granted now when free and not
   * locked by a global operation, else when it is (the reply carries the block).
   */
  acquire(name: string, cf: number, who: string, reply: Reply, index = 0): void {
    const l = this.local(name), k = l.blocks.length;
    if (!(Number.isInteger(index) && index >= 0 && index < k)) { reply.fail(`${who} asks for block ${index} of dynamic array ${name}, which has ${k} block(s) a node (0..${k - 1})`); return; }
    const x = l.blocks[index]!;
    this.revoke(x);
    if (x.holder === cf) { reply.fail(`${who} already holds ${blockText(index, k, true)} of array ${name} on node ${this.rank}: it would wait for itself`); return; }
    if (this.grantable(l, x)) { this.grant(l, x, cf, who, reply); return; }
    x.queue.push({ cf, who, reply, since: this.host.now() });
  }

  /** Block `x` may be given to a CF now: nobody holds it or waits for it, and no operation locks it (or it arrived early). */
  private grantable(l: Local, x: Blk): boolean {
    return x.holder === -1 && (l.gdLock === 0 || x.early) && x.queue.length === 0;
  }

  private grant(l: Local, x: Blk, cf: number, who: string, reply: Reply): void {
    reply.answer(this.held(l, x, cf, who));
  }

  /** Block `x` is CF `cf`'s from now on: what its worker needs of it. */
  private held(l: Local, x: Blk, cf: number, who: string): Granted {
    x.holder = cf;
    x.holderText = who;
    // the GD took this LD as free: it hears that it is not (its next count takes the full protocol)
    if (l.told) this.stand(l.spec.name, l, false);
    const b = x.block;
    return { buffer: b.buffer, numel: b.getNumel(), size: b.getMaxSize(), elsize: b.elsize, order: b.order, name: b.name, rank: this.rank, nodes: this.size, index: x.index, blocks: l.blocks.length };
  }

  /**
   * CF `cf` (named by `who()`) is about to be sent to a worker with this node's block of handle
   * `h` as an argument: when the block could be granted now (grantable), it is reserved for the
   * CF, and the handle the worker gets carries it as granted and the word the worker claims it by
   * as the CF starts (dda-worker.ts), with no request; else null (the worker asks as the CF
   * starts). Until the claim, anyone asking for the block takes it back (revoke).
   */
  reserve(h: DdaHandle, cf: number, who: () => string): object | null {
    const l = this.locals.get(h.id);
    const index = h.index ?? 0;
    if (l === undefined || !(Number.isInteger(index) && index >= 0 && index < l.blocks.length)) return null;
    const x = l.blocks[index]!;
    if (!this.grantable(l, x)) return null;
    const grant = this.held(l, x, cf, who());
    const token = ++this.reservations;
    x.reserved = token;
    Atomics.store(x.claim, 0, token);
    const reserved: DdaReservation = { word: x.claim.buffer as SharedArrayBuffer, token, grant };
    return { ...h, reserved };
  }

  /** blocks reserved for CFs sent to workers, and reservations taken back before their CF started (tests, benchmarks) */
  reservations = 0;
  revoked = 0;

  /**
   * Someone asks for block `x` (a CF, a global operation): a reservation its CF has not claimed
   * is taken back (the CF will ask as it starts); a claimed one is a hold like any other.
   */
  private revoke(x: Blk): void {
    if (x.reserved === 0) return;
    const token = x.reserved;
    x.reserved = 0;
    if (Atomics.compareExchange(x.claim, 0, token, 0) !== token) return; // claimed: its CF runs and will release it
    x.holder = -1;
    x.holderText = '';
    this.revoked++;
  }

  /**
   * The holder gives the block back: its count and size, its memory when it replaced it, and
   * the elements it gave other nodes (node → their bytes, DdaBlock.settle), which wait here for
   * the array's next global operation.
   */
  release(name: string, cf: number, buffer: SharedArrayBuffer | undefined, numel: number, size?: number, parts?: readonly DdaPart[], index = 0): void {
    const l = this.local(name), x = l.blocks[index];
    if (x === undefined || x.holder !== cf) throw new Error(`array ${name}: ${blockText(index, l.blocks.length, true)} of node ${this.rank} released by CF ${cf}, but ${x === undefined || x.holder === -1 ? 'nobody' : x.holderText} holds it`);
    x.block.adopt(buffer ?? x.block.buffer, numel, size ?? (buffer ?? x.block.buffer).byteLength);
    // (a reservation its CF claimed ends with the hold)
    x.reserved = 0;
    const targets = new Set<Local>();
    if (parts) for (const p of parts) { const t = this.pend(name, l, p, x); if (t !== null && t !== l) targets.add(t); }
    x.holder = -1;
    x.holderText = '';
    if (l.gdLock !== 0 && !l.reported) { if (l.free()) this.report(name, l); }
    else this.grantNext(l, x);
    // what the CF changed, told to each GD on another node, leaves before the CF's outputs (which
    // leave after this call, on the same ordered link): a count that waits for those outputs finds
    // the change at its GD
    this.stand(name, l, true);
    for (const t of targets) this.stand(t.spec.name, t, false);
    if (this.outbox.size > 0 && !this.control.finished) this.flushAll();
  }

  /**
   * Tell the GD of `name`, when it is on another node and no operation locks this LD, what it
   * must know to answer a count without asking: the elements this node's CFs sent to the GD's
   * node (ahead, with the message), and whether the LD is free with its counts — or that it is
   * not any more (a block held, parts waiting for a third node). `changed`: the counts may differ
   * from the ones last told. Nothing is sent when nothing the GD knows changed.
   */
  private stand(name: string, l: Local, changed: boolean): void {
    // counts are answered at the GD on two nodes only (countInPlace)
    if (l.gdNode === this.rank || this.size !== 2) return;
    if (l.gdLock !== 0) {
      // locked by a count that has this node's REPORT: elements sent here since make the REPORT
      // stale, and the GD hears it before anything this node sends later
      if (l.reported && l.opKind === 0 && !l.dirty && l.pending.size > 0) {
        l.dirty = true;
        this.sent.stand++;
        this.send(l.gdNode, STAND, this.specBody(name).u8(0).finishCopy());
      }
      return;
    }
    const to = l.gdNode, q = l.pending.get(to);
    if (q !== undefined) l.pending.delete(to);
    const known = l.free() && l.pending.size === 0;
    if (q === undefined && known === l.told && !(known && changed)) return;
    l.told = known;
    this.sent.stand++;
    const e = this.specBody(name).u8(known ? 1 : 0);
    if (known) { e.varint(l.blocks.length); for (const x of l.blocks) e.varint(x.block.getNumel()); }
    let payload: Uint8Array | undefined;
    if (q !== undefined) {
      payload = q.length === 1 ? q[0]! : joined(q);
      this.sent.carried++;
    }
    this.send(to, STAND, e.finishCopy(), payload);
    // this node's part of the counts the GD answers from it (the GD's node writes its own)
    if (this.host.trace) { const t = this.host.now(); this.host.trace.ddaOp(t, t, 5, payload?.byteLength ?? 0, 0, name); }
  }

  /** The array's name and spec (a node may not have heard of the array yet) */
  private specBody(name: string): Encoder {
    const sp = this.specs.get(name)!;
    return this.enc.reset().string(name).varint(sp.elsize).varint(sp.capacity).u8(sp.order === 'ordered' ? 1 : 0).varint(sp.home).varint(sp.blocks ?? 1);
  }

  /** A STAND from node `from`: what the GD here (or coming here) knows of its LD. */
  private gotStand(from: number, name: string, known: boolean, counts: number[] | null, payload: Uint8Array | undefined): void {
    const es = this.local(name).block.elsize;
    if (payload !== undefined && payload.byteLength % es !== 0) throw new Error(`array ${name}: node ${from} sent ${payload.byteLength} bytes ahead, not whole ${es}-byte elements`);
    const k = this.specs.get(name)!.blocks ?? 1;
    if (known && counts!.length !== k) throw new Error(`array ${name}: node ${from} told ${counts!.length} block(s), the array has ${k} a node`);
    const s = this.standingOf(name, from);
    s.counts = known ? counts : null;
    // during a count that has the node's REPORT: the count ends without taking it as standing
    const g = this.globals.get(name);
    if (!known && g?.op && g.counts.has(from)) g.stale.add(from);
    if (payload !== undefined && payload.byteLength > 0) s.parts.push(payload);
  }

  private standingOf(name: string, node: number): Standing {
    let m = this.standing.get(name);
    if (m === undefined) this.standing.set(name, (m = new Map()));
    let s = m.get(node);
    if (s === undefined) m.set(node, (s = { counts: null, parts: [] }));
    return s;
  }

  /**
   * Elements CF `holder` sent away: they wait here in the target array's LD for its next
   * global operation. A part for another array may go to this node's block of it.
   */
  private pend(name: string, l: Local, p: DdaPart, x: Blk): Local | null {
    const holder = x.holderText;
    const to = p.node, es = l.block.elsize;
    const other = p.array !== undefined && p.array !== name;
    if (!(Number.isInteger(to) && to >= 0 && to < this.size)) throw new Error(`array ${name}: CF ${holder} sent elements to node ${to}, not a node of this run`);
    if (p.bytes.byteLength % es !== 0) throw new Error(`array ${name}: ${p.bytes.byteLength} bytes sent to node ${to} are not whole ${es}-byte elements`);
    if (p.bytes.byteLength === 0) return null;
    // sent to the block it came from (a target naming the array itself on this node): it stays
    if (!other && to === this.rank) { x.block.append(p.bytes); return null; }
    let t = l;
    if (other) {
      if (p.spec) this.declare({ ...p.spec, name: p.array! });
      t = this.local(p.array!);
      if (t.block.elsize !== es) throw new Error(`array ${name}: CF ${holder} sent its ${es}-byte elements to array ${p.array}, whose elements have ${t.block.elsize} bytes`);
    }
    const q = t.pending.get(to);
    if (q) q.push(p.bytes); else t.pending.set(to, [p.bytes]);
    return t;
  }

  /** The next CF waiting for block `x` (every block when none is named) gets it, if it is free and unlocked. */
  private grantNext(l: Local, x?: Blk): void {
    if (x === undefined) { for (const b of l.blocks) this.grantNext(l, b); return; }
    if (x.holder !== -1 || (l.gdLock !== 0 && !x.early)) return;
    const w = x.queue.shift();
    if (w) this.grant(l, x, w.cf, w.who, w.reply);
    else this.wake();
  }

  // ------------------------------------------------------------------ global operations

  /** A CF asks for a global operation on `name`; the reply comes when it is over. */
  global(name: string, op: Omit<GlobalOp, 'from' | 'token'>, cf: number, who: string, reply: Reply): void {
    const l = this.local(name);
    const held = l.blocks.find((x) => x.holder === cf);
    if (held) { reply.fail(`${who} holds ${blockText(held.index, l.blocks.length, true)} of array ${name} on node ${this.rank} and asks for a global ${op.kind} of it, which waits for every block to be free: it would wait for itself`); return; }
    if (op.nodes !== undefined) {
      if (op.nodes.length === 0) { reply.fail(`rearrange of array ${name} onto no node`); return; }
      for (const n of op.nodes) if (!Number.isInteger(n) || n < 0 || n >= this.size) { reply.fail(`rearrange of array ${name} onto node ${n}, which is not a node of this run (0..${this.size - 1})`); return; }
      if (new Set(op.nodes).size !== op.nodes.length) { reply.fail(`rearrange of array ${name}: a node is named twice (${op.nodes.join(', ')})`); return; }
      if (op.weights !== undefined && (op.weights.length !== op.nodes.length || op.weights.some((w) => !(w > 0) || !Number.isFinite(w)))) { reply.fail(`rearrange of array ${name}: ${op.nodes.length} positive weights wanted, got ${op.weights.join(', ')}`); return; }
    }
    const token = this.nextToken++;
    this.asked.set(token, { reply, array: name, kind: op.kind, who });
    this.sendOp(l.gdNode, name, { ...op, from: this.rank, token });
  }

  private sendOp(to: number, name: string, op: GlobalOp): void {
    // the spec travels with the operation: the GD's node may not have heard of the array yet (no
    // CF of it ran there)
    const sp = this.specs.get(name)!;
    const e = this.enc.reset().string(name).varint(sp.elsize).varint(sp.capacity).u8(sp.order === 'ordered' ? 1 : 0).varint(sp.home).varint(sp.blocks ?? 1).u8(op.kind === 'count' ? 0 : 1).varint(op.from).varint(op.token).u8((op.neighbours ? 1 : 0) | (op.nodes ? 2 : 0) | (op.weights ? 4 : 0));
    if (op.nodes) { e.varint(op.nodes.length); for (const n of op.nodes) e.varint(n); }
    if (op.weights) { e.varint(op.weights.length); for (const w of op.weights) e.f64(w); }
    this.send(to, OP, e.finishCopy());
  }

  private decodeOp(d: Decoder): GlobalOp {
    const kind = d.u8() === 0 ? 'count' : 'rearrange';
    const from = d.varint(), token = d.varint(), flags = d.u8();
    const op: GlobalOp = { kind, from, token, neighbours: (flags & 1) !== 0 };
    if (flags & 2) op.nodes = Array.from({ length: d.varint() }, () => d.varint());
    if (flags & 4) op.weights = Array.from({ length: d.varint() }, () => d.f64());
    return op;
  }

  /** The GD of `name` here takes operation `op`: now if free, else after the ones before it. */
  private gdOp(name: string, op: GlobalOp): void {
    const g = this.globals.get(name);
    if (g === undefined) {
      const at = this.local(name).gdNode;
      // it is on its way here (the UNLOCK came before the GD); else it moved on: forward
      if (at === this.rank) { const q = this.early.get(name) ?? []; q.push(op); this.early.set(name, q); }
      else this.sendOp(at, name, op);
      return;
    }
    g.queue.push(op);
    if (g.op === null) this.startOp(name, g);
  }

  private startOp(name: string, g: Global): void {
    // counts answered here from what the other nodes told, as long as they can be
    while (g.op === null && g.queue[0]?.kind === 'count' && this.countInPlace(name, g)) { /* answered */ }
    if (g.op !== null) return;
    const op = g.queue.shift();
    if (op === undefined) return;
    g.op = op;
    g.epoch++;
    g.pending = this.size;
    g.counts.clear();
    g.stale.clear();
    g.deliveries = [];
    g.carried = [];
    g.phase = PLAN;
    g.exchanged = 0;
    g.moves = [];
    g.k = this.specs.get(name)!.blocks ?? 1;
    g.t0 = this.host.now();
    // the spec travels with the lock: a node may not have heard of the array yet
    const sp = this.specs.get(name)!;
    const body = this.enc.reset().string(name).varint(g.epoch).varint(sp.elsize).varint(sp.capacity).u8(sp.order === 'ordered' ? 1 : 0).varint(sp.home).varint(sp.blocks ?? 1).u8(op.kind === 'count' ? 0 : 1).finishCopy();
    for (let r = 0; r < this.size; r++) this.send(r, LOCK, body);
    this.sent.lock += this.size;
  }

  /**
   * A global count answered here without a message, when it can be: this node's LD is free and
   * unlocked with no parts for another node, and every other node's LD told this GD it is free
   * (STAND, or its REPORT to the last count) and has not said otherwise since. What they sent
   * ahead goes into this node's block, as REPORT-carried elements do. Each other node's
   * counts are the ones it last told: everything it did before its last message here is in, and
   * what a CF does later (a block held, a STAND on its way) comes after this count.
   */
  private countInPlace(name: string, g: Global): boolean {
    // on more nodes a CF's outputs may reach the asker through a third node, ahead of what it told
    // the GD: only two nodes have one link each way, which keeps that order
    if (this.size > 2) return false;
    const l = this.local(name);
    if (l.gdLock !== 0 || !l.free()) return false;
    for (const to of l.pending.keys()) if (to !== this.rank) return false;
    const st = this.standing.get(name);
    let total = 0;
    for (let r = 0; r < this.size; r++) {
      if (r === this.rank) continue;
      const c = st?.get(r)?.counts;
      if (c == null) return false;
      for (const n of c) total += n;
    }
    // off the queue before the answer: an asker on this node may ask again within it
    const op = g.queue.shift()!;
    const t0 = this.host.now();
    const carried: { from: number; bytes: Uint8Array }[] = [];
    if (st !== undefined) for (const [from, s] of st) { for (const bytes of s.parts) carried.push({ from, bytes }); s.parts = []; }
    const own = l.pending.get(this.rank);
    let ownBytes = 0;
    if (own !== undefined) { l.pending.delete(this.rank); for (const bytes of own) { carried.push({ from: this.rank, bytes }); ownBytes += bytes.byteLength; } }
    const moves: Move[] = [];
    let n = 0;
    if (carried.length > 0) {
      const b = l.smallest().block, es = b.elsize;
      const incoming = carried.reduce((k, c) => k + c.bytes.byteLength, 0);
      if (b.getNumel() * es + incoming > b.getMaxSize()) b.resize(b.getNumel() * es + incoming);
      for (const c of carried) { b.append(c.bytes); const k = c.bytes.byteLength / es; n += k; moves.push({ from: c.from, to: this.rank, n: k }); }
    }
    total += l.numel();
    const es = l.block.elsize, t1 = this.host.now();
    this.countsInPlace++;
    // shown as a count of the protocol is: the GD's span and this node's part, the elements its
    // own CFs sent (the other node's part is what it sent ahead: its `sent ahead (node)` records)
    this.host.trace?.ddaOp(t0, t1, 0, n * es, 0, name);
    this.host.trace?.ddaOp(t0, t1, 2, ownBytes, 0, name);
    this.onDone({ array: name, kind: 'count', total, moves, t0, t1, bytesMoved: n * es });
    this.send(op.from, DONE, this.enc.reset().string(name).varint(op.token).varint(total).finishCopy());
    return true;
  }

  private lock(from: number, name: string, epoch: number, kind: number): void {
    const l = this.local(name);
    // the REPORT tells the GD anew
    l.told = false;
    l.dirty = false;
    l.lockedAt = this.host.now();
    l.opKind = kind;
    l.sentExchanged = 0;
    l.sentRearranged = 0;
    l.gdLock = epoch;
    l.gdNode = from;
    l.reported = false;
    l.sendsDone = false;
    for (const x of l.blocks) { x.expect = -1; x.got = 0; x.sends = null; x.early = false; x.sentInPlace = false; x.received = 0; this.revoke(x); }
    if (l.free()) this.report(name, l);
  }

  /**
   * Its count, and the elements its CFs gave other nodes: (node, elements, parts) each; those for
   * the GD's node go with it, as its payload (one part, or the parts joined).
   */
  private report(name: string, l: Local): void {
    l.reported = true;
    this.sent.report++;
    // what it announces is what its delivery sends: parts pended later wait for the next operation
    l.reportedParts = l.pending;
    l.pending = new Map();
    const carried = l.reportedParts.get(l.gdNode);
    if (carried !== undefined) l.reportedParts.delete(l.gdNode);
    const e = this.enc.reset().string(name).varint(l.gdLock).varint(l.blocks.length);
    for (const x of l.blocks) e.varint(x.block.getNumel());
    e.varint(l.reportedParts.size);
    for (const [to, q] of l.reportedParts) e.varint(to).varint(q.reduce((k, b) => k + b.byteLength, 0) / l.block.elsize).varint(q.length);
    let payload: Uint8Array | undefined;
    if (carried !== undefined) {
      payload = carried.length === 1 ? carried[0]! : joined(carried);
      l.sentExchanged += payload.byteLength;
      this.sent.carried++;
    }
    this.send(l.gdNode, REPORT, e.finishCopy(), payload);
  }

  private gotReport(from: number, name: string, epoch: number, counts: number[], deliveries: (Move & { parts: number })[], carried: Uint8Array | undefined): void {
    const g = this.gd(name, epoch);
    if (counts.length !== g.k) throw new Error(`array ${name}: node ${from} reported ${counts.length} block(s), the array has ${g.k} a node`);
    g.counts.set(from, counts);
    g.deliveries.push(...deliveries);
    // the elements the node sent ahead came before its REPORT on the same link: this operation's
    const ahead = from === this.rank ? undefined : this.standing.get(name)?.get(from);
    if (ahead !== undefined && ahead.parts.length > 0) { for (const bytes of ahead.parts) g.carried.push({ from, bytes }); ahead.parts = []; }
    if (carried !== undefined && carried.byteLength > 0) g.carried.push({ from, bytes: carried });
    if (--g.pending > 0) return;
    // every LD has reported, this node's too: its block is free and locked, the carried elements go in
    if (g.carried.length > 0) this.appendCarried(name, g);
    // first the elements CFs sent elsewhere: they count where they go
    const d = g.deliveries;
    if (d.length > 0) {
      g.deliveries = [];
      g.phase = DELIVER;
      // each delivery goes whole to the block of its node with the fewest elements (as counted so far)
      const bm = d.map((m) => {
        const c = g.counts.get(m.to)!;
        let b = 0;
        for (let i = 1; i < c.length; i++) if (c[i]! < c[b]!) b = i;
        c[b]! += m.n;
        g.exchanged += m.n;
        return { from: m.from, fromBlock: 0, to: m.to, toBlock: b, n: m.n, parts: m.parts };
      });
      g.moves.push(...bm.map((m) => this.moveRecord(g, m)));
      this.migrate(name, g, bm);
      return;
    }
    this.afterDelivery(name, g);
  }

  /** The elements the REPORTs carried into this node's block: they count here, delivered. */
  private appendCarried(name: string, g: Global): void {
    const x = this.local(name).smallest(), b = x.block, es = b.elsize;
    const incoming = g.carried.reduce((k, c) => k + c.bytes.byteLength, 0);
    if ((b.getNumel() * es) + incoming > b.getMaxSize()) b.resize(b.getNumel() * es + incoming);
    let n = 0;
    for (const c of g.carried) {
      b.append(c.bytes);
      const k = c.bytes.byteLength / es;
      n += k;
      g.moves.push({ from: c.from, to: this.rank, n: k });
    }
    g.counts.get(this.rank)![x.index]! += n;
    g.exchanged += n;
    g.carried = [];
  }

  /** A move as onDone tells it: nodes, and the blocks when the array has several a node. */
  private moveRecord(g: Global, m: BlockMove): Move {
    return g.k === 1 ? { from: m.from, to: m.to, n: m.n } : { from: m.from, fromBlock: m.fromBlock, to: m.to, toBlock: m.toBlock, n: m.n };
  }

  /** The operation's own work, once the counts are where the elements are. */
  private afterDelivery(name: string, g: Global): void {
    const op = g.op!;
    g.phase = PLAN;
    if (op.kind === 'count') { this.unlock(name, g, this.rank); return; }
    const moves = planBlocks(g.counts, g.k, op.nodes!, { weights: op.weights, neighbours: op.neighbours });
    // nothing to move: no migration round, straight to UNLOCK
    if (moves.length === 0) { this.unlock(name, g, this.newGdNode(op)); return; }
    g.moves.push(...moves.map((m) => this.moveRecord(g, m)));
    this.migrate(name, g, moves.map((m) => ({ ...m, parts: 1 })));
  }

  /**
   * A migration round: MOVE to each node that sends or receives — per block, the parts and
   * elements it expects, and the sends (from a block to a node's block); READY awaited from the
   * receivers.
   */
  private migrate(name: string, g: Global, moves: (BlockMove & { parts: number })[]): void {
    g.pending = new Set(moves.map((m) => m.to)).size;
    // this node's own MOVE last: it is handled at once and sends its parts, which would leave
    // before the receivers' MOVEs (queued for the end of the turn); a receiver that has its MOVE
    // first knows each block's parts and frees each block as they come
    for (let i = 1; i <= this.size; i++) {
      const r = (this.rank + i) % this.size;
      const sends = moves.filter((m) => m.from === r);
      const into = moves.filter((m) => m.to === r);
      if (sends.length === 0 && into.length === 0) continue;
      this.sent.move++;
      const e = this.enc.reset().string(name).varint(g.epoch).u8(g.phase).varint(g.k);
      for (let b = 0; b < g.k; b++) {
        let expect = 0, incoming = 0;
        for (const m of into) if (m.toBlock === b) { expect += m.parts; incoming += m.n; }
        e.varint(expect).varint(incoming);
      }
      e.varint(sends.length);
      for (const m of sends) e.varint(m.fromBlock).varint(m.to).varint(m.toBlock).varint(m.n);
      this.send(r, MOVE, e.finishCopy());
    }
  }

  private gd(name: string, epoch: number): Global {
    const g = this.globals.get(name);
    if (g === undefined || g.op === null || g.epoch !== epoch) throw new Error(`array ${name}: a message of operation ${epoch} reached node ${this.rank}, which runs no such operation`);
    return g;
  }

  private move(name: string, phase: number, blocks: { expect: number; incoming: number }[], sends: { fromBlock: number; to: number; toBlock: number; n: number }[]): void {
    const l = this.local(name);
    if (blocks.length !== l.blocks.length) throw new Error(`array ${name}: a MOVE for ${blocks.length} block(s) reached node ${this.rank}, which holds ${l.blocks.length}`);
    l.phase = phase;
    l.sendsDone = false;
    blocks.forEach((w, i) => {
      const x = l.blocks[i]!, b = x.block;
      // room for every element coming, made once (the seed sizes the new block for all its parts);
      // an empty block that gets one part may take the part's own memory instead (part)
      const need = (b.getNumel() + w.incoming) * b.elsize;
      if (w.incoming > 0 && need > b.getMaxSize() && !(b.getNumel() === 0 && w.expect === 1)) b.resize(need);
      x.expect = w.expect;
      x.sends = [];
    });
    for (const s of sends) {
      const x = l.blocks[s.fromBlock];
      if (x === undefined) throw new Error(`array ${name}: a MOVE names block ${s.fromBlock} of node ${this.rank}, which holds ${l.blocks.length}`);
      x.sends!.push({ to: s.to, toBlock: s.toBlock, n: s.n });
    }
    if (phase === DELIVER) {
      // the parts CFs packed, as they are: they were the CFs' and nothing else holds them
      const es = l.block.elsize;
      for (const s of sends) {
        for (const bytes of l.reportedParts.get(s.to) ?? []) {
          this.sent.part++;
          l.sentExchanged += bytes.byteLength;
          this.send(s.to, PART, this.enc.reset().string(name).varint(l.gdLock).varint(bytes.byteLength / es).varint(s.toBlock).finishCopy(), bytes);
        }
      }
      l.reportedParts = new Map();
      for (const x of l.blocks) { x.sends = null; this.blockArrived(name, l, x); }
    } else {
      for (const x of l.blocks) { this.sendParts(name, l, x); this.blockArrived(name, l, x); }
    }
    this.roundDone(name, l);
  }

  /** Send block `x`'s parts of this round once it holds them (a forwarder waits for its parts). */
  private sendParts(name: string, l: Local, x: Blk): void {
    const sends = x.sends;
    if (sends === null) return;
    const need = sends.reduce((k, s) => k + s.n, 0);
    if (need > x.block.getNumel() && x.got < x.expect) return;
    // the parts leave as views of the block, uncopied: nothing writes the block before UNLOCK,
    // which comes after every receiver has its parts (so after the transport read them). A block
    // that also receives this round (a forwarder between neighbours) appends over its tail: it
    // sends copies.
    const inPlace = x.expect === 0;
    if (inPlace && sends.length > 0) x.sentInPlace = true;
    for (const s of sends) {
      const bytes = x.block.takeTail(s.n, inPlace);
      this.sent.part++;
      l.sentRearranged += bytes.byteLength;
      this.send(s.to, PART, this.enc.reset().string(name).varint(l.gdLock).varint(s.n).varint(s.toBlock).finishCopy(), bytes);
    }
    // an emptied block gives its memory back (the seed frees it)
    if (x.block.getNumel() === 0 && sends.length > 0) x.block.resize(0);
    // only now are its sends done: a part sent to this node's own block is handled within the
    // send, and may end the round (READY, UNLOCK, the block granted) before this line
    x.sends = null;
  }

  private part(from: number, name: string, bytes: Uint8Array, index: number): void {
    const l = this.local(name), x = l.blocks[index];
    if (x === undefined) throw new Error(`array ${name}: a part for block ${index} reached node ${this.rank}, which holds ${l.blocks.length}`);
    // An empty block whose one part of the round this is keeps the part's memory, when the
    // transport received it into shared memory of its own (a socket's or a ring's payload is the
    // handler's; a part from this node is a view of the sender's block): no copy, and no fresh
    // pages faulted in for it (a whole array rearranged onto other nodes, f = 0.5 below).
    if (from !== this.rank && x.expect === 1 && x.got === 0 && x.block.getNumel() === 0 && ownBuffer(bytes) && bytes.byteLength % x.block.elsize === 0) {
      x.block.adopt(bytes.buffer as SharedArrayBuffer, bytes.byteLength / x.block.elsize, bytes.byteLength);
      this.adoptedParts++;
    } else x.block.append(bytes);
    x.got++;
    x.received += bytes.byteLength;
    this.sendParts(name, l, x);
    this.blockArrived(name, l, x);
    this.roundDone(name, l);
  }

  /**
   * Several blocks a node: a block of the last round whose parts are all in, and which sent
   * nothing in place (no view of it travels), is free again now — a CF may work on it while the
   * node's other blocks still receive. Its span, from LOCK to now with the bytes it received, is
   * its arrival on the trace. The last round is the plan's, or a count's delivery of the elements
   * CFs sent by destination; a rearrangement's delivery is not: its plan counts the blocks after it.
   */
  private blockArrived(name: string, l: Local, x: Blk): void {
    if (l.blocks.length === 1 || (l.phase !== PLAN && l.opKind !== 0) || x.early || x.sends !== null || x.expect < 0 || x.got !== x.expect) return;
    if (x.expect === 0 && x.sentInPlace) return;
    x.early = true;
    this.earlyFreed++;
    this.host.trace?.ddaOp(l.lockedAt, this.host.now(), 4, 0, x.received, `${name}[${x.index}]`);
    this.grantNext(l, x);
  }

  /**
   * After a MOVE or a part: a block whose parts of the plan's round are all in, and which sent
   * nothing in place, is free again at once — a CF may work on it while the node's other blocks
   * still receive (its span, from LOCK to now, is its arrival on the trace); with every block's
   * sends made and parts in, the node answers READY.
   */
  private roundDone(name: string, l: Local): void {
    if (l.sendsDone) return;
    let expect = 0;
    for (const x of l.blocks) {
      if (x.sends !== null || x.got !== x.expect) return;
      expect += x.expect;
    }
    l.sendsDone = true;
    if (expect === 0) return;
    this.sent.ready++;
    this.send(l.gdNode, READY, this.enc.reset().string(name).varint(l.gdLock).finishCopy());
    // the round is over here; the next one's parts come only after every READY of this one
    for (const x of l.blocks) { x.got = 0; x.expect = -1; }
  }

  private gotReady(name: string, epoch: number): void {
    const g = this.gd(name, epoch);
    if (--g.pending > 0) return;
    if (g.phase === DELIVER) this.afterDelivery(name, g);
    else if (g.op!.kind === 'count') this.unlock(name, g, this.rank);
    else this.unlock(name, g, this.newGdNode(g.op!));
  }

  /** Where the GD goes after a rearrangement: it stays when its node is among the new ones. */
  private newGdNode(op: GlobalOp): number {
    const nodes = op.nodes!;
    return nodes.includes(this.rank) ? this.rank : nodes[0]!;
  }

  /** The operation is over: every LD unlocks, learning where the GD is (and its queue moves there). */
  private unlock(name: string, g: Global, gdNode: number): void {
    const op = g.op!;
    let total = 0;
    for (const c of g.counts.values()) for (const n of c) total += n;
    const moved = g.moves.reduce((s, m) => s + m.n, 0), es = this.specs.get(name)!.elsize;
    const t1 = this.host.now();
    // the operation as a span on the GD's system thread: the timeline and the exports show it
    this.host.trace?.ddaOp(g.t0, t1, op.kind === 'count' ? 0 : 1, g.exchanged * es, (moved - g.exchanged) * es, name);
    this.onDone({ array: name, kind: op.kind, total, moves: g.moves, t0: g.t0, t1, bytesMoved: moved * es });
    const body = this.enc.reset().string(name).varint(g.epoch).varint(gdNode).finishCopy();
    for (let r = 0; r < this.size; r++) this.send(r, UNLOCK, body);
    this.sent.unlock += this.size;
    this.send(op.from, DONE, this.enc.reset().string(name).varint(op.token).varint(total).finishCopy());
    g.op = null;
    // what the GD knows of the others from now on: after a count, their LDs as they reported
    // them (each sends a STAND if that is no longer so); after a rearrangement, nothing until
    // they tell it (each does at its UNLOCK)
    const st = this.standing.get(name);
    for (let r = 0; r < this.size; r++) {
      if (r === this.rank) continue;
      const s = st?.get(r);
      if (op.kind === 'count' && !g.stale.has(r)) (s ?? this.standingOf(name, r)).counts = [...g.counts.get(r)!];
      else if (s !== undefined) s.counts = null;
    }
    if (gdNode !== this.rank) {
      const left = [...(st?.values() ?? [])].reduce((n, s) => n + s.parts.length, 0);
      if (left > 0) throw new Error(`array ${name}: ${left} part(s) sent ahead to its descriptor on node ${this.rank} are left there as the descriptor moves to node ${gdNode}`);
      this.standing.delete(name);
      // the GD moves: its epoch (the new GD's LOCKs must not repeat a number), then its queue
      this.globals.delete(name);
      this.send(gdNode, GD_MOVE, this.enc.reset().string(name).varint(g.epoch).finishCopy());
      for (const q of g.queue) this.sendOp(gdNode, name, q);
    } else this.startOp(name, g);
  }

  /** UNLOCK of operation `epoch` (a LOCK of the next GD may have come first: then it is stale). */
  private unlocked(name: string, epoch: number, gdNode: number): void {
    const l = this.local(name);
    if (l.gdLock !== epoch) return;
    // this node's part as a span: locked from LOCK to UNLOCK, with the bytes it sent
    this.host.trace?.ddaOp(l.lockedAt, this.host.now(), 2 + l.opKind, l.sentExchanged, l.sentRearranged, name);
    l.gdLock = 0;
    l.gdNode = gdNode;
    for (const x of l.blocks) x.early = false;
    // a count's GD takes this LD as it reported it; a rearrangement's learns it from a STAND now
    l.told = l.opKind === 0 && !l.dirty && gdNode !== this.rank;
    this.grantNext(l);
    this.stand(name, l, false);
  }

  /** The GD of `name` arrives here. */
  private gdArrives(name: string, epoch: number): void {
    const g = new Global();
    g.epoch = epoch;
    this.globals.set(name, g);
    const early = this.early.get(name) ?? [];
    this.early.delete(name);
    for (const op of early) g.queue.push(op);
    this.startOp(name, g);
  }

  // ------------------------------------------------------------------ the channel

  /**
   * A message of the protocol: to this node it is handled at once, not looped through the
   * transport. A global operation on one node is then one synchronous call chain (OP, LOCK,
   * REPORT, MOVE, PART, READY, UNLOCK, DONE were 8 hops through the event loop, each a
   * setImmediate turn or more), and on several nodes the GD's own node skips its hops.
   */
  private send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array): void {
    if (to !== this.rank) { this.post(to, tag, body, payload); return; }
    this.selfSent++;
    this.depth++;
    try { this.receive(to, tag, body, payload); } finally { this.depth--; }
    if (this.depth === 0 && this.wakeOwed) { this.wakeOwed = false; this.control.wake(); }
  }

  /**
   * A message to another node waits in that node's outbox until this turn's work is done, then
   * leaves with the others queued for it as one BATCH (or alone): the arrays whose operations
   * start, report or end in the same turn — a particle code's counts, made ready together by the
   * data that arrived together — share one frame a node pair, not one each. The link's order is
   * kept: a PART, which leaves at once (its bytes may be a block's, uncopied), first sends what
   * was queued before it.
   */
  private post(to: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    if (tag === PART) { this.flushTo(to); this.frames++; this.ch.send(to, tag, body, payload); return; }
    const q = this.outbox.get(to);
    if (q) q.push({ tag, body, payload }); else this.outbox.set(to, [{ tag, body, payload }]);
    if (!this.flushQueued) { this.flushQueued = true; queueMicrotask(this.flush); }
  }

  /** messages to other nodes queued this turn, by node, in send order */
  private readonly outbox = new Map<number, { tag: number; body: Uint8Array; payload: Uint8Array | undefined }[]>();
  private flushQueued = false;
  private readonly batchEnc = new Encoder(256);

  /** The turn's work is done: every outbox leaves. */
  private readonly flush = (): void => {
    this.flushQueued = false;
    // the run ended meanwhile: nobody waits for these any more
    if (this.control.finished) { this.outbox.clear(); return; }
    try { this.flushAll(); } catch (e) { this.control.fault(`dynamic array layer on node ${this.rank}: ${e instanceof Error ? e.message : String(e)}`); }
  };

  /** Every outbox leaves; if the control found the node busy meanwhile, it looks again. */
  private flushAll(): void {
    for (const to of this.outbox.keys()) this.flushTo(to);
    if (this.idleRefused) { this.idleRefused = false; this.wake(); }
  }

  /** the control asked whether the node is idle while an outbox waited (it must look again) */
  private idleRefused = false;

  /**
   * A message from another node: the answers it made (REPORTs to a LOCK, UNLOCKs and DONE to the
   * last REPORT) leave as soon as it is handled — the turn may go on with the node's other work
   * (the runtime pumps after every group of messages that arrived).
   */
  private arrived(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    this.receive(from, tag, body, payload);
    if (this.outbox.size === 0 || this.control.finished) return;
    try { this.flushAll(); } catch (e) { this.control.fault(`dynamic array layer on node ${this.rank}: ${e instanceof Error ? e.message : String(e)}`); }
  }

  private flushTo(to: number): void {
    const q = this.outbox.get(to);
    if (q === undefined) return;
    this.outbox.delete(to);
    this.frames++;
    if (q.length === 1) { const m = q[0]!; this.ch.send(to, m.tag, m.body, m.payload); return; }
    // [n] then per message [tag][body][payload length + 1, or 0: none]; the payloads joined
    let bytes = 0;
    for (const m of q) bytes += m.payload?.byteLength ?? 0;
    const payload = bytes > 0 ? new Uint8Array(bytes) : undefined;
    const e = this.batchEnc.reset().varint(q.length);
    let o = 0;
    for (const m of q) {
      e.u8(m.tag).bytes(m.body);
      if (m.payload === undefined) { e.varint(0); continue; }
      e.varint(m.payload.byteLength + 1);
      payload!.set(m.payload, o);
      o += m.payload.byteLength;
    }
    this.batched += q.length;
    this.ch.send(to, BATCH, e.finishCopy(), payload);
  }

  /** The messages of a BATCH, in order, as if each had come alone (the control looks after the last). */
  private unbatch(from: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    const d = new Decoder(body);
    let o = 0;
    this.depth++;
    // the CFs waiting for operations the batch ends get their answers after it: the protocol's
    // work (every operation's end, the UNLOCKs) is not queued behind the runtime's completions
    const answers: (() => void)[] = [];
    const outer = this.answers === null;
    if (outer) this.answers = answers;
    try {
      for (let n = d.varint(); n > 0; n--) {
        const tag = d.u8(), b = d.bytes(), k = d.varint();
        let p: Uint8Array | undefined;
        if (k > 0) {
          if (payload === undefined || o + k - 1 > payload.byteLength) throw new Error(`a batch from node ${from} names more payload than it carries`);
          p = payload.subarray(o, o + k - 1);
          o += k - 1;
        }
        this.receive(from, tag, b, p);
      }
    } finally {
      this.depth--;
      if (outer) this.answers = null;
    }
    for (const f of answers) f();
    if (this.depth === 0 && this.wakeOwed) { this.wakeOwed = false; this.control.wake(); }
  }

  /** answers to this node's CFs held back while a batch is handled (null: none is) */
  private answers: (() => void)[] | null = null;

  /** frames this layer gave the transport, and the messages that travelled inside batches (tests, benchmarks) */
  frames = 0;
  batched = 0;

  /** self-sent messages being handled (nested), and a wake-up of the control owed when they are */
  private depth = 0;
  private wakeOwed = false;

  /**
   * The node may be idle now: the control looks. Not in the middle of a chain of messages to this
   * node — it would see the operation between two messages with none in flight, and call it a hang.
   */
  private wake(): void {
    if (this.depth > 0) this.wakeOwed = true; else this.control.wake();
  }

  /** messages handled at once because they were for this node (tests count them) */
  selfSent = 0;

  private receive(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    if (this.control.finished) return;
    const d = new Decoder(body);
    try {
      if (tag === BATCH) { this.unbatch(from, body, payload); return; }
      const name = d.string();
      switch (tag) {
        case OP:
          this.declare({ name, elsize: d.varint(), capacity: d.varint(), order: d.u8() === 1 ? 'ordered' : 'unordered', home: d.varint(), blocks: d.varint() });
          this.gdOp(name, this.decodeOp(d));
          break;
        case LOCK: {
          const epoch = d.varint();
          this.declare({ name, elsize: d.varint(), capacity: d.varint(), order: d.u8() === 1 ? 'ordered' : 'unordered', home: d.varint(), blocks: d.varint() });
          this.lock(from, name, epoch, d.u8());
          break;
        }
        case REPORT: {
          const epoch = d.varint(), counts = Array.from({ length: d.varint() }, () => d.varint());
          const deliveries = Array.from({ length: d.varint() }, () => ({ from, to: d.varint(), n: d.varint(), parts: d.varint() }));
          this.gotReport(from, name, epoch, counts, deliveries, payload);
          break;
        }
        case MOVE: {
          d.varint();
          const phase = d.u8();
          const blocks = Array.from({ length: d.varint() }, () => ({ expect: d.varint(), incoming: d.varint() }));
          const sends = Array.from({ length: d.varint() }, () => ({ fromBlock: d.varint(), to: d.varint(), toBlock: d.varint(), n: d.varint() }));
          this.move(name, phase, blocks, sends);
          break;
        }
        case PART: { d.varint(); d.varint(); const index = d.varint(); this.part(from, name, payload ?? new Uint8Array(0), index); break; }
        case READY: this.gotReady(name, d.varint()); break;
        case UNLOCK: { const epoch = d.varint(); this.unlocked(name, epoch, d.varint()); break; }
        case GD_MOVE: this.gdArrives(name, d.varint()); break;
        case STAND: {
          this.declare({ name, elsize: d.varint(), capacity: d.varint(), order: d.u8() === 1 ? 'ordered' : 'unordered', home: d.varint(), blocks: d.varint() });
          const known = d.u8() === 1;
          this.gotStand(from, name, known, known ? Array.from({ length: d.varint() }, () => d.varint()) : null, payload);
          break;
        }
        case DONE: { const token = d.varint(); this.done(token, d.varint()); break; }
        default: throw new Error(`unknown dynamic array message ${tag} from node ${from}`);
      }
    } catch (e) {
      this.control.fault(`dynamic array layer on node ${this.rank}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private done(token: number, total: number): void {
    const a = this.asked.get(token);
    if (a === undefined) throw new Error(`a dynamic array operation ended that no CF of node ${this.rank} asked for`);
    this.asked.delete(token);
    if (this.answers !== null) this.answers.push(() => a.reply.answer(total)); else a.reply.answer(total);
  }

  // ------------------------------------------------------------------ participant

  /** idle unless messages wait in an outbox for the end of this turn */
  idle(): boolean {
    if (this.outbox.size === 0) return true;
    this.idleRefused = true;
    return false;
  }

  /** Global operations asked for or running, and parts sent by destination that no operation delivered yet (lost if the run ended). */
  live(): number {
    let n = this.asked.size;
    for (const g of this.globals.values()) n += (g.op ? 1 : 0) + g.queue.length;
    for (const l of this.locals.values()) n += l.pending.size + l.reportedParts.size;
    for (const m of this.standing.values()) for (const s of m.values()) if (s.parts.length > 0) n++;
    return n;
  }

  waits(): Wait[] {
    const out: Wait[] = [];
    const on = this.size > 1 ? ` on node ${this.rank}` : '';
    for (const [name, l] of this.locals) {
      const k = l.blocks.length;
      for (const x of l.blocks) {
        for (const w of x.queue) {
          const by = x.holder !== -1 ? `held by ${x.holderText}` : l.gdLock !== 0 && !x.early ? `locked by a global operation of the array (its descriptor on node ${l.gdNode})` : 'free';
          out.push({ text: `${w.who} waits for ${blockText(x.index, k, true)} of dynamic array ${name}${on}, ${by}` });
        }
        if (l.gdLock !== 0 && !l.reported && x.holder !== -1) out.push({ text: `a global operation of dynamic array ${name} waits for its ${blockText(x.index, k)}${on}, held by ${x.holderText}` });
      }
    }
    for (const a of this.asked.values()) out.push({ text: `${a.who} waits for the global ${a.kind} of dynamic array ${a.array}` });
    for (const [name, l] of this.locals) {
      for (const [to, q] of [...l.pending, ...l.reportedParts]) {
        const n = q.reduce((k, b) => k + b.byteLength, 0) / l.block.elsize;
        out.push({ text: `${n} element(s) of dynamic array ${name} sent by destination from node ${this.rank} to node ${to} wait for a global operation of the array (globalCount or rearrange) to deliver them` });
      }
    }
    // sent ahead, here at the GD
    for (const [name, m] of this.standing) {
      for (const [from, s] of m) {
        if (s.parts.length === 0) continue;
        const n = s.parts.reduce((k, b) => k + b.byteLength, 0) / this.local(name).block.elsize;
        out.push({ text: `${n} element(s) of dynamic array ${name} sent by destination from node ${from} to node ${this.rank} wait for a global operation of the array (globalCount or rearrange) to deliver them` });
      }
    }
    return out;
  }

  hangSummary(n: number): string { return `${n} wait(s) for dynamic arrays never end`; }

  // ------------------------------------------------------------------ requests of ucodes

  /** The request kinds ucodes use (dda-worker.ts holds blocks with them; ucode/dda.ts asks the rest). */
  register(desk: RequestDesk): void {
    const resource = (p: unknown): string => {
      const { array, index } = p as ArrayRequest;
      return `dynamic array ${array}, ${blockText(index ?? 0, this.specs.get(array)?.blocks ?? 1)} of node ${this.rank}`;
    };
    const declared = (r: Request): ArrayRequest => {
      const p = r.payload as ArrayRequest;
      if (p.spec) this.declare({ ...p.spec, name: p.array });
      return p;
    };
    desk.registerReserver('dda', (h, cf, who) => this.reserve(h as DdaHandle, cf, who));
    desk.register('dda.acquire', {
      wait: 'descriptor', resource,
      handle: (r, reply) => { const p = declared(r); this.acquire(p.array, r.cf, r.who(), reply, p.index); },
    });
    desk.register('dda.release', {
      wait: 'descriptor', resource,
      handle: (r) => { const p = r.payload as ArrayRequest & { buffer?: SharedArrayBuffer; numel: number; size: number; parts?: DdaPart[] }; this.release(p.array, r.cf, p.buffer, p.numel, p.size, p.parts, p.index); },
    });
    desk.register('dda.count', {
      wait: 'descriptor', resource: (p) => `the global count of dynamic array ${(p as ArrayRequest).array}`,
      handle: (r, reply) => { const p = declared(r); this.global(p.array, { kind: 'count' }, r.cf, r.who(), reply); },
    });
    // the language's global_count asks here, on the system thread: its round trip to the other
    // nodes holds no worker (ucode/builtins.ts is the same call made from a worker)
    desk.registerCall(GLOBAL_COUNT.symbol, {
      kind: 'dda.count',
      payload: (args) => arrayRequest(((args[0] as DfValue | null)?.v ?? {}) as Parameters<typeof arrayRequest>[0]),
      outputs: (total) => [intValue(total as number)],
    });
    // and so does the language's rearrange: its migration holds no worker either (its arguments
    // are checked as on a worker: ucode/builtins.ts rearrangeCall)
    desk.registerCall(REARRANGE.symbol, {
      kind: 'dda.rearrange',
      payload: (args, keys) => {
        const req = arrayRequest(((args[0] as DfValue | null)?.v ?? {}) as Parameters<typeof arrayRequest>[0]);
        const W = args[5] as DfValue | null;
        return { ...req, ...rearrangeCall(req.array, args[1] as number, args[2] as number, args[4] as number, { name: displayDf(keys[5] ?? ''), type: TYPE_NAMES[W?.t ?? 0], v: W?.v }) };
      },
      outputs: (total) => [intValue(total as number)],
    });
    desk.register('dda.rearrange', {
      wait: 'descriptor', resource: (p) => `a rearrangement of dynamic array ${(p as ArrayRequest).array}`,
      handle: (r, reply) => {
        const p = declared(r) as ArrayRequest & { nodes: number[]; weights?: number[]; neighbours?: boolean };
        this.global(p.array, { kind: 'rearrange', nodes: p.nodes, weights: p.weights, neighbours: p.neighbours }, r.cf, r.who(), reply);
      },
    });
  }
}

/** Bytes that are the whole of a shared buffer: a payload the transport received into memory of its own. */
function ownBuffer(bytes: Uint8Array): boolean {
  return bytes.buffer instanceof SharedArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.byteLength > 0;
}

/** Parts one after another in one buffer. */
function joined(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((k, b) => k + b.byteLength, 0));
  let o = 0;
  for (const b of parts) { out.set(b, o); o += b.byteLength; }
  return out;
}

/** What a ucode's request about an array carries: its name, and its spec the first time. */
export interface ArrayRequest { array: string; spec?: Omit<ArraySpec, 'name'>; /** which of the node's blocks (default 0) */ index?: number }
