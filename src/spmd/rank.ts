// One rank's side of the SPMD layer, in its worker thread: waiting on the node's board or the
// host segment the node processes of one machine share (spin, then sleep), asking the node's system thread what only it can do (allocate, reach
// another node), and the errors that name the rank, the call site and the operation.
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { writeSync } from 'node:fs';
import { Encoder } from '../runtime/transport/codec.js';
import { encodeFrame } from '../runtime/transport/frame.js';
import { findSourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { ABORT, ARRIVE, AWAKE, collectiveWord, BARRIER, DIRECT, HANDLED, READSIZE, EPOCH, LANDED, NODE_ARRIVE, PARKED, PARKS, POSTED, rankBase, releaseIfComplete, REPLIES, RUNNING, SLEEPERS, SLEEPON, SLEEPS, SLEEPWORD, STATE, bump } from './board.js';
import type { Answer, RankInit, RankRequest } from './protocol.js';
import { barrierMissing } from './missing.js';
import { Segment, SEG_BARRIER, SEG_EPOCH, SEG_EPOCH_SLEEPERS, SEG_SLEEPERS, segArrive, segNodeChanges, segNodePhase, segRank } from './segment.js';
import { threadCpuNs } from '../trace/clock.js';
import { SPMD_OPS, WAIT_KINDS, type SpmdOp, type TraceSink, type WaitKind } from '../trace/schema.js';

/** A misuse of the layer: the message names the rank, the call site and the operation. */
export class SpmdError extends Error {
  override name = 'SpmdError';
}

/** The run stopped (another rank failed, a hang was reported): the rank's program unwinds. */
export class RunStopped extends Error {
  override name = 'RunStopped';
}

/**
 * A wait's first sleep lasts at most this long before the rank tells the node it parks (a message
 * to the system thread and a stack walk, tens of µs, and a thread woken on a core the ranks may
 * need): a hang report comes this much later, a barrier among busy ranks never pays for it.
 */
export const PARK_AFTER_MS = 2;

/**
 * A rank parked on the host segment sleeps in slices this long, looking at ABORT between them:
 * its node cannot move a word other nodes' ranks share to wake it when the run stops (a wake
 * without a change can come just before the sleep starts and be lost).
 */
const SEGMENT_SLICE_MS = 100;

/** The largest remote read in one request (its reply lands in the rank's inbox, counted in an Int32). */
const MAX_READ_BYTES = 256 * 1024 * 1024;

const HERE = fileURLToPath(new URL('.', import.meta.url));
const OP_INDEX = Object.fromEntries(SPMD_OPS.map((o, i) => [o, i])) as Record<SpmdOp, number>;

export class Rank {
  readonly rank: number;
  readonly threads: number;
  readonly node: number;
  readonly nodes: number;
  /** ranks per node (ranks are dealt to nodes in blocks) */
  readonly perNode: number;
  readonly board: Int32Array;
  private readonly base: number;
  private seq = 0;
  private repliesSeen = 0;
  /** the share of the full spin a wait for this node's ranks [0] / another node [1] spins now (adaptive) */
  private readonly spinScale = [1, 1];
  /** the host segment, when barriers go through it (every node of the run maps it) */
  readonly seg: Segment | undefined;
  /** BoardView (missing.ts): with the host segment every rank's arrival is known */
  readonly everyRank: boolean;
  /** source positions of raw stack positions already mapped */
  private readonly sites = new Map<string, string>();
  /** the operation in progress (its name, for errors) */
  op = '';

  constructor(readonly init: RankInit, private readonly port: MessagePort, readonly trace: TraceSink | undefined, readonly now: () => number) {
    this.rank = init.rank;
    this.threads = init.threads;
    this.node = init.node;
    this.nodes = init.nodes;
    this.perNode = init.threads / init.nodes;
    this.board = new Int32Array(init.board);
    this.base = rankBase(init.rank);
    this.linkWords = init.links.map((l) => l && new Int32Array(l.words));
    this.seg = init.segment && Segment.map(init.segment.fd, init.segment.bytes);
    this.everyRank = this.seg !== undefined;
    Atomics.add(this.board, AWAKE, 1);
  }

  /** The rank returned (or failed): it no longer takes a CPU. */
  ended(): void {
    Atomics.sub(this.board, AWAKE, 1);
  }

  /**
   * Whether a wait may go on spinning: the node's ranks on a CPU (this one included) and, for a
   * wait on another node, the system thread that must take the reply, fit in the node's CPUs.
   */
  private roomToSpin(remote: boolean): boolean {
    return Atomics.load(this.board, AWAKE) + (remote ? 1 : 0) <= this.init.cpus;
  }

  nodeOf(rank: number): number {
    return Math.floor(rank / this.perNode);
  }

  /** first rank of this node */
  get firstLocal(): number {
    return this.node * this.perNode;
  }

  // ------------------------------------------------------------------ errors and call sites

  /** The program's source position that called into the layer ("prog.ts:12:5"). */
  site(): string {
    const prep = Error.prepareStackTrace;
    let frames: NodeJS.CallSite[] = [];
    Error.prepareStackTrace = (_e, cs) => cs;
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder);
    frames = holder.stack as NodeJS.CallSite[];
    Error.prepareStackTrace = prep;
    for (const f of frames) {
      let file = f.getFileName() ?? '';
      if (file === '' || file.startsWith('node:')) continue;
      if (file.startsWith('file://')) file = fileURLToPath(file);
      if (file.startsWith(HERE)) continue;
      const line = f.getLineNumber() ?? 0, col = f.getColumnNumber() ?? 0;
      const key = `${file}:${line}:${col}`;
      let s = this.sites.get(key);
      if (s === undefined) { s = mapSite(file, line, col); this.sites.set(key, s); }
      return s;
    }
    return 'unknown site';
  }

  /** An error of operation `op` at the caller's site. */
  fail(message: string, op = this.op): SpmdError {
    return new SpmdError(`rank ${this.rank}: ${op} at ${this.site()}: ${message}`);
  }

  checkRank(r: number, what = 'rank'): void {
    if (!Number.isInteger(r) || r < 0 || r >= this.threads) throw this.fail(`${what} ${String(r)} out of range (THREADS = ${this.threads})`);
  }

  // ------------------------------------------------------------------ tracing

  /** collective exits so far (barrier, notify, wait, collectives, allocation): the trace's sequence */
  private cseq = 0;

  /** The rank enters operation op at the caller's site (a spmdEnter record). */
  enter(op: SpmdOp): void {
    const tr = this.trace!;
    tr.spmdEnter(this.now(), this.rank, OP_INDEX[op], tr.siteName(this.site()));
  }

  exit(op: SpmdOp): void {
    this.trace!.spmdExit(this.now(), this.rank, OP_INDEX[op]);
  }

  /** The rank leaves collective op (root -1: none; sync = IN + 4·OUT over SYNC_MODES). */
  cexit(op: SpmdOp, root: number, sync: number, sent: number, recv: number): void {
    this.trace!.spmdCExit(this.now(), this.rank, OP_INDEX[op], ++this.cseq, root, sync, sent, recv);
  }

  /** f() as operation op: spmdEnter and spmdExit around it (only when tracing). */
  traced<R>(op: SpmdOp, f: () => R): R {
    this.enter(op);
    const v = f();
    this.exit(op);
    return v;
  }

  // ------------------------------------------------------------------ waiting

  /**
   * Wait until cond() holds: spin (a partner on another core answers within µs), then sleep on
   * board word `word` — EPOCH for conditions on other ranks' counters, BARRIER, or this rank's own
   * REPLIES or LANDED, so a change wakes only the ranks it concerns. The first sleep is short and
   * silent: only a rank that sleeps on past it tells the node (a message, the call site walked)
   * what it waits for and shows PARKED, so a wait of a few hundred µs never wakes the system
   * thread. A wait that slept or spun is traced as a `wait` record of `kind`. `what` describes the
   * wait for the hang report (called only before parking); a barrier's wait gives its phase, so the
   * node can say again whom it waits for when it reports.
   */
  until(cond: () => boolean, kind: WaitKind, what: () => string, word: number = EPOCH, remote = false, barrier?: { head: string; phase: number }, seg?: Segment): void {
    if (cond()) return;
    const b = this.board;
    // the word slept on and its sleepers' count: on the node's board, or on the host segment
    const ww = seg ? seg.words : b, sleepers = seg ? (word === SEG_EPOCH ? SEG_EPOCH_SLEEPERS : SEG_SLEEPERS) : SLEEPERS;
    const t0 = this.trace ? this.now() : 0;
    const c0 = this.trace ? threadCpuNs() : 0;
    const scale = remote ? 1 : 0;
    const start = performance.now();
    const spinUntil = start + (remote ? this.init.remoteSpinMs : this.init.spinMs) * this.spinScale[scale]!;
    // without room on the node's CPUs a spin is brief (crowdedSpinMs), then the rank sleeps
    const crowdedUntil = start + this.init.crowdedSpinMs;
    let spun = true, long = false;
    let parked = '';
    let silent = true;
    for (;;) {
      if (b[ABORT] !== 0) throw new RunStopped();
      const t = performance.now();
      if (t < spinUntil && (t < crowdedUntil || this.roomToSpin(remote))) { if (cond()) break; continue; }
      spun = false;
      const e = Atomics.load(ww, word);
      Atomics.add(ww, sleepers, 1);
      if (cond()) { Atomics.sub(ww, sleepers, 1); break; }
      Atomics.store(b, this.base + SLEEPWORD, seg ? -1 - word : word);
      if (!silent) {
        // the node learns what this rank waits for (as of now) before it can conclude the run hangs
        const text = what();
        if (text !== parked) {
          parked = text;
          this.post({ k: 'park', id: 0, rank: this.rank, text, site: this.site(), ...(barrier ? { barrier } : {}) });
        }
        // asleep on word = e: nothing changed since cond() failed, unless the word moved (the node checks)
        Atomics.store(b, this.base + SLEEPON, e);
        Atomics.store(b, this.base + STATE, PARKED);
        Atomics.add(b, this.base + PARKS, 1);
      }
      Atomics.add(b, this.base + SLEEPS, 1);
      Atomics.sub(b, AWAKE, 1);
      let woke = 'ok';
      if (b[ABORT] !== 0) { /* the run stops: look again at once */ }
      else if (!seg) woke = Atomics.wait(b, word, e, silent ? PARK_AFTER_MS : undefined);
      else if (silent) woke = seg.wait(word, e, PARK_AFTER_MS);
      else do woke = seg.wait(word, e, SEGMENT_SLICE_MS); while (woke === 'timed-out' && b[ABORT] === 0 && Atomics.load(ww, word) === e);
      Atomics.add(b, AWAKE, 1);
      // a silent sleep that ran out parks next time; one woken by a change starts silent again
      silent = woke !== 'timed-out';
      if (!silent) long = true;
      Atomics.store(b, this.base + STATE, RUNNING);
      Atomics.sub(ww, sleepers, 1);
      if (cond()) break;
    }
    // adaptive spinning: a spin that ends waits keeps (regains) its length; one that keeps missing
    // by less than the silent sleep shrinks to 1/16 (the awaited thread is off its core, and the
    // spin only delays it); a wait long past that says nothing about spinning
    if (spun) this.spinScale[scale] = Math.min(1, this.spinScale[scale]! * 2);
    else if (!long) this.spinScale[scale] = Math.max(1 / 16, this.spinScale[scale]! / 2);
    if (this.trace) this.trace.wait(t0, this.now(), Math.max(0, threadCpuNs() - c0), -1, this.rank, WAIT_KINDS.indexOf(kind), this.op === 'start' ? 'the start of the program' : `${this.op} at ${this.site()}`);
  }

  // ------------------------------------------------------------------ the node's system thread

  post(m: RankRequest, transfer?: ArrayBuffer[]): void {
    Atomics.add(this.board, POSTED, 1);
    this.port.postMessage(m, transfer);
  }

  /** Ask the node and wait for its answer; a refusal is this operation's error. */
  call(m: RankRequest, kind: WaitKind, what: string): unknown {
    const id = ++this.seq;
    (m as { id: number }).id = id;
    this.post(m);
    return this.answerOf(id, kind, what);
  }

  /** Wait for the node's answer to request id (on this rank's REPLIES word); a refusal is this operation's error. */
  private answerOf(id: number, kind: WaitKind, what: string): unknown {
    let answer: Answer | undefined;
    this.until(() => {
      this.drain((a) => { if (a.id === id) answer = a; });
      return answer !== undefined;
    }, kind, () => what, this.base + REPLIES, true);
    if (!answer!.ok) throw this.fail(answer!.error ?? 'refused');
    return answer!.value;
  }

  /** where the node's system thread lands the replies of this rank's remote reads (grown on demand, told to the node) */
  private inbox: Uint8Array | undefined;

  /**
   * Read `count` elements of rank `owner`'s part of array `arr` on another node, from element
   * `local`, into `into` (their bytes). The owner's node streams them in chunks; this rank's
   * node writes each chunk into the rank's inbox as it arrives and raises LANDED, and the rank
   * copies what landed while the rest is on its way — one request, no answer message, and the
   * owning rank is never woken.
   */
  readRemote(arr: number, owner: number, local: number, count: number, into: Uint8Array, what: string): void {
    const total = into.length;
    if (total === 0) return;
    if (total > MAX_READ_BYTES) {
      // in pieces: the inbox stays bounded and LANDED an Int32
      const bpe = total / count, per = Math.floor(MAX_READ_BYTES / bpe);
      for (let j = 0; j < count; j += per) {
        const n = Math.min(per, count - j);
        this.readRemote(arr, owner, local + j, n, into.subarray(j * bpe, (j + n) * bpe), what);
      }
      return;
    }
    if (!this.inbox || this.inbox.length < total) {
      this.inbox = new Uint8Array(new SharedArrayBuffer(Math.max(total, 2 * (this.inbox?.length ?? 0), 4096)));
      this.post({ k: 'inbox', id: 0, buffer: this.inbox.buffer as SharedArrayBuffer });
    }
    const inbox = this.inbox, b = this.board, w = this.base + LANDED;
    Atomics.store(b, w, 0);
    const id = ++this.seq;
    if (!this.readDirect(arr, owner, local, count, total)) this.post({ k: 'get', id, arr, owner, local, count, size: total });
    let copied = 0, landed = 0;
    this.until(() => {
      landed = Atomics.load(b, w);
      if (landed < 0) return true;
      if (landed > copied) { into.set(inbox.subarray(copied, Math.min(landed, total)), copied); copied = landed; }
      return copied >= total;
    }, 'request', () => what, w, true);
    if (landed < 0) this.answerOf(id, 'request', what);
  }

  /** remote puts sent and not yet acknowledged (their request ids), and the first refused */
  private readonly puts = new Map<number, string>();
  private putError: { message: string; op: string } | undefined;

  /**
   * Send a remote put without waiting for its acknowledgement: a rank streams its puts, and the
   * next fence, barrier, notify, unlock or collective completes them all at once (completePuts).
   * The bytes are handed over (a fresh copy the caller made), not cloned again.
   */
  putAsync(m: Extract<RankRequest, { k: 'put' }>): void {
    const id = ++this.seq;
    m.id = id;
    this.puts.set(id, this.op);
    this.post(m, [m.bytes.buffer as ArrayBuffer]);
  }

  /**
   * Release a lock whose home is on another node. The release is acknowledged, and the next
   * fence, barrier, notify, unlock or collective waits for that as for a put: through the host
   * segment a barrier overtakes the release, and through the sockets its order before the next
   * arrival would rest on every path between (the rank's port to its node, a frame the rank
   * writes itself, the node's queue) keeping it — in-process nodes once found the lock still held
   * after the barrier under heavy load.
   */
  unlockRemote(lock: number): void {
    const id = ++this.seq;
    this.puts.set(id, this.op);
    this.post({ k: 'unlock', id, lock });
  }

  /** Wait until every put of this rank is in place; a refused one is the error of the operation that sent it. */
  completePuts(): void {
    if (this.puts.size > 0) this.until(() => { this.drain(); return this.puts.size === 0; }, 'request', () => `waits for ${this.puts.size} put(s) or lock release(s) to other nodes to be acknowledged`, this.base + REPLIES, true);
    const e = this.putError;
    if (e) { this.putError = undefined; throw this.fail(`${e.message} (a ${e.op} to another node, found refused here)`); }
  }

  /** Take the node's answers that arrived: put acknowledgements are counted here, others handed to `other`. */
  private drain(other?: (a: Answer) => void): void {
    if (Atomics.load(this.board, this.base + REPLIES) === this.repliesSeen) return;
    for (let r = receiveMessageOnPort(this.port); r !== undefined; r = receiveMessageOnPort(this.port)) {
      this.repliesSeen++;
      const a = r.message as Answer;
      const op = this.puts.get(a.id);
      if (op === undefined) { other?.(a); continue; }
      this.puts.delete(a.id);
      if (!a.ok && !this.putError) this.putError = { message: a.error ?? 'refused', op };
    }
  }

  /**
   * Set this rank's counter words (pairs: word, value, in that order) and tell the other nodes —
   * with the host segment by writing them there (every node's ranks read them there), else
   * through the system thread, which mirrors them on the other nodes' boards.
   */
  setWords(...words: number[]): void {
    const seg = this.seg;
    if (seg) {
      const at = segRank(this.nodes, this.rank);
      for (let i = 0; i < words.length; i += 2) Atomics.store(seg.words, at + words[i]!, words[i + 1]!);
      Atomics.add(seg.words, segNodeChanges(this.node), 1);
      seg.bump();
      return;
    }
    for (let i = 0; i < words.length; i += 2) Atomics.store(this.board, this.base + words[i]!, words[i + 1]!);
    bump(this.board);
    if (this.nodes > 1) this.post({ k: 'flags', id: 0, rank: this.rank, words });
  }

  /**
   * Wait in a collective until cond() (on other ranks' collective words) holds: on the board's
   * EPOCH, or with the host segment on its EPOCH, which every node's ranks bump.
   */
  untilCollective(cond: () => boolean, what: () => string): void {
    if (this.seg) this.until(cond, 'collective', what, SEG_EPOCH, false, undefined, this.seg);
    else this.until(cond, 'collective', what);
  }

  /**
   * This rank arrived at barrier phase p. The ranks of a node combine in shared memory: the one
   * whose arrival completes the node's phase (the compare-exchange picks one when several see it)
   * has the system thread tell the other nodes once, so a barrier costs one message per node pair
   * whatever the ranks per node. Local ranks' phases differ by at most one (none passes phase p
   * before all arrived at it), so "all local ranks at ≥ p" is the node's arrival at p. Whoever
   * sees every rank of the run arrived raises BARRIER (board.ts): within a node no message, no
   * system thread, and only the sleepers on BARRIER are woken.
   */
  arrive(p: number): void {
    Atomics.store(this.board, this.base + ARRIVE, p);
    const seg = this.seg;
    if (seg) {
      // through the host segment: the same, among the ranks of every node (segment.ts); the
      // node's last arriver records the node's phase, which the nodes count as its messages
      Atomics.store(seg.words, segArrive(this.nodes, this.rank), p);
      const first = this.firstLocal;
      let all = true;
      for (let t = first; t < first + this.perNode && all; t++) if (Atomics.load(this.board, rankBase(t) + ARRIVE) < p) all = false;
      if (all && Atomics.compareExchange(this.board, NODE_ARRIVE, p - 1, p) === p - 1) Atomics.store(seg.words, segNodePhase(this.node), p);
      seg.releaseIfComplete(this.nodes, this.threads, p);
      return;
    }
    if (this.nodes > 1) {
      const first = this.firstLocal;
      let all = true;
      for (let t = first; t < first + this.perNode && all; t++) if (this.word(t, ARRIVE) < p) all = false;
      if (all && Atomics.compareExchange(this.board, NODE_ARRIVE, p - 1, p) === p - 1) this.tellArrival(p);
    }
    releaseIfComplete(this.board, this.threads, p);
  }

  private readonly enc = new Encoder(16);

  /**
   * This node's ranks all arrived at phase p: tell every other node — by writing the ARRIVED frame
   * to its socket from this thread (no wake-up of the system thread, whose turn costs the chain a
   * wake-up on each side) where the link allows it and nothing this node asked its system thread
   * is still unsent (it could arrive after), else through the system thread.
   */
  private tellArrival(p: number): void {
    const b = this.board;
    const direct = Atomics.load(b, HANDLED) === Atomics.load(b, POSTED);
    let frame: Uint8Array | undefined;
    let rest: number[] | undefined;
    for (let n = 0; n < this.nodes; n++) {
      if (n === this.node) continue;
      const link = this.init.links[n];
      if (direct && link) {
        frame ??= encodeFrame(this.init.arrivedWire, this.enc.reset().varint(this.node).varint(p).finish());
        if (writeFrame(link.fd, this.linkWords[n]!, frame, b)) continue;
      }
      (rest ??= []).push(n);
    }
    if (rest) this.post({ k: 'arrive', id: 0, phase: p, ...(rest.length < this.nodes - 1 ? { to: rest } : {}) });
  }

  /** each node's link's lock and busy words (see writeFrame) */
  private readonly linkWords: (Int32Array | null)[];

  /**
   * Ask the owner's node for a remote read by writing the GET frame to its socket from this
   * thread (request id 2·rank + 1: one read of a rank is pending at a time), on the conditions of
   * tellArrival; this node's system thread lands the reply as for a read it sent. False: ask it.
   */
  private readDirect(arr: number, owner: number, local: number, count: number, size: number): boolean {
    const n = this.nodeOf(owner), link = this.init.links[n], b = this.board;
    if (!link || Atomics.load(b, HANDLED) !== Atomics.load(b, POSTED)) return false;
    Atomics.store(b, this.base + READSIZE, size);
    const frame = encodeFrame(this.init.getWire, this.enc.reset().varint(2 * this.rank + 1).varint(arr).varint(owner).varint(local).varint(count).finish());
    return writeFrame(link.fd, this.linkWords[n]!, frame, b);
  }

  /**
   * Wait until barrier phase p is complete (every rank of the run arrived). `head` starts the hang
   * line ("waits at barrier (phase 3) for "); who is missing is read when the line is written, and
   * again by the node when it reports a hang (the rank sleeps through partial arrivals).
   */
  awaitBarrier(p: number, head: string): void {
    const b = this.board, seg = this.seg;
    // no system thread takes part: a wait among the ranks of this machine's processes
    if (seg) { this.until(() => Atomics.load(seg.words, SEG_BARRIER) >= p, 'barrier', () => head + barrierMissing(this, p), SEG_BARRIER, false, { head, phase: p }, seg); return; }
    this.until(() => Atomics.load(b, BARRIER) >= p, 'barrier', () => head + barrierMissing(this, p), BARRIER, this.nodes > 1, { head, phase: p });
  }

  word(rank: number, word: number): number {
    // with the host segment every rank's barrier arrivals are there, none mirrored on the board
    if (this.seg) {
      if (word === ARRIVE) return Atomics.load(this.seg.words, segArrive(this.nodes, rank));
      if (collectiveWord(word)) return Atomics.load(this.seg.words, segRank(this.nodes, rank) + word);
    }
    return Atomics.load(this.board, rankBase(rank) + word);
  }
}

