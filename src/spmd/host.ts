// The SPMD layer on a node's system thread: it starts the node's ranks as worker threads, owns
// the node's board and shared arrays, does for its ranks what only it can (allocate, reach other
// nodes over the layer's channel, hand locks over to other nodes' ranks) and tells the run's
// control whether its ranks are done, running or parked — so the end of the run and a hang report
// (a barrier some rank never reaches, a mismatched collective) see them.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { RANK_WORKER } from './paths.js';
import { Decoder, Encoder } from '../runtime/transport/codec.js';
import { TAG_BITS, type Channel, type Router } from '../runtime/transport/router.js';
import { CHANNEL } from '../runtime/cluster/channels.js';
import type { Control } from '../runtime/cluster/control.js';
import type { Participant, Wait } from '../runtime/cluster/layer.js';
import { cpuSet } from '../core/cpus.js';
import { ABORT, ARRIVE, BARRIER, collectiveWord, boardWords, bump, DIRECT, DONE, EPOCH, HANDLED, LANDED, READSIZE, lockWord, PARKED, PARKS, POSTED, rankBase, RANK_WORDS, releaseIfComplete, REPLIES, SLEEPON, SLEEPS, SLEEPWORD, STATE, WAITERS, wake } from './board.js';
import { barrierMissing, type BoardView } from './missing.js';
import { ELEM_TYPES, SCRATCH_SLOTS, SLOT_VALUES, type Answer, type ElemType, type RankInit, type RankRequest } from './protocol.js';
import { Layout } from './layout.js';
import { machineId } from '../runtime/transport/local.js';
import { SEG_BARRIER, SEG_EPOCH, SEG_EPOCH_SLEEPERS, SEG_SLEEPERS, segArrive, segmentsAvailable, SegmentFile, segNodeChanges, segNodePhase, segRank } from './segment.js';

/**
 * Spin before sleeping in a wait for ranks of this node: the brief's ping-pong through shared
 * memory costs 2.2–2.5 µs per round trip with ~20 µs of spinning and 92–95 µs when the waiter
 * sleeps at once, so a wake-up costs the woken 20–50 µs and its waker 13–14 µs. The spin must
 * outlast a wake-up: with 20 µs a rank woken late made its partner sleep at the next barrier, and
 * the two took turns sleeping (the in-process barrier was bimodal between runs, 7–111 µs).
 */
export const SPIN_MS = 0.1;
/**
 * Spin before sleeping in a wait for another node: a TCP loopback round trip here is 15–70 µs
 * and the request crosses the node's system thread on each side, so a reply comes within
 * ~150 µs on an idle machine; sleeping would add a wake-up (20–50 µs) to each.
 */
export const REMOTE_SPIN_MS = 0.3;
/**
 * When the node's threads on a CPU outnumber its CPUs, a spinning rank holds the core the thread
 * it waits for needs: spin only this briefly. A wait on another node needs the node's system
 * thread besides (it takes the reply from the socket): with 2 node processes of one rank on 2
 * cores, ranks spinning their full 300 µs left both system threads without a core until the
 * spins ran out, and a barrier across the processes took 388–441 µs.
 */
export const CROWDED_SPIN_MS = 0.005;
/** Bytes of a remote read sent per message: the reader copies one chunk while the next travels. */
export const READ_CHUNK = 64 * 1024;

/** How often the node looks whether its ranks are all parked for good (besides when one says it parks). */
const IDLE_POLL_MS = 20;

const EMPTY = new Uint8Array(0);
const FLAGS = 1, GET = 2, GOT = 3, PUT = 4, PUT_ACK = 5, LOCK = 6, GRANT = 7, UNLOCK = 8, ARRIVED = 9, ALLOCATED = 10;
/** the start's handshake over the host segment (segment.ts): not counted by tag, once per run */
const SEGMENT = 11, JOINED = 12, HOSTMODE = 13;
/** the layer's message tags on its channel (tests count the messages an operation costs) */
export const SPMD_TAGS = { FLAGS, GET, GOT, PUT, PUT_ACK, LOCK, GRANT, UNLOCK, ARRIVED, ALLOCATED } as const;
const TAG_NAMES: Record<number, string> = Object.fromEntries(Object.entries(SPMD_TAGS).map(([k, v]) => [v, k]));

