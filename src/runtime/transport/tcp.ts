// Full-mesh TCP transport. Rank 0 is the directory: every rank connects to it first and
// registers its own listen address; once all have, rank 0 sends everyone the address table and
// rank i connects to ranks 1..i-1 (and accepts from i+1..size-1), so each pair has one link.
// Each rank reports Ready to rank 0 when its links are up; rank 0 answers Go to all, so
// createTcpTransport resolves on every rank only when the whole mesh is up.
// Once formed, a heartbeat (heartbeat.ts) watches every link for silence. Ranks on one machine
// link over Unix sockets instead (local.ts): every listening rank also listens on one and
// advertises it with its machine's identity; a connector on the same machine uses it, and TCP if
// it cannot reach it. Such a pair then also passes messages through a shared-memory ring per
// direction (ring.ts), polled while messages come, with a doorbell on the socket for a receiver
// that stopped polling. See docs/cluster.md for the protocol and multi-host use.
import * as net from 'node:net';
import * as os from 'node:os';
import { closeSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { loadAddon } from '../../core/addon.js';
import { atExit } from '../../core/exit.js';
import { DecodeError, Decoder, Encoder } from './codec.js';
import { FLAG_CONTROL, FrameError, FrameParser, FrameWriter } from './frame.js';
import { newNonce, newSecret, proof, proofMatches } from './auth.js';
import { checkHeartbeatMs, DEFAULT_HEARTBEAT_MS, Heartbeat, heartbeatMsFromEnv, LinkClock } from './heartbeat.js';
import { localSocketPath, localSocketsEnabled, machineId } from './local.js';
import { machineCoreFree, createRingFile, openRingFile, RING_FILE_PREFIX, RingReader, ringsAvailable, RingWriter, unlinkRingFile } from './ring.js';
import { tuned } from '../tuning.js';
import { cpuSet } from '../../core/cpus.js';
import type { DirectLink, PeerAddress, Rendezvous, Transport } from './types.js';

export interface TcpTransportOptions {
  rank: number;
  size: number;
  /** The run's secret. Rank 0 generates one if absent; other ranks then take it from the rendezvous. */
  secret?: string;
  /** Address to listen on (default 127.0.0.1). A wildcard (0.0.0.0, ::) also needs a reachable advertiseHost. */
  listenHost?: string;
  /** Address other ranks use to reach this one (default: listenHost, or a non-internal IPv4 for a wildcard). */
  advertiseHost?: string;
  rendezvous: Rendezvous;
  log?: (msg: string) => void;
  /** Mesh formation deadline (default 60 s). */
  timeoutMs?: number;
  /** Aborts mesh formation (e.g. a spawned node died first). */
  signal?: AbortSignal;
  /**
   * Where a received payload is assembled, by its message's tag (e.g. shared memory, a received DF
   * value in a recycled buffer); default: a fresh Buffer.
   */
  allocPayload?: (byteLength: number, tag: number) => Uint8Array;
  /**
   * Heartbeat timeout in ms: a peer from which nothing at all arrived for this long is reported
   * lost through onPeerLost (default: $LUNA_HEARTBEAT_MS, else 5000; 0 = off). Quiet links carry
   * a small frame every eighth of the timeout, so a peer whose main thread is busy for longer than
   * about 70 % of it is declared lost too.
   */
  heartbeatMs?: number;
  /**
   * Pass messages to peers on this machine through shared-memory rings (default: unless
   * $LUNA_RING is 0, on Linux with the shared-memory addon built).
   */
  rings?: boolean;
  /** How long the system thread polls its rings after its last message, µs (default $LUNA_RING_SPIN_US, else RING_SPIN_US). */
  ringSpinUs?: number;
}

/**
 * How long a node polls its rings after its last message. A pingpong step's reply comes back
 * 40–150 µs after its message here (docs/benchmarks.md); a poll that ends sooner than that pays
 * the doorbell and the wake-up the ring exists to avoid.
 */
export const RING_SPIN_US = 300;

export interface TcpTransport extends Transport {
  /** This rank's listen address (undefined for size 1). */
  readonly address: PeerAddress | undefined;
  /**
   * Counters for tests and benchmarks; `localLinks`: links over a Unix socket (same machine);
   * `ringLinks`: links that also carry messages through a shared-memory ring, `ringBytes` the
   * bytes of those rings' data areas this node writes (they grow with the largest message), `ringFrames` the
   * messages sent that way, `doorbells` the times a receiver had to be rung, `polling` whether
   * this node polls its rings now.
   */
  stats(): { framesSent: number; socketWrites: number; localLinks: number; ringLinks: number; ringBytes: number; ringFrames: number; doorbells: number; polling: boolean };
  flush(): void;
  directLink(to: number): DirectLink | undefined;
}

const enum Ctl {
  Hello = 1, // acceptor → connector: [nonce 16][rank u32][size u32]
  Auth = 2, // connector → acceptor: [rank u32][size u32][nonce 16][mac bytes][address]
  AuthOk = 3, // acceptor → connector: [mac bytes]
  Table = 4, // rank 0 → all: size × [address]
  Bye = 5, // graceful close: the following EOF is not a loss
  Ready = 6, // rank i → 0: all my links are up
  Go = 7, // rank 0 → all: every rank is fully linked; createTcpTransport resolves
  Beat = 8, // heartbeat on a quiet link: [timeout u32] (how long the sender waits for us; 0 = never)
  RingOffer = 9, // lower rank → higher, same machine: [ring file path][capacity u32]
  RingAccept = 10, // the file is mapped: both directions are up
  RingRefuse = 11, // [why]: this link stays on its socket
  Ring = 12, // doorbell: the receiver stopped polling and the sender wrote into its ring
}

/** An address on the wire: [host string][port u32][machine string][socket path string] ('' = none). */
function writeAddress(e: Encoder, a: PeerAddress): Encoder {
  return e.string(a.host).u32(a.port).string(a.local?.machine ?? '').string(a.local?.path ?? '');
}
function readAddress(d: Decoder): PeerAddress {
  const host = d.string(), port = d.u32(), machine = d.string(), path = d.string();
  return machine && path ? { host, port, local: { machine, path } } : { host, port };
}

const HANDSHAKE_MAX_FRAME = 64 * 1024;
const HANDSHAKE_TIMEOUT_MS = 10_000;
const MAX_FRAME = 0xffffffff;

type MessageHandler = (from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void;
type LostHandler = (rank: number, reason: string) => void;

class Link {
  rank = -1;
  established = false;
  /** over a Unix socket (a peer on this machine) */
  local = false;
  bye = false;
  lost = false;
  lastError: string | undefined;
  readonly writer = new FrameWriter();
  readonly clock = new LinkClock();
  /** frames wait in the writer for this tick's flush */
  dirty = false;
  /** the lock and busy words shared with threads writing the socket directly (see DirectLink), once asked for */
  direct: Int32Array | undefined;
  /** the duplicate descriptor those threads write (native/fd.c says why not the socket's own) */
  directFd = -1;
  /** the shared-memory ring to the peer once it accepted, and the one from it (see ring.ts) */
  ringOut: RingWriter | undefined;
  ringIn: RingReader | undefined;
  /** a ring was offered or accepted */
  ringing = false;
  /** a thread writes the socket itself now: this side writes no ring entries any more */
  ringRetired = false;
  /** the retired ring until its reader took every entry (no direct frame may overtake them) */
  drainOut: RingWriter | undefined;
  /** data frames sent / received on the socket: ring entries carry the first, to keep order */
  sockSent = 0;
  sockRecv = 0;
  /** a doorbell waits for this tick's flush */
  doorbell = false;
  /** the offerer's side until the peer accepts: its ring file's name, and its way out */
  ringFile: string | undefined;
  ringForget: (() => void) | undefined;
  pendingOut: RingWriter | undefined;
  parser!: FrameParser;
  constructor(readonly socket: net.Socket) {}
  get remote(): string {
    return this.local ? 'a local socket' : `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }
}

class Mesh implements TcpTransport {
  readonly rank: number;
  readonly size: number;
  address: PeerAddress | undefined;
  secret = '';
  private readonly links: (Link | undefined)[];
  private table: PeerAddress[] = [];
  private gotTable = false;
  private ready = 0;
  private server: net.Server | undefined;
  /** the Unix socket ranks on this machine connect to */
  private localServer: net.Server | undefined;
  private handler: MessageHandler | undefined;
  private lostHandler: LostHandler | undefined;
  private pendingLost: [number, string][] = [];
  private inbox: [number, number, Uint8Array, Uint8Array | undefined][] = [];
  private inboxQueued = false;
  private selfQueue: [number, Uint8Array, Uint8Array | undefined][] = [];
  private selfQueued = false;
  /** links with frames waiting for this tick's flush */
  private dirty: Link[] = [];
  private flushQueued = false;
  private closing = false;
  private formed = false;
  private socketWrites = 0;
  private framesSent = 0;
  private ringFrames = 0;
  private doorbells = 0;
  /** links whose peer writes into a ring of ours */
  private ringLinks: Link[] = [];
  private polling = false;
  private pollUntil = 0;
  /** when the poll last asked whether a core is free for it, and the answer */
  private gateAt = -1e9;
  private gateFree = true;
  private readonly cpus = cpuSet().machine;
  private readonly ringSpinMs: number;
  private readonly log: (msg: string) => void;
  private readonly enc = new Encoder(128);
  private readonly heartbeat: Heartbeat;
  // Mesh formation.
  private expected = 0;
  private resolveFormed!: () => void;
  private rejectFormed!: (e: Error) => void;
  readonly formedPromise: Promise<void>;

  constructor(private readonly opts: TcpTransportOptions) {
    this.rank = opts.rank;
    this.size = opts.size;
    this.links = new Array(opts.size).fill(undefined);
    this.log = opts.log ?? ((m) => process.stderr.write(`luna transport [rank ${opts.rank}]: ${m}\n`));
    this.formedPromise = new Promise((res, rej) => {
      this.resolveFormed = res;
      this.rejectFormed = rej;
    });
    this.formedPromise.catch(() => {});
    this.ringSpinMs = (opts.ringSpinUs ?? tuned('LUNA_RING_SPIN_US') ?? RING_SPIN_US) / 1000;
    const heartbeatMs = opts.heartbeatMs === undefined ? heartbeatMsFromEnv() ?? DEFAULT_HEARTBEAT_MS : checkHeartbeatMs(opts.heartbeatMs);
    this.heartbeat = new Heartbeat(heartbeatMs, {
      liveLinks: () => this.links.filter((l): l is Link => l !== undefined && l.established && !l.lost && !l.bye && !l.socket.destroyed),
      sendBeat: (rank, timeoutMs) => this.sendCtl(this.links[rank]!, Ctl.Beat, this.enc.reset().u32(timeoutMs).finish()),
      lost: (rank, reason) => this.drop(this.links[rank]!, reason),
      // libuv's count of bytes still queued on the socket, kept current as writes progress
      queued: (rank) => (this.links[rank]?.socket as unknown as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0,
    });
  }

  // ---------------------------------------------------------------- Transport API

  send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array, released?: (payload: Uint8Array) => void): boolean {
    if (to === this.rank) {
      // Copy the body (encoders reuse their buffer); the payload's ownership passes to us.
      this.selfQueue.push([tag, body.slice(), payload]);
      if (!this.selfQueued) {
        this.selfQueued = true;
        setImmediate(this.drainSelf);
      }
      return payload === undefined;
    }
    const link = this.links[to];
    if (link === undefined) {
      if (!(to >= 0 && to < this.size && Number.isInteger(to))) throw new RangeError(`send: no rank ${to} (size ${this.size})`);
      throw new Error(`send: rank ${to} is not connected`);
    }
    if (link.lost || link.bye) return true; // the loss was (or will be) reported through onPeerLost
    const ring = link.ringOut;
    if (ring && ring.write(link.sockSent, tag, body, payload)) {
      this.ringFrames++;
      link.clock.tx++;
      if (ring.claimDoorbell()) {
        link.doorbell = true;
        this.queueFlush(link);
      }
      // a reply is likely: look for it without sleeping first
      this.pollSoon();
      return true;
    }
    // a large payload goes to the socket as it is (one writev with the frame headers, uncopied)
    const copied = link.writer.append(0, tag, body, payload, released);
    link.sockSent++;
    this.queueFlush(link);
    return copied;
  }

  private arrivedHandler: (() => void) | undefined;

  onArrived(handler: () => void): void {
    this.arrivedHandler = handler;
  }

  onMessage(handler: MessageHandler): void {
    this.handler = handler;
    if (this.inbox.length) this.queueInbox();
  }

  onPeerLost(handler: LostHandler): void {
    this.lostHandler = handler;
    for (const [r, why] of this.pendingLost.splice(0)) handler(r, why);
  }

  stats() {
    let localLinks = 0, ringLinks = 0, ringBytes = 0;
    for (const l of this.links) {
      if (l?.established && l.local) localLinks++;
      if (l?.ringOut) { ringLinks++; ringBytes += l.ringOut.bytes; }
    }
    return { framesSent: this.framesSent, socketWrites: this.socketWrites, localLinks, ringLinks, ringBytes, ringFrames: this.ringFrames, doorbells: this.doorbells, polling: this.polling };
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.heartbeat.stop();
    const waits: Promise<void>[] = [];
    for (const link of this.links) {
      if (!link) continue;
      if (!link.socket.destroyed) {
        if (link.established && !link.lost) link.writer.append(FLAG_CONTROL, Ctl.Bye, new Uint8Array(0), undefined);
        this.writeLink(link);
        this.retireDirect(link);
        waits.push(closeSocket(link.socket));
      }
    }
    if (this.server) waits.push(new Promise((res) => this.server!.close(() => res())));
    if (this.localServer) waits.push(new Promise((res) => this.localServer!.close(() => res())));
    await Promise.all(waits);
  }

  // ---------------------------------------------------------------- sending

  /** Write every link's queued frames now (see Transport.flush). */
  flush = (): void => {
    this.flushQueued = false;
    const links = this.dirty;
    if (links.length === 0) return;
    this.dirty = [];
    for (const l of links) { l.dirty = false; this.writeLink(l); }
  };

  private queueFlush(link: Link): void {
    if (!link.dirty) { link.dirty = true; this.dirty.push(link); }
    if (this.flushQueued) return;
    this.flushQueued = true;
    // A microtask runs after the current handler/loop body, so everything sent in this tick
    // (e.g. all replies to one batch of incoming frames) leaves in one write per peer.
    queueMicrotask(this.flush);
  }

  private writeLink(link: Link): void {
    if (link.doorbell) {
      link.doorbell = false;
      if (!link.socket.destroyed) {
        link.writer.append(FLAG_CONTROL, Ctl.Ring, EMPTY, undefined);
        this.doorbells++;
      }
    }
    if (link.writer.empty) return;
    // (what a closed socket's writer keeps is never written: its payloads are read no more)
    if (link.socket.destroyed) { link.writer.takeReleased()?.(); return; }
    this.framesSent += link.writer.frames;
    link.writer.frames = 0;
    link.clock.tx++;
    const parts = link.writer.take();
    const s = link.socket;
    const d = link.direct;
    if (d) lockDirect(d);
    // (1: bytes pending; 2: retired for good, see retireDirect)
    const direct = d ? (): void => { if (!this.socketBusy(link)) Atomics.compareExchange(d, 1, 1, 0); } : undefined;
    // payloads written uncopied go back to their senders once the socket has them all (its last
    // part's callback: Node calls it once they are written, or with the error that ended the socket)
    const rel = link.writer.takeReleased();
    const done = rel === null ? direct : (): void => { direct?.(); rel(); };
    if (parts.length === 1) {
      s.write(parts[0]!, done);
    } else {
      s.cork(); // one writev for header buffers and uncopied payloads
      for (let i = 0; i < parts.length; i++) s.write(parts[i]!, i === parts.length - 1 ? done : undefined);
      s.uncork();
    }
    if (d) {
      // bytes the kernel did not take stay with Node until the callback: no direct frame meanwhile
      if (Atomics.load(d, 1) !== 2) Atomics.store(d, 1, this.socketBusy(link) ? 1 : 0);
      Atomics.store(d, 0, 0);
    }
    this.socketWrites++;
  }

  /** Whether a frame written to the socket directly now could overtake one of the transport's. */
  private socketBusy(link: Link): boolean {
    if (link.drainOut && link.drainOut.drained()) link.drainOut = undefined;
    return link.socket.writableLength > 0 || link.drainOut !== undefined;
  }

  /** Stop writing the link's ring (a thread will write the socket itself); its entries stay to be read. */
  private retireRing(link: Link): void {
    link.ringRetired = true;
    link.pendingOut = undefined;
    const out = link.ringOut;
    link.ringOut = undefined;
    if (!out || out.drained()) return;
    link.drainOut = out;
    const watch = (): void => {
      const d = link.direct;
      if (this.closing || link.lost || link.socket.destroyed) return;
      if (d && !this.socketBusy(link)) Atomics.compareExchange(d, 1, 1, 0);
      // (bytes still with the socket: its write callback clears the word)
      else if (link.drainOut) setTimeout(watch, 1);
    };
    setTimeout(watch, 1);
  }

  /** The link's socket is about to close: no thread writes its descriptor (soon another file's) again. */
  private retireDirect(link: Link): void {
    const d = link.direct;
    if (!d) return;
    lockDirect(d);
    if (Atomics.load(d, 1) !== 2) {
      Atomics.store(d, 1, 2);
      try { closeSync(link.directFd); } catch { /* closed already */ }
    }
    Atomics.store(d, 0, 0);
  }

  directLink(to: number): DirectLink | undefined {
    const link = this.links[to];
    if (!link?.established || link.lost || link.bye || link.socket.destroyed) return undefined;
    // frames written beside the ring's would overtake what waits in it: from now on this side
    // sends by the socket only, and the threads write once the peer has read the ring empty
    if (link.ringing && !link.ringRetired) this.retireRing(link);
    const fd = (link.socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return undefined;
    if (!link.direct) {
      // Node closes the socket's own descriptor on a reset before JavaScript hears of it, and
      // the number may then name a file opened since: the threads write a duplicate, which
      // stays this socket until retireDirect closes it
      const copy = dupFd(fd);
      if (copy < 0) return undefined;
      link.directFd = copy;
      link.direct = new Int32Array(new SharedArrayBuffer(8));
      Atomics.store(link.direct, 1, this.socketBusy(link) ? 1 : 0);
      link.socket.once('end', () => this.retireDirect(link));
      link.socket.once('close', () => this.retireDirect(link));
    }
    return { fd: link.directFd, words: link.direct.buffer as SharedArrayBuffer };
  }

  private sendCtl(link: Link, ctl: Ctl, body: Uint8Array): void {
    link.writer.append(FLAG_CONTROL, ctl, body, undefined);
    this.writeLink(link);
  }

  // ---------------------------------------------------------------- receiving

  private drainSelf = (): void => {
    this.selfQueued = false;
    // Deliver what is queued now; messages sent by these handlers go to the next turn.
    const batch = this.selfQueue;
    this.selfQueue = [];
    for (const [tag, body, payload] of batch) this.deliver(this.rank, tag, body, payload);
  };

  private deliver(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    if (this.handler && this.inbox.length === 0) {
      this.handler(from, tag, body, payload);
      return;
    }
    // No handler yet (mesh just formed): keep order, copy body out of the socket chunk.
    this.inbox.push([from, tag, body.slice(), payload]);
    if (this.handler) this.queueInbox();
  }

  private queueInbox(): void {
    if (this.inboxQueued) return;
    this.inboxQueued = true;
    setImmediate(() => {
      this.inboxQueued = false;
      const h = this.handler;
      if (!h) return;
      while (this.inbox.length) {
        const [f, t, b, p] = this.inbox.shift()!;
        h(f, t, b, p);
      }
    });
  }

  private onFrame(link: Link, flags: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    if (flags & FLAG_CONTROL) {
      try {
        this.onControl(link, tag, body);
      } catch (e) {
        if (e instanceof DecodeError) throw new FrameError(`malformed control frame: ${e.message}`);
        throw e;
      }
    } else if (link.established) {
      // what the peer put in the ring before this frame goes first
      if (link.ringIn) this.readRing(link);
      link.sockRecv++;
      this.deliver(link.rank, tag, body, payload);
    } else this.reject(link, 'data before authentication');
  }

  private onControl(link: Link, ctl: number, body: Uint8Array): void {
    const d = new Decoder(body);
    switch (ctl) {
      case Ctl.Bye:
        link.bye = true;
        return;
      case Ctl.Ring:
        return; // readChunk reads the ring after every chunk
      case Ctl.RingOffer:
        if (!link.established || link.rank > this.rank || link.ringing || !link.local) return this.reject(link, 'unexpected ring offer');
        return this.acceptRing(link, d.string(), d.u32());
      case Ctl.RingAccept:
        if (!link.established || !link.ringing || !link.ringIn || link.ringOut) return this.reject(link, 'unexpected ring acceptance');
        if (!link.ringRetired) link.ringOut = link.pendingOut;
        link.pendingOut = undefined;
        this.forgetRingFile(link);
        return;
      case Ctl.RingRefuse:
        if (!link.established || !link.ringing || link.ringOut) return this.reject(link, 'unexpected ring refusal');
        this.log(`rank ${link.rank} keeps its link on the socket: ${d.string()}`);
        this.forgetRingFile(link);
        this.stopRing(link);
        link.ringing = false;
        return;
      case Ctl.Beat:
        if (!link.established) return this.reject(link, 'heartbeat before authentication');
        this.heartbeat.peerTimeout(link.clock, d.u32());
        return;
      case Ctl.Ready:
        if (this.rank !== 0 || !link.established) return this.reject(link, 'unexpected ready');
        if (++this.ready === this.size - 1) {
          for (const l of this.links) if (l) this.sendCtl(l, Ctl.Go, new Uint8Array(0));
          this.resolveFormed();
        }
        return;
      case Ctl.Go:
        if (link.rank !== 0 || !link.established) return this.reject(link, 'unexpected go');
        this.resolveFormed();
        return;
      case Ctl.Table:
        if (!link.established || link.rank !== 0 || this.gotTable) return this.reject(link, 'unexpected address table');
        this.gotTable = true;
        for (let r = 0; r < this.size; r++) this.table.push(readAddress(d));
        this.connectLowerRanks();
        return;
      default:
        (link as LinkWithHandshake).onHandshake?.(ctl, d);
    }
  }

  // ---------------------------------------------------------------- connections

  private attach(socket: net.Socket): Link {
    const link = new Link(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    link.parser = new FrameParser(
      (f, t, b, p) => this.onFrame(link, f, t, b, p),
      HANDSHAKE_MAX_FRAME,
      this.opts.allocPayload,
    );
    socket.on('data', (chunk: Buffer) => this.readChunk(link, chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      link.lastError = e.code ? `${e.code}: ${e.message}` : e.message;
    });
    socket.on('close', () => this.onClose(link));
    return link;
  }

  /** A chunk read from the link's socket: its frames to their handlers. */
  private readChunk(link: Link, chunk: Buffer): void {
    link.clock.rx++;
    try {
      link.parser.push(chunk);
    } catch (e) {
      // Only framing/handshake errors are the peer's fault; errors thrown by the message
      // handler propagate to the application.
      if (e instanceof FrameError) this.reject(link, e.message);
      else throw e;
    }
    if (link.established && link.ringIn) {
      // not polling: a doorbell may have rung, re-arm it before looking (a writer after the look rings again)
      if (!this.polling) link.ringIn.asleep();
      this.readRing(link);
      this.pollSoon();
    }
    if (link.established && this.arrivedHandler) this.arrivedHandler();
  }

  // ---------------------------------------------------------------- rings

  /** Lower ranks offer each peer on this machine a ring file once the mesh is up. */
  private offerRings(): void {
    if (!this.ringsOn() || !ringsAvailable()) return;
    for (const link of this.links) {
      if (!link?.established || !link.local || link.rank < this.rank || link.direct || link.lost || link.bye) continue;
      const f = createRingFile();
      if (typeof f === 'string') { this.log(`no ring to rank ${link.rank}: ${f}`); continue; }
      link.ringing = true;
      link.ringFile = f.path;
      link.ringForget = atExit(() => unlinkRingFile(f.path));
      link.ringIn = new RingReader(f.buffer, 1, f.capacity, this.opts.allocPayload);
      link.pendingOut = new RingWriter(f.buffer, 0, f.capacity);
      this.ringLinks.push(link);
      this.sendCtl(link, Ctl.RingOffer, this.enc.reset().string(f.path).u32(f.capacity).finish());
    }
  }

  /** Rings between this node and its same-machine peers are wanted (the option, else $LUNA_RING). */
  private ringsOn(): boolean {
    return this.opts.rings ?? tuned('LUNA_RING') !== 0;
  }

  private acceptRing(link: Link, path: string, capacity: number): void {
    // a thread already writes this socket itself: a ring beside it would break the order
    const f = !this.ringsOn() ? 'rings are off here' : link.direct ? 'its socket is written directly' : openRingFile(path, capacity);
    // the offering node unlinks the name once this answer comes; this side does it too, so a
    // node killed between its offer and the answer leaves no file behind (the mappings stay)
    if (basename(path).startsWith(RING_FILE_PREFIX)) unlinkRingFile(path);
    if (typeof f === 'string') {
      this.sendCtl(link, Ctl.RingRefuse, this.enc.reset().string(f).finish());
      return;
    }
    link.ringing = true;
    link.ringIn = new RingReader(f.buffer, 0, f.capacity, this.opts.allocPayload);
    link.ringOut = new RingWriter(f.buffer, 1, f.capacity);
    this.ringLinks.push(link);
    this.sendCtl(link, Ctl.RingAccept, EMPTY);
  }

  private forgetRingFile(link: Link): void {
    if (link.ringFile === undefined) return;
    unlinkRingFile(link.ringFile);
    link.ringFile = undefined;
    link.ringForget?.();
    link.ringForget = undefined;
  }

  /** The link goes back to its socket alone (refused, or closing): what is in its ring was read. */
  private stopRing(link: Link): void {
    link.ringIn = undefined;
    link.ringOut = undefined;
    link.pendingOut = undefined;
    const i = this.ringLinks.indexOf(link);
    if (i >= 0) this.ringLinks.splice(i, 1);
  }

  /** Deliver what the peer wrote into our ring, up to its next socket frame; how many. */
  private readRing(link: Link): number {
    const ring = link.ringIn;
    if (!ring) return 0;
    const n = ring.read(link.sockRecv, (tag, body, payload) => this.deliver(link.rank, tag, body, payload));
    if (n > 0) link.clock.rx++;
    return n;
  }

  /** Poll the rings from now until RING_SPIN_US after the last message (a message extends it). */
  private pollSoon(): void {
    if (this.ringSpinMs <= 0 || this.ringLinks.length === 0 || this.closing) return;
    const now = performance.now();
    this.pollUntil = now + this.ringSpinMs;
    if (this.polling) return;
    // (a doorbell wakes this node when it does not poll)
    if (!this.coreForPoll(now)) return;
    this.polling = true;
    for (const l of this.ringLinks) l.ringIn!.awake();
    setImmediate(this.poll);
  }

  /** Whether a core is free for polling: asked of the machine at most every GATE_MS. */
  private coreForPoll(now: number): boolean {
    if (now - this.gateAt > GATE_MS) { this.gateAt = now; this.gateFree = machineCoreFree(this.cpus); }
    return this.gateFree;
  }

  // one turn per event-loop iteration, so sockets, timers and workers are served between turns
  private poll = (): void => {
    if (this.closing) { this.polling = false; return; }
    const links = this.ringLinks;
    let got = 0;
    for (let i = 0; i < links.length; i++) got += this.readRing(links[i]!);
    const now = performance.now();
    if (got > 0) {
      this.pollUntil = now + this.ringSpinMs;
      this.arrivedHandler?.();
    } else if (now > this.pollUntil || !this.coreForPoll(now)) {
      // say we stop, then look once more: a writer that missed the first sees the second
      for (const l of links) l.ringIn!.asleep();
      for (let i = 0; i < links.length; i++) got += this.readRing(links[i]!);
      if (got === 0) { this.polling = false; return; }
      for (const l of links) l.ringIn!.awake();
      this.pollUntil = performance.now() + this.ringSpinMs;
      this.arrivedHandler?.();
    }
    setImmediate(this.poll);
  };

  private onClose(link: Link): void {
    if (!link.established) return;
    // what the peer wrote into the ring before its socket closed was sent before the close
    if (link.ringIn) this.readRing(link);
    this.forgetRingFile(link);
    this.lose(link, link.lastError ? `connection to rank ${link.rank} failed (${link.lastError})` : `rank ${link.rank} closed the connection`);
  }

  /** Report an established link's peer lost, once (unless it said bye or we are closing). */
  private lose(link: Link, reason: string): void {
    if (this.links[link.rank] !== link || this.closing || link.bye || link.lost) return;
    link.lost = true;
    if (!this.formed) this.rejectFormed(new Error(reason));
    if (this.lostHandler) this.lostHandler(link.rank, reason);
    else this.pendingLost.push([link.rank, reason]);
  }

  /** A live but silent peer: report it and cut the link, so it sees the loss too if it wakes up. */
  private drop(link: Link, reason: string): void {
    this.retireDirect(link);
    this.lose(link, reason);
    link.parser.stopped = true;
    link.socket.destroy();
  }

  private reject(link: Link, why: string): void {
    this.retireDirect(link);
    link.parser.stopped = true;
    if (!link.established) this.log(`refused connection from ${link.remote}: ${why}`);
    else {
      link.lastError = `protocol error: ${why}`;
      this.log(`dropping rank ${link.rank} (${link.remote}): ${why}`);
    }
    link.socket.destroy();
  }

  /** Server side: challenge the connector, check its proof, prove ourselves back. */
  private accept(socket: net.Socket, local = false): void {
    if (this.closing) return void socket.destroy();
    const link = this.attach(socket) as LinkWithHandshake;
    link.local = local;
    const nonce = newNonce();
    const timer = setTimeout(() => this.reject(link, 'no authentication within 10 s'), HANDSHAKE_TIMEOUT_MS);
    socket.once('close', () => clearTimeout(timer));
    link.onHandshake = (ctl, d) => {
      if (ctl !== Ctl.Auth || link.established) return this.reject(link, 'unexpected handshake message');
      const rank = d.u32();
      const size = d.u32();
      const theirNonce = d.bytes();
      const mac = d.bytes();
      const addr = readAddress(d);
      if (!proofMatches(proof(this.secret, 'connect', nonce, rank, size), mac)) {
        return this.reject(link, 'wrong or missing secret');
      }
      if (size !== this.size) return this.reject(link, `size mismatch (peer says ${size}, we have ${this.size})`);
      if (rank <= this.rank || rank >= this.size) return this.reject(link, `rank ${rank} may not connect to rank ${this.rank}`);
      if (this.links[rank]) return this.reject(link, `rank ${rank} is already connected`);
      clearTimeout(timer);
      link.rank = rank;
      link.established = true;
      link.parser.maxFrame = MAX_FRAME;
      this.links[rank] = link;
      if (this.rank === 0) this.table[rank] = addr;
      this.sendCtl(link, Ctl.AuthOk, this.enc.reset().bytes(proof(this.secret, 'accept', theirNonce, this.rank, this.size)).finish());
      this.linkUp();
    };
    this.sendCtl(link, Ctl.Hello, this.enc.reset().bytes(nonce).u32(this.rank).u32(this.size).finish());
  }

  /**
   * Client side: answer the challenge, then check the acceptor's proof. A rank on this machine is
   * reached over its Unix socket when that connects, else over TCP.
   */
  private async connect(rank: number, addr: PeerAddress): Promise<void> {
    if (addr.local && localSocketsEnabled() && addr.local.machine === machineId()) {
      try {
        return await this.connectVia(rank, addr, true);
      } catch (e) {
        if (!(e as { unreachable?: boolean }).unreachable) throw e;
      }
    }
    return this.connectVia(rank, addr, false);
  }

  private connectVia(rank: number, addr: PeerAddress, local: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const where = local ? addr.local!.path : `${addr.host}:${addr.port}`;
      const socket = local ? net.connect({ path: addr.local!.path }) : net.connect({ host: addr.host, port: addr.port });
      const link = this.attach(socket) as LinkWithHandshake;
      link.local = local;
      const myNonce = newNonce();
      let sentAuth = false;
      let heard = false;
      const fail = (msg: string, retriable: boolean) => {
        socket.destroy();
        // nothing came back over a local socket: the caller tries TCP
        reject(Object.assign(new Error(msg), { retriable, unreachable: local && !heard }));
      };
      const timer = setTimeout(() => fail(`rank ${rank} at ${where} did not answer the handshake`, true), HANDSHAKE_TIMEOUT_MS);
      socket.once('close', () => {
        clearTimeout(timer);
        if (link.established) return;
        if (sentAuth) fail(`rank ${rank} at ${where} refused our authentication (wrong secret or size?)`, false);
        else fail(`cannot connect to rank ${rank} at ${where}${link.lastError ? ` (${link.lastError})` : ''}`, true);
      });
      link.onHandshake = (ctl, d) => {
        heard = true;
        if (ctl === Ctl.Hello && !sentAuth) {
          const nonce = d.bytes();
          const theirRank = d.u32();
          const theirSize = d.u32();
          if (theirRank !== rank || theirSize !== this.size) {
            return fail(`${where} is rank ${theirRank} of ${theirSize}, expected rank ${rank} of ${this.size}`, true);
          }
          sentAuth = true;
          const me = this.myAddress();
          this.enc.reset().u32(this.rank).u32(this.size).bytes(myNonce);
          writeAddress(this.enc.bytes(proof(this.secret, 'connect', nonce, this.rank, this.size)), me);
          this.sendCtl(link, Ctl.Auth, this.enc.finish());
        } else if (ctl === Ctl.AuthOk && sentAuth && !link.established) {
          if (!proofMatches(proof(this.secret, 'accept', myNonce, rank, this.size), d.bytes())) {
            return fail(`rank ${rank} at ${where} does not know the run's secret`, false);
          }
          clearTimeout(timer);
          link.rank = rank;
          link.established = true;
          link.parser.maxFrame = MAX_FRAME;
          this.links[rank] = link;
          resolve();
          this.linkUp();
        } else {
          fail(`unexpected handshake message ${ctl} from ${where}`, false);
        }
      };
    });
  }

  private myAddress(): PeerAddress {
    return this.address ?? { host: '', port: 0 };
  }

  // ---------------------------------------------------------------- mesh formation

  async form(): Promise<void> {
    const { opts } = this;
    if (this.size === 1) {
      this.secret = opts.secret ?? newSecret();
      this.formed = true;
      return;
    }
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => this.rejectFormed(new Error(this.missingMessage(timeoutMs))), timeoutMs);
    const onAbort = () => this.rejectFormed(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('mesh formation aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (opts.signal?.aborted) onAbort();
      // Every rank listens except the last, which only connects.
      this.expected = this.size - 1;
      if (this.rank < this.size - 1) await this.listen();
      if (this.rank === 0) {
        this.secret = opts.secret ?? newSecret();
        this.table[0] = this.myAddress();
        await Promise.race([opts.rendezvous.publish(this.myAddress(), this.secret), this.formedPromise]);
      } else {
        await Promise.race([this.joinRankZero(deadline), this.formedPromise]);
      }
      await this.formedPromise;
      this.formed = true;
      this.offerRings();
      // every link is up: nobody connects any more, and a socket file must not outlive the run
      this.localServer?.close();
      this.localServer = undefined;
      this.heartbeat.start();
      if (this.rank === 0) await opts.rendezvous.cleanup?.().catch(() => {});
    } catch (e) {
      await this.close();
      // Rank 0 leaves nothing behind (the file holds the secret) when the mesh does not form.
      if (this.rank === 0) await opts.rendezvous.cleanup?.().catch(() => {});
      throw e;
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async listen(): Promise<void> {
    const host = this.opts.listenHost ?? '127.0.0.1';
    const server = net.createServer((s) => this.accept(s));
    this.server = server;
    await new Promise<void>((res, rej) => {
      server.once('error', rej);
      server.listen({ host, port: 0 }, () => {
        server.off('error', rej);
        res();
      });
    });
    server.on('error', (e) => this.log(`listen socket error: ${e.message}`));
    const port = (server.address() as net.AddressInfo).port;
    this.address = { host: this.opts.advertiseHost ?? advertiseFor(host), port };
    if (localSocketsEnabled()) {
      const path = localSocketPath();
      const local = net.createServer((s) => this.accept(s, true));
      // without it (a temporary directory it may not write) every link stays on TCP
      const up = await new Promise<boolean>((res) => {
        local.once('error', () => res(false));
        local.listen({ path }, () => res(true));
      });
      if (up) {
        this.localServer = local;
        if (!path.startsWith('\0')) {
          const forget = atExit(() => rmSync(path, { force: true }));
          local.once('close', forget);
        }
        local.on('error', (e) => this.log(`local listen socket error: ${e.message}`));
        this.address.local = { machine: machineId(), path };
      }
    }
  }

  /** Find rank 0 through the rendezvous and register; retried while rank 0 is not up yet. */
  private async joinRankZero(deadline: number): Promise<void> {
    let lastErr: Error | undefined;
    while (Date.now() < deadline && !this.closing) {
      const found = await this.opts.rendezvous.lookup();
      this.secret = this.opts.secret ?? found.secret ?? '';
      if (!this.secret) throw new Error('no secret: set LUNA_SECRET or use a rendezvous that carries it');
      try {
        await this.connect(0, found);
        return;
      } catch (e) {
        lastErr = e as Error;
        if (!(e as { retriable?: boolean }).retriable) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw lastErr ?? new Error('mesh formation cancelled');
  }

  private connectLowerRanks(): void {
    for (let r = 1; r < this.rank; r++) {
      this.connect(r, this.table[r]!).catch((e: Error) => this.rejectFormed(e));
    }
  }

  private linkUp(): void {
    let up = 0;
    for (const l of this.links) if (l?.established) up++;
    if (this.rank === 0 && up === this.expected) {
      // Everyone registered: hand out the directory.
      this.enc.reset();
      for (const a of this.table) writeAddress(this.enc, a!);
      const body = this.enc.finishCopy();
      for (const l of this.links) if (l) this.sendCtl(l, Ctl.Table, body);
    }
    if (up === this.expected && this.rank !== 0) this.sendCtl(this.links[0]!, Ctl.Ready, new Uint8Array(0));
  }

  private missingMessage(timeoutMs: number): string {
    const missing: number[] = [];
    for (let r = 0; r < this.size; r++) if (r !== this.rank && !this.links[r]?.established) missing.push(r);
    return `rank ${this.rank}: mesh not formed after ${timeoutMs / 1000} s; no link to rank(s) ${missing.join(', ')}`;
  }
}

const EMPTY = new Uint8Array(0);
/** how often a poll asks again whether a core is free for it, ms (the question costs ~5 µs) */
const GATE_MS = 1;

interface LinkWithHandshake extends Link {
  onHandshake?: (ctl: number, d: Decoder) => void;
}

/**
 * Take a direct link's write lock. Its other holders keep it for one write(2) of a small frame;
 * one killed in between (a worker terminated) would keep it for good: after 50 ms it is taken.
 */
function lockDirect(d: Int32Array): void {
  let deadline = 0;
  for (let i = 0; Atomics.compareExchange(d, 0, 0, 1) !== 0; i++) {
    if ((i & 1023) !== 1023) continue;
    const now = Date.now();
    if (deadline === 0) deadline = now + 50;
    else if (now > deadline) { Atomics.store(d, 0, 1); return; }
  }
}

let dupAddon: { dup(fd: number): number } | null | undefined;

/** A duplicate of descriptor `fd`, or -1 where the addon is not built (then nothing writes directly). */
function dupFd(fd: number): number {
  if (dupAddon === undefined) dupAddon = loadAddon<{ dup(fd: number): number }>('luna_fd') ?? null;
  return dupAddon ? dupAddon.dup(fd) : -1;
}

function closeSocket(s: net.Socket): Promise<void> {
  return new Promise((res) => {
    if (s.destroyed) return res();
    const t = setTimeout(() => s.destroy(), 2000);
    s.once('close', () => {
      clearTimeout(t);
      res();
    });
    s.end();
  });
}

/** The address to advertise for a listen host: wildcards need a concrete, reachable one. */
export function advertiseFor(listenHost: string): string {
  if (listenHost !== '0.0.0.0' && listenHost !== '::' && listenHost !== '') return listenHost;
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return os.hostname();
}

/** Form the mesh and return the transport once this rank is linked to every other rank. */
export async function createTcpTransport(opts: TcpTransportOptions): Promise<TcpTransport> {
  if (!(Number.isInteger(opts.size) && opts.size >= 1)) throw new RangeError(`bad size ${opts.size}`);
  if (!(Number.isInteger(opts.rank) && opts.rank >= 0 && opts.rank < opts.size)) throw new RangeError(`bad rank ${opts.rank} for size ${opts.size}`);
  const mesh = new Mesh(opts);
  await mesh.form();
  return mesh;
}