/**
 * Write a whole frame to a link's socket from this thread (transport/types.ts DirectLink): under
 * the link's lock, only while the transport holds no bytes for it. False when it did not write
 * (the caller sends through the system thread): the lock taken, bytes pending, or the socket full.
 */
function writeFrame(fd: number, words: Int32Array, frame: Uint8Array, board: Int32Array): boolean {
  if (Atomics.compareExchange(words, 0, 0, 1) !== 0) return false;
  try {
    if (Atomics.load(words, 1) !== 0) return false;
    // counted before it can arrive: the receiver counts it at once
    Atomics.add(board, DIRECT, 1);
    let at = 0;
    while (at < frame.length) {
      try {
        at += writeSync(fd, frame, at, frame.length - at);
      } catch (e) {
        if (at === 0) { Atomics.sub(board, DIRECT, 1); return false; }
        // part of the frame is out: the rest must follow (a broken link is the transport's to report)
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return true;
      }
    }
    return true;
  } finally {
    Atomics.store(words, 0, 0);
  }
}

/** The original source position of a position in the bundled program, through its source map. */
function mapSite(file: string, line: number, col: number): string {
  try {
    const m = findSourceMap(file);
    const e = m?.findEntry(line - 1, col - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
    if (e?.originalSource) {
      let src = e.originalSource;
      if (src.startsWith('file://')) src = fileURLToPath(src);
      return `${relative(process.cwd(), src) || src}:${e.originalLine! + 1}:${e.originalColumn! + 1}`;
    }
  } catch { /* no map: the bundle's own position */ }
  return `${relative(process.cwd(), file) || file}:${line}:${col}`;
}