export interface SpmdNodeOptions {
  /** the bundled program (ESM file) and its arguments */
  program: string;
  args?: string[];
  /** ranks in the whole run (dealt to nodes in equal blocks) */
  threads: number;
  /** the run's clock origin (trace/clock.ts newRunOrigin), decimal */
  origin: string;
  trace?: { dir: string };
  spinMs?: number;
  remoteSpinMs?: number;
  /** CPUs the node may count on (default: this process's; nodes on one machine share them) */
  cpus?: number;
  /**
   * Barriers and collectives' counters among node processes of one machine in their shared memory (segment.ts) when
   * every node is on this machine (default: unless LUNA_SPMD_SHM=0 or the addon is not built);
   * false: through the sockets.
   */
  shm?: boolean;
}

/** What a node's ranks cost its system thread and themselves (tests assert them; no timings). */
export interface SpmdCounts {
  /** requests the ranks posted to the system thread, by kind */
  requests: Record<string, number>;
  /** answers the system thread posted back to its ranks */
  answers: number;
  /** per rank of this node: times it went to sleep in a wait, and times it parked (told the node) */
  sleeps: number[];
  parks: number[];
  /** the layer's messages this node sent to other nodes, and those it received, by tag (SPMD_TAGS) */
  sent: Record<string, number>;
  received: Record<string, number>;
  /** messages the node's ranks wrote to other nodes' sockets themselves (barrier arrivals) */
  direct: number;
}

interface ArrayRec { buffer: SharedArrayBuffer; bytes: number; perRank: number; desc: string; rank: number; site: string }

export class SpmdNode implements Participant {
  readonly name = 'spmd';
  readonly board: Int32Array;
  readonly rank0: number;
  readonly perNode: number;
  private readonly ch: Channel;
  private readonly enc = new Encoder(256);
  private readonly workers: Worker[] = [];
  private readonly ports: MessagePort[] = [];
  private readonly arrays = new Map<number, ArrayRec>();
  /** what other nodes allocated (arrays this node has not yet allocated): checked when it does */
  private readonly remoteAllocs = new Map<number, { desc: string; rank: number; site: string }>();
  private handled = 0;
  private readonly requests: Record<string, number> = {};
  private answers = 0;
  /** the ranks' direct frames already added to the router's count of messages sent */
  private directCounted = 0;
  private readonly sent: Record<string, number> = {};
  private readonly received: Record<string, number> = {};
  private done = 0;
  private readonly parks: ({ text: string; site: string; barrier?: { head: string; phase: number } } | undefined)[] = [];
  /** requests sent to other nodes: who waits for the answer */
  private readonly pending = new Map<number, { rank: number; id: number; landed: number; size: number }>();
  /** each rank's inbox, where its remote reads land (the rank's own SharedArrayBuffer) */
  private readonly inboxes: (Uint8Array | undefined)[] = [];
  /** even: this thread's requests; odd (2·rank + 1): a remote read a rank wrote itself */
  private nextReq = 2;
  /** other nodes' ranks queued for a lock whose home is here */
  private readonly lockQueues = new Map<number, { rank: number; node: number; req: number }[]>();
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;
  /** a rank's error, the first (the run fails with it) */
  fault?: string;
  /** the host segment this node opened (node 0: created) while the start's handshake decides */
  private segFile: SegmentFile | undefined;
  /** every node of the run maps the segment: barriers and collectives' counters are there */
  private hostMode = false;
  /** node 0: the other nodes' answers to SEGMENT (true: opened it) */
  private joined: boolean[] = [];
  /** the segment's barrier arrivals and counter changes already counted as messages (own node's, the others' summed) */
  private segSent = 0;
  private segReceived = 0;
  private started = false;
  /** another node: HOSTMODE arrived (its ranks start once start() was called too) */
  private decided = false;
  /** resolves once every worker of this node has exited */
  readonly exited: Promise<void>;
  private exitedCount = 0;
  private settleExited!: () => void;

  constructor(private readonly router: Router, private readonly control: Control, private readonly o: SpmdNodeOptions) {
    const nodes = router.size;
    if (!(Number.isInteger(o.threads) && o.threads >= nodes && o.threads % nodes === 0)) {
      throw new Error(`${o.threads} rank(s) cannot be dealt to ${nodes} node(s) equally: give a multiple of ${nodes}`);
    }
    this.perNode = o.threads / nodes;
    this.rank0 = router.rank * this.perNode;
    this.board = new Int32Array(new SharedArrayBuffer(boardWords(o.threads) * 4));
    this.exited = new Promise((r) => { this.settleExited = r; });
    // the collectives' scratch array (#0): SCRATCH_SLOTS slots of SLOT_VALUES f64 per rank
    const per = SCRATCH_SLOTS * SLOT_VALUES;
    this.arrays.set(0, { buffer: new SharedArrayBuffer(this.perNode * per * 8), bytes: 8, perRank: per, desc: 'scratch', rank: -1, site: '' });
    this.ch = router.channel(CHANNEL.spmd, 'spmd', (from, tag, body, payload) => this.receive(from, tag, body, payload), { counted: () => true });
    control.register(this);
    void control.done.then(() => this.stop());
  }

  /**
   * Start this node's ranks — on a run of several nodes once the start's handshake decided whether
   * barriers go through the host segment: node 0 creates it and tells the others where it is
   * (SEGMENT); each says whether it opened it (JOINED); node 0 tells all whether every node did
   * (HOSTMODE) and starts its ranks, the others theirs when told.
   */
  start(): void {
    this.started = true;
    if (this.router.size === 1) { this.startRanks(); return; }
    if (this.router.rank !== 0) { if (this.decided) this.startRanks(); return; }
    const want = this.o.shm ?? segmentsAvailable();
    this.segFile = want ? SegmentFile.create(this.router.size, this.o.threads) : undefined;
    const b = this.enc.reset().string(this.segFile?.path ?? '').string(machineId()).finishCopy();
    for (let n = 1; n < this.router.size; n++) this.ch.send(n, SEGMENT, b);
  }

  /** Another node answered SEGMENT: once all did, every node learns whether barriers use the segment. */
  private nodeJoined(from: number, ok: boolean): void {
    this.joined[from] = ok;
    for (let n = 1; n < this.router.size; n++) if (this.joined[n] === undefined) return;
    const on = this.segFile !== undefined && this.joined.slice(1).every(Boolean);
    // every node holds a descriptor of it now: the name is no longer needed
    this.segFile?.unlink();
    if (!on) { this.segFile?.close(); this.segFile = undefined; }
    const b = this.enc.reset().bool(on).finishCopy();
    for (let n = 1; n < this.router.size; n++) this.ch.send(n, HOSTMODE, b);
    this.hostMode = on;
    this.startRanks();
  }

  private startRanks(): void {
    if (this.stopped) return;
    const cpus = Math.max(1, this.o.cpus ?? cpuSet().count);
    const spinMs = this.o.spinMs ?? SPIN_MS;
    const remoteSpinMs = this.o.remoteSpinMs ?? REMOTE_SPIN_MS;
    const links = Array.from({ length: this.router.size }, (_, n) => (n === this.router.rank ? null : this.router.transport.directLink?.(n) ?? null));
    const arrivedWire = ((CHANNEL.spmd << TAG_BITS) | ARRIVED) >>> 0, getWire = ((CHANNEL.spmd << TAG_BITS) | GET) >>> 0;
    for (let i = 0; i < this.perNode; i++) {
      const rank = this.rank0 + i;
      const { port1, port2 } = new MessageChannel();
      const init: RankInit = {
        rank, threads: this.o.threads, node: this.router.rank, nodes: this.router.size,
        board: this.board.buffer as SharedArrayBuffer, scratch: this.arrays.get(0)!.buffer,
        program: this.o.program, args: this.o.args ?? [], origin: this.o.origin,
        trace: this.o.trace && { dir: this.o.trace.dir, thread: i + 1 }, spinMs, remoteSpinMs, cpus, crowdedSpinMs: CROWDED_SPIN_MS, links, arrivedWire, getWire,
        ...(this.hostMode ? { segment: { fd: this.segFile!.fd, bytes: this.segFile!.bytes } } : {}),
      };
      const w = new Worker(RANK_WORKER, { workerData: { init, port: port2 }, transferList: [port2] });
      port1.on('message', (m: RankRequest) => this.request(i, m));
      w.on('error', (e) => this.rankFault(`rank ${rank}: ${e instanceof Error ? e.stack ?? e.message : String(e)}`));
      w.on('exit', () => {
        // what the rank posted last (its error) may not have been delivered yet
        for (let m = receiveMessageOnPort(port1); m !== undefined; m = receiveMessageOnPort(port1)) this.request(i, m.message as RankRequest);
        if (Atomics.load(this.board, rankBase(rank) + STATE) !== DONE && !this.stopped) this.rankFault(`rank ${rank}: its worker thread exited before the program returned`);
        if (++this.exitedCount === this.perNode) this.settleExited();
      });
      this.workers.push(w);
      this.ports.push(port1);
    }
    this.poll = setInterval(() => this.look(), IDLE_POLL_MS);
    this.poll.unref();
  }

  // ------------------------------------------------------------------ participant

  idle(): boolean {
    // the control reads the router's counts after asking this: frames the ranks wrote themselves count as sent
    const direct = Atomics.load(this.board, DIRECT);
    this.router.sent += direct - this.directCounted;
    this.directCounted = direct;
    if (this.hostMode) this.countSegmentArrivals();
    if (this.handled !== Atomics.load(this.board, POSTED)) return false;
    if (this.done === this.perNode) return true;
    // every rank returned or asleep on a word that has not moved since: only a change (a message
    // from another node, a rank of this node) can wake one, and none runs to make one
    for (let i = 0; i < this.perNode; i++) {
      const b = rankBase(this.rank0 + i);
      const st = Atomics.load(this.board, b + STATE);
      if (st === DONE) continue;
      if (st !== PARKED || this.sleepWord(Atomics.load(this.board, b + SLEEPWORD)) !== Atomics.load(this.board, b + SLEEPON)) return false;
    }
    return true;
  }

  /** The value of the word a parked rank sleeps on: a board word, or (−1 − w) the segment's word w. */
  private sleepWord(w: number): number {
    return w >= 0 ? Atomics.load(this.board, w) : Atomics.load(this.segFile!.segment.words, -1 - w);
  }

  /**
   * A node's barrier arrivals and collective counters through the segment count as messages for
   * the run's termination detection, as ARRIVED and FLAGS frames would: each of this node's
   * phases and changes as sent to every other node, each other node's as received here. Two
   * waves alike then also mean nothing moved in the segment between them.
   */
  private countSegmentArrivals(): void {
    const w = this.segFile!.segment.words, me = this.router.rank, nodes = this.router.size;
    const of = (n: number): number => Atomics.load(w, segNodePhase(n)) + Atomics.load(w, segNodeChanges(n));
    const mine = of(me);
    let others = 0;
    for (let n = 0; n < nodes; n++) if (n !== me) others += of(n);
    this.router.sent += (mine - this.segSent) * (nodes - 1);
    this.router.received += others - this.segReceived;
    this.segSent = mine;
    this.segReceived = others;
  }

  live(): number {
    return this.perNode - this.done;
  }

  waits(): Wait[] {
    const out: Wait[] = [];
    for (let i = 0; i < this.perNode; i++) {
      const rank = this.rank0 + i, p = this.parks[i];
      const st = Atomics.load(this.board, rankBase(rank) + STATE);
      if (st !== PARKED || !p) continue;
      // a barrier's line is read again now: its rank slept through the arrivals since it parked
      const text = p.barrier ? p.barrier.head + barrierMissing(this.view, p.barrier.phase) : p.text;
      out.push({ text: `rank ${rank}${this.router.size > 1 ? ` on node ${this.router.rank}` : ''} ${text} (at ${p.site})` });
    }
    return out;
  }

  /** this node's board, for reading who a wait waits for */
  private get view(): BoardView {
    const board = this.board, seg = this.hostMode ? this.segFile!.segment.words : undefined, nodes = this.router.size;
    // with the host segment every rank's barrier arrivals are there (none are mirrored on the board)
    return {
      threads: this.o.threads, nodes, node: this.router.rank, perNode: this.perNode, everyRank: seg !== undefined,
      word: (t, w) => (seg && w === ARRIVE ? Atomics.load(seg, segArrive(nodes, t)) : seg && collectiveWord(w) ? Atomics.load(seg, segRank(nodes, t) + w) : Atomics.load(board, rankBase(t) + w)),
    };
  }

  hangSummary(n: number): string {
    return `${n} SPMD rank(s) wait for other ranks that never come`;
  }

  /** A look whether the node became idle (a rank parked): the run's control then decides. */
  private look(): void {
    if (!this.stopped && this.idle()) this.control.wake();
  }

  // ------------------------------------------------------------------ the ranks' requests

  private answer(i: number, a: Answer): void {
    this.answers++;
    this.ports[i]!.postMessage(a);
    const w = rankBase(this.rank0 + i) + REPLIES;
    Atomics.add(this.board, w, 1);
    wake(this.board, w);
  }

  private rankFault(message: string): void {
    if (this.fault !== undefined || this.stopped) return;
    this.fault = message;
    this.control.fault(message);
  }

  private request(i: number, m: RankRequest): void {
    this.handled++;
    this.requests[m.k] = (this.requests[m.k] ?? 0) + 1;
    const rank = this.rank0 + i;
    try {
      switch (m.k) {
        case 'alloc': this.answer(i, this.alloc(rank, m)); break;
        case 'get': case 'put': {
          const req = (this.nextReq += 2);
          this.pending.set(req, { rank: i, id: m.id, landed: 0, size: m.k === 'get' ? m.size : 0 });
          const e = this.enc.reset().varint(req).varint(m.arr).varint(m.owner).varint(m.local);
          if (m.k === 'get') this.send(this.nodeOf(m.owner), GET, e.varint(m.count).finishCopy());
          else this.send(this.nodeOf(m.owner), PUT, e.finishCopy(), m.bytes);
          break;
        }
        case 'inbox': this.inboxes[i] = new Uint8Array(m.buffer); break;
        case 'lock': {
          const req = (this.nextReq += 2);
          this.pending.set(req, { rank: i, id: m.id, landed: 0, size: 0 });
          this.send(this.nodeOf(m.lock % this.o.threads), LOCK, this.enc.reset().varint(req).varint(m.lock).varint(rank).bool(m.attempt).finishCopy());
          break;
        }
        case 'unlock': {
          const home = this.nodeOf(m.lock % this.o.threads);
          if (home === this.router.rank) { this.handOver(m.lock, rank); break; }
          // a release the rank awaits (id: through the host segment a barrier would overtake it) is acknowledged
          let req = 0;
          if (m.id) { req = (this.nextReq += 2); this.pending.set(req, { rank: i, id: m.id, landed: 0, size: 0 }); }
          this.send(home, UNLOCK, this.enc.reset().varint(m.lock).varint(rank).varint(req).finishCopy());
          break;
        }
        case 'flags': {
          const body = this.enc.reset().varint(m.rank).varint(m.words.length);
          for (const w of m.words) body.svarint(w);
          const b = body.finishCopy();
          this.toOthers(FLAGS, b);
          break;
        }
        case 'arrive': {
          // every rank of this node arrived at a barrier phase: one message per other node (those
          // the arriving rank could not write to itself)
          const b = this.enc.reset().varint(this.router.rank).varint(m.phase).finishCopy();
          if (m.to) for (const n of m.to) this.send(n, ARRIVED, b);
          else this.toOthers(ARRIVED, b);
          break;
        }
        case 'park': this.parks[i] = m; setImmediate(() => this.look()); break;
        case 'done': this.done++; this.control.wake(); break;
        case 'fault': this.done++; this.rankFault(m.message); break;
      }
      // what it sent is written now, and a rank may write to the sockets itself again (HANDLED)
      this.router.flush();
      Atomics.store(this.board, HANDLED, this.handled);
    } catch (e) {
      Atomics.store(this.board, HANDLED, this.handled);
      if (m.k === 'get') {
        // the rank waits on its LANDED word: -1 sends it to the answer
        const w = rankBase(rank) + LANDED;
        Atomics.store(this.board, w, -1);
        wake(this.board, w);
      }
      if (m.id) this.answer(i, { id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) });
      else this.control.fail(e);
    }
  }

  private nodeOf(rank: number): number {
    return Math.floor(rank / this.perNode);
  }

  private alloc(rank: number, m: Extract<RankRequest, { k: 'alloc' }>): Answer {
    const desc = `${m.length} ${m.type} element(s) in blocks of ${m.block}`;
    const had = this.arrays.get(m.arr);
    if (had) {
      if (had.desc !== desc) return { id: m.id, ok: false, error: `mismatched allAlloc of shared array #${m.arr}: this rank asked for ${desc}, rank ${had.rank} for ${had.desc} (at ${had.site})` };
      return { id: m.id, ok: true, value: had.buffer };
    }
    const l = new Layout(m.length, m.block, this.o.threads);
    const bytes = ELEM_TYPES[m.type as ElemType].BYTES_PER_ELEMENT;
    const rec: ArrayRec = { buffer: new SharedArrayBuffer(this.perNode * l.perRank * bytes), bytes, perRank: l.perRank, desc, rank, site: m.site };
    this.arrays.set(m.arr, rec);
    if (this.router.size > 1) {
      // every node checks its allocation against the others' (a mismatch across nodes fails the run)
      const b = this.enc.reset().varint(m.arr).string(desc).varint(rank).string(m.site).finishCopy();
      this.toOthers(ALLOCATED, b);
      const other = this.remoteAllocs.get(m.arr);
      this.remoteAllocs.delete(m.arr);
      if (other) this.checkAlloc(m.arr, rec, other);
    }
    return { id: m.id, ok: true, value: rec.buffer };
  }

  /** One message of the layer to another node (counted by tag). */
  private send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array): void {
    const name = TAG_NAMES[tag]!;
    this.sent[name] = (this.sent[name] ?? 0) + 1;
    this.ch.send(to, tag, body, payload);
  }

  /** The same message to every other node. */
  private toOthers(tag: number, b: Uint8Array): void {
    for (let n = 0; n < this.router.size; n++) if (n !== this.router.rank) this.send(n, tag, b);
  }

  private checkAlloc(arr: number, mine: { desc: string; rank: number; site: string }, other: { desc: string; rank: number; site: string }): void {
    if (mine.desc === other.desc) return;
    this.rankFault(`rank ${mine.rank}: allAlloc at ${mine.site}: mismatched allAlloc of shared array #${arr}: this rank asked for ${mine.desc}, rank ${other.rank} on node ${this.nodeOf(other.rank)} for ${other.desc} (at ${other.site})`);
  }

  // ------------------------------------------------------------------ other nodes

  private bytesOf(arr: number, owner: number, local: number, count: number): Uint8Array {
    const a = this.arrays.get(arr);
    if (!a) throw new Error(`shared array #${arr} is not allocated on node ${this.router.rank}`);
    const at = ((owner - this.rank0) * a.perRank + local) * a.bytes;
    return new Uint8Array(a.buffer, at, count * a.bytes);
  }

  private reply(req: number, a: Omit<Answer, 'id'>): void {
    const p = this.pending.get(req);
    if (!p) throw new Error(`an answer to unknown SPMD request ${req}`);
    this.pending.delete(req);
    this.answer(p.rank, { id: p.id, ...a });
  }

  /** A chunk of the reply to a remote read: into the rank's inbox, and the rank told how much landed. */
  private landed(req: number, chunk: Uint8Array): void {
    let p = this.pending.get(req);
    if (!p && (req & 1) === 1) {
      // a read the rank asked itself: how much it wants and how much landed are on its words
      const i = (req - 1) / 2 - this.rank0;
      if (i >= 0 && i < this.perNode) {
        const b = rankBase(this.rank0 + i);
        p = { rank: i, id: 0, landed: Atomics.load(this.board, b + LANDED), size: Atomics.load(this.board, b + READSIZE) };
      }
    }
    if (!p) throw new Error(`an answer to unknown SPMD request ${req}`);
    const inbox = this.inboxes[p.rank];
    if (!inbox || p.landed + chunk.length > p.size || p.size > inbox.length) throw new Error(`a remote read's reply overflows rank ${this.rank0 + p.rank}'s inbox`);
    inbox.set(chunk, p.landed);
    p.landed += chunk.length;
    const w = rankBase(this.rank0 + p.rank) + LANDED;
    Atomics.store(this.board, w, p.landed);
    if (p.landed < p.size) return;
    // a spinning rank copies each chunk as it lands; a sleeping one is woken once, at the end
    // (a wake-up per chunk would cost this thread 13 µs and the rank 20–50 µs each)
    wake(this.board, w);
    this.pending.delete(req);
  }

  private receive(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    if (this.stopped) return;
    const name = TAG_NAMES[tag] ?? String(tag);
    if (tag < SEGMENT) this.received[name] = (this.received[name] ?? 0) + 1;
    const d = new Decoder(body);
    try {
      switch (tag) {
        case FLAGS: {
          const base = rankBase(d.varint()), n = d.varint();
          for (let i = 0; i < n; i += 2) { const w = d.svarint(), v = d.svarint(); if (w < RANK_WORDS) Atomics.store(this.board, base + w, v); }
          bump(this.board);
          break;
        }
        case ARRIVED: {
          const node = d.varint(), phase = d.varint();
          for (let t = node * this.perNode; t < (node + 1) * this.perNode; t++) {
            const w = rankBase(t) + ARRIVE;
            if (Atomics.load(this.board, w) < phase) Atomics.store(this.board, w, phase);
          }
          releaseIfComplete(this.board, this.o.threads, phase);
          break;
        }
        case SEGMENT: {
          const path = d.string(), machine = d.string();
          const f = path && machine === machineId() && (this.o.shm ?? segmentsAvailable()) ? SegmentFile.open(path, this.router.size, this.o.threads) : undefined;
          this.segFile = f;
          this.ch.send(0, JOINED, this.enc.reset().bool(f !== undefined).finishCopy());
          break;
        }
        case JOINED: this.nodeJoined(from, d.bool()); break;
        case HOSTMODE: {
          this.hostMode = d.bool();
          this.decided = true;
          if (!this.hostMode) { this.segFile?.close(); this.segFile = undefined; }
          if (this.started) this.startRanks();
          break;
        }
        case ALLOCATED: {
          const arr = d.varint(), other = { desc: d.string(), rank: d.varint(), site: d.string() };
          const mine = this.arrays.get(arr);
          if (mine) this.checkAlloc(arr, mine, other);
          else if (!this.remoteAllocs.has(arr)) this.remoteAllocs.set(arr, other);
          break;
        }
        case GET: {
          // answered from the owner's shared memory by this thread: the owning rank is not involved.
          // The chunks go uncopied (payloads); the read races only with writes no synchronisation
          // orders before or after it, as any read of shared data.
          const req = d.varint(), arr = d.varint(), owner = d.varint(), local = d.varint(), count = d.varint();
          const bytes = this.bytesOf(arr, owner, local, count);
          const head = this.enc.reset().varint(req).finishCopy();
          let at = 0;
          do {
            const n = Math.min(READ_CHUNK, bytes.length - at);
            this.send(from, GOT, head, bytes.subarray(at, at + n));
            at += n;
          } while (at < bytes.length);
          break;
        }
        case GOT: { this.landed(d.varint(), payload ?? EMPTY); break; }
        case PUT: {
          // into the owner's memory; nobody waits on it but the putter (its acknowledgement)
          const req = d.varint(), arr = d.varint(), owner = d.varint(), local = d.varint(), bytes = payload ?? EMPTY;
          this.bytesOf(arr, owner, local, bytes.length / this.arrays.get(arr)!.bytes).set(bytes);
          this.send(from, PUT_ACK, this.enc.reset().varint(req).finishCopy());
          break;
        }
        case PUT_ACK: this.reply(d.varint(), { ok: true }); break;
        case LOCK: {
          const req = d.varint(), lock = d.varint(), rank = d.varint(), attempt = d.bool();
          this.lockFor(from, req, lock, rank, attempt);
          break;
        }
        case GRANT: { const req = d.varint(); this.reply(req, { ok: true, value: d.bool() }); break; }
        case UNLOCK: {
          const lock = d.varint(), rank = d.varint(), req = d.varint();
          this.handOver(lock, rank);
          if (req) this.send(from, PUT_ACK, this.enc.reset().varint(req).finishCopy());
          break;
        }
        default: throw new Error(`unknown SPMD message ${tag} from node ${from}`);
      }
    } catch (e) { this.control.fail(e); }
  }

  /** Another node's rank wants a lock whose home is here: take it, queue it, or (attempt) say no. */
  private lockFor(node: number, req: number, lock: number, rank: number, attempt: boolean): void {
    const w = lockWord(this.o.threads, lock), b = this.board;
    for (;;) {
      const cur = Atomics.load(b, w);
      if (cur === 0) {
        if (Atomics.compareExchange(b, w, 0, rank + 1) === 0) { this.send(node, GRANT, this.enc.reset().varint(req).bool(true).finishCopy()); return; }
        continue;
      }
      if (attempt) { this.send(node, GRANT, this.enc.reset().varint(req).bool(false).finishCopy()); return; }
      // the holder sees WAITERS when it unlocks and leaves the hand-over to this thread
      if ((cur & WAITERS) !== 0 || Atomics.compareExchange(b, w, cur, cur | WAITERS) === cur) break;
    }
    let q = this.lockQueues.get(lock);
    if (!q) this.lockQueues.set(lock, (q = []));
    q.push({ rank, node, req });
  }

  /** `rank` released a lock whose home is here: the next queued rank of another node gets it, or it is free. */
  private handOver(lock: number, rank: number): void {
    const w = lockWord(this.o.threads, lock), b = this.board;
    const cur = Atomics.load(b, w) & ~WAITERS;
    if (cur !== rank + 1) throw new Error(`rank ${rank} released lock ${lock}, held by ${cur === 0 ? 'nobody' : `rank ${cur - 1}`}`);
    const q = this.lockQueues.get(lock);
    const next = q?.shift();
    if (next) {
      Atomics.store(b, w, (next.rank + 1) | (q!.length > 0 ? WAITERS : 0));
      this.send(next.node, GRANT, this.enc.reset().varint(next.req).bool(true).finishCopy());
    } else {
      Atomics.store(b, w, 0);
      bump(b);
    }
  }

  counts(): SpmdCounts {
    const per = (w: number): number[] => Array.from({ length: this.perNode }, (_, i) => Atomics.load(this.board, rankBase(this.rank0 + i) + w));
    return { requests: { ...this.requests }, answers: this.answers, sleeps: per(SLEEPS), parks: per(PARKS), sent: { ...this.sent }, received: { ...this.received }, direct: Atomics.load(this.board, DIRECT) };
  }

  // ------------------------------------------------------------------ the end

  /** The run ended (or failed): every wait of every rank ends, the workers exit. */
  stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      if (this.poll) clearInterval(this.poll);
      Atomics.store(this.board, ABORT, 1);
      // every word a rank may sleep on moves (a sleep about to start then does not), and its sleepers wake
      const words = [EPOCH, BARRIER];
      for (let i = 0; i < this.perNode; i++) words.push(rankBase(this.rank0 + i) + REPLIES, rankBase(this.rank0 + i) + LANDED);
      for (const w of words) { Atomics.add(this.board, w, 1); Atomics.notify(this.board, w); }
      // ranks asleep on the segment wake and see ABORT (other nodes' ranks look again and sleep on;
      // a rank about to sleep there sleeps in slices and sees it after one, rank.ts)
      if (this.segFile) {
        const seg = this.segFile.segment;
        if (Atomics.load(seg.words, SEG_SLEEPERS) > 0) seg.wake(SEG_BARRIER);
        if (Atomics.load(seg.words, SEG_EPOCH_SLEEPERS) > 0) seg.wake(SEG_EPOCH);
        const f = this.segFile;
        if (this.router.rank === 0) f.unlink();
        void this.exited.then(() => f.close());
      }
      // a rank computing without calling the layer is not waiting to be told: stop it after a grace
      const t = setTimeout(() => { for (const w of this.workers) void w.terminate(); }, 1000);
      t.unref();
      void this.exited.then(() => clearTimeout(t));
      if (this.workers.length === 0) this.settleExited();
    }
    return this.exited;
  }
}
