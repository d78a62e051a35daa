// The control protocol of a run, on its own channel: distributed termination detection over
// the participants of every node, one merged hang report, fault propagation and abort, lost
// nodes, clock offsets. It knows nothing of fragments: it asks the participants registered with
// it (layer.ts). The same protocol runs with one node (over a mesh of one) and many.
//
// Termination (rank 0 coordinates): when rank 0 is idle it sends a PROBE wave; every node
// answers (idle: every participant idle, counted messages sent and received over all channels,
// live work of all participants). The run is over when two consecutive waves see every node idle
// with Σsent = Σreceived and identical counters (no message was in flight and nothing moved in
// between). Live work left then → hang: rank 0 gathers every participant's waits from every
// node and prints one report.
import { hostname } from 'node:os';
import { hostCpus, type HostCpus } from '../../core/cpus.js';
import { Decoder, Encoder } from '../transport/codec.js';
import type { Channel, Router } from '../transport/router.js';
import { CHANNEL } from './channels.js';
import type { Participant } from './layer.js';
import { formatHang, type HangGroup } from './report.js';

/**
 * How long rank 0 stays idle, with no counted message sent or received, before it probes for
 * termination: a node in a fine-grained exchange is idle between two messages microseconds
 * apart, and a wave then (two messages, two wake-ups) costs more than a step of the exchange
 * (pingpong across 2 processes ran a wave every ~10 steps).
 */
const WAVE_DELAY_MS = 1;
const PROBE = 1, PROBE_REPLY = 2, STOP = 3, HANG_QUERY = 4, HANG_REPORT = 5, FAULT = 6, ABORT = 7;
const CLOCK_PING = 10, CLOCK_PONG = 11, INTERRUPT = 12;
/**
 * A node that sees another (not rank 0) lost waits this long for rank 0 to stop the run naming
 * it: ending at once would let a launcher such as mpirun kill the job before rank 0 says why.
 */
const LOST_VERDICT_MS = 5000;

export interface ClusterResult { ok: boolean; message?: string; kind?: 'fault' | 'hang' | 'lost' | 'interrupted' }

interface Reply { idle: boolean; sent: number; recv: number; live: number }

export class Control {
  private readonly ctl: Channel;
  private readonly enc = new Encoder(256);
  private readonly participants: Participant[] = [];
  private readonly idleListeners: (() => void)[] = [];
  private readonly rank: number;
  private readonly size: number;
  // termination
  private wave = 0;
  private replies: (Reply | undefined)[] = [];
  private lastWave: string | null = null;
  private probing = false;
  private probeDelay = 1;
  private waveTimer: NodeJS.Timeout | null = null;
  /** rank 0's counted messages (sent + received) when the wave timer was armed or the last wave began */
  private traffic = 0;
  private hangReports: (HangGroup[] | undefined)[] = [];
  // clock
  private pong: ((p: { t: number } & HostCpus) => void) | null = null;
  /** rank 0 after measureClocks: each node's host and CPUs */
  readonly hosts: HostCpus[] = [];
  private ended = false;
  private settle!: (r: ClusterResult) => void;
  readonly done: Promise<ClusterResult>;

  constructor(private readonly router: Router, private readonly now: () => number) {
    this.rank = router.rank;
    this.size = router.size;
    this.done = new Promise((r) => { this.settle = r; });
    this.ctl = router.channel(CHANNEL.control, 'runtime control', (from, tag, body) => this.receive(from, tag, body));
    router.transport.onPeerLost((rank, reason) => this.lost(rank, reason));
  }

  /** Termination waves rank 0 started so far (each costs every node a message and its answer). */
  get waves(): number {
    return this.wave;
  }

  /** The run ended on this node (done has settled or is about to). */
  get finished(): boolean {
    return this.ended;
  }

  register(p: Participant): void {
    if (this.participants.some((q) => q.name === p.name)) throw new Error(`a participant named ${p.name} is registered already`);
    this.participants.push(p);
  }

  /** Called each time the node is idle (several nodes): work stealing asks for work then. */
  onIdle(listener: () => void): void {
    this.idleListeners.push(listener);
  }

  /** Every participant idle on this node. */
  nodeIdle(): boolean {
    for (const p of this.participants) if (!p.idle()) return false;
    return true;
  }

  private live(): number {
    let n = 0;
    for (const p of this.participants) n += p.live();
    return n;
  }

  /**
   * The end's path run once, ending nothing, before the program starts: `idle` (the node's call
   * when it becomes idle, which wakes this protocol), the participants' idle() and live(). Its code
   * runs otherwise for the first time at the run's end, compiled then: the node idle → the end
   * settled took 0.27–0.46 ms of a 40–60 ms span (stencil_1d 1 × 2 at 2^11, load 9–10).
   */
  warmEnd(idle: () => void): void {
    if (this.ended) return;
    // ended meanwhile, wake returns at its first test
    this.ended = true;
    try { idle(); } finally { this.ended = false; }
    this.nodeIdle();
    this.live();
  }

  /**
   * A participant may have become idle: if the whole node is, a node alone ends (or hangs), and
   * with several nodes rank 0 soon probes whether the run is over.
   */
  wake(): void {
    if (this.ended || !this.nodeIdle()) return;
    if (this.size === 1) {
      // a node alone: idle with nothing in flight is the end (or a hang), no wave needed; a
      // message a layer sent itself arrives on the next turn
      if (this.router.sent !== this.router.received) { setImmediate(() => this.wake()); return; }
      if (this.live() === 0) this.end({ ok: true });
      else this.end({ ok: false, kind: 'hang', message: formatHang(this.localWaits(), this.summaries()) });
      return;
    }
    for (const l of this.idleListeners) l();
    // Rank 0 probes only once it stayed idle a moment: a node that waits for a message a few
    // microseconds away (fine-grained work across nodes) must not slow it with probe traffic.
    if (this.rank === 0 && !this.probing && !this.waveTimer) this.armWave();
  }

  private trafficNow(): number {
    return this.router.sent + this.router.received;
  }

  /** Probe once rank 0 was idle and heard nothing for WAVE_DELAY_MS (a run with messages flowing is not over). */
  private armWave(): void {
    this.traffic = this.trafficNow();
    this.waveTimer = setTimeout(() => {
      this.waveTimer = null;
      if (this.ended || this.probing || !this.nodeIdle()) return; // busy: its next idle moment arms it again
      if (this.trafficNow() !== this.traffic) this.armWave();
      else this.startWave();
    }, WAVE_DELAY_MS);
  }

  /** A fault, as the user reads it: rank 0 stops every node with it. */
  fault(message: string): void {
    if (this.rank === 0) this.abortAll(message, 'fault');
    // rank 0 answers with ABORT; if it is gone the lost-peer path ends us
    else this.send(0, FAULT, this.enc.reset().string(message).finishCopy());
  }

  /** An error of the protocol itself (a malformed message): a fault naming this node. */
  fail(e: unknown): void {
    this.fault(`internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n  on node ${this.rank}`);
  }

  private send(to: number, tag: number, body: Uint8Array = new Uint8Array(0)): void {
    this.ctl.send(to, tag, body);
  }

  private receive(from: number, tag: number, body: Uint8Array): void {
    if (this.ended) return;
    const d = new Decoder(body);
    try {
      switch (tag) {
        case PROBE: this.answerProbe(d.varint()); break;
        case PROBE_REPLY: this.probeReply(from, d); break;
        case HANG_QUERY: this.answerHang(); break;
        case HANG_REPORT: this.hangReport(from, d); break;
        case STOP: this.end({ ok: d.u8() === 1 }); break;
        case FAULT: this.abortAll(d.string(), 'fault'); break;
        case ABORT: this.end({ ok: false, kind: 'fault' }); break;
        case INTERRUPT: this.interrupted(from, d.string()); break;
        case CLOCK_PING: { const h = hostCpus(hostname()); this.send(from, CLOCK_PONG, this.enc.reset().f64(this.now()).string(h.host).string(h.list).varint(h.count).varint(h.machine).finishCopy()); break; }
        case CLOCK_PONG: { const p = this.pong; this.pong = null; p?.({ t: d.f64(), host: d.string(), list: d.string(), count: d.varint(), machine: d.varint() }); break; }
        default: throw new Error(`unknown control message ${tag} from node ${from}`);
      }
    } catch (e) { this.fail(e); }
  }

  // ------------------------------------------------------------------ clocks

  /**
   * Rank 0: estimate each node's clock offset (NTP-style, the sample with the smallest round
   * trip). Nodes on rank 0's host share its monotonic clock: their offset is exactly 0. The
   * answers also say on which host each node runs and which CPUs it may use (`hosts`).
   */
  async measureClocks(rounds = 8): Promise<number[]> {
    const offsets = new Array<number>(this.size).fill(0);
    this.hosts[0] = hostCpus(hostname());
    for (let r = 1; r < this.size; r++) {
      let best = Infinity;
      for (let i = 0; i < rounds; i++) {
        const t0 = this.now();
        // a run that ended meanwhile (a node whose ucode module failed to load, say) answers no
        // more pings: the offsets measured so far, not a wait for ever
        const pong = await Promise.race([new Promise<{ t: number } & HostCpus>((res) => { this.pong = res; this.send(r, CLOCK_PING); }), this.done.then(() => undefined)]);
        if (pong === undefined) { this.pong = null; return offsets; }
        const t1 = this.now();
        const { t: _t, ...host } = pong;
        this.hosts[r] = host;
        if (pong.host === hostname()) { offsets[r] = 0; break; }
        if (t1 - t0 < best) { best = t1 - t0; offsets[r] = Math.round((t0 + t1) / 2 - pong.t); }
      }
    }
    return offsets;
  }

  // ------------------------------------------------------------------ termination

  private startWave(): void {
    this.probing = true;
    this.traffic = this.trafficNow();
    this.wave++;
    this.replies = [];
    const body = this.enc.reset().varint(this.wave).finishCopy();
    for (let r = 0; r < this.size; r++) this.send(r, PROBE, body);
  }

  private answerProbe(wave: number): void {
    this.send(0, PROBE_REPLY, this.enc.reset().varint(wave).u8(this.nodeIdle() ? 1 : 0).varint(this.router.sent).varint(this.router.received).varint(this.live()).finishCopy());
  }

  private probeReply(from: number, d: Decoder): void {
    if (d.varint() !== this.wave) return;
    this.replies[from] = { idle: d.u8() === 1, sent: d.varint(), recv: d.varint(), live: d.varint() };
    const all = this.replies;
    for (let r = 0; r < this.size; r++) if (!all[r]) return;
    const rs = all as Reply[];
    const quiet = rs.every((r) => r.idle);
    const sent = rs.reduce((a, r) => a + r.sent, 0), recv = rs.reduce((a, r) => a + r.recv, 0);
    const sig = rs.map((r) => `${r.sent}/${r.recv}/${r.live}`).join(',');
    if (quiet && sent === recv && sig === this.lastWave) {
      if (rs.every((r) => r.live === 0)) { this.broadcastStop(true); return; }
      this.hangReports = [];
      for (let r = 0; r < this.size; r++) this.send(r, HANG_QUERY);
      return;
    }
    this.lastWave = quiet && sent === recv ? sig : null;
    // Busy or changing: probe again soon (at once when the counters just settled).
    const delay = this.lastWave ? 0 : this.probeDelay;
    this.probeDelay = Math.min(20, this.probeDelay * 2);
    const again = (): void => {
      this.probing = false;
      if (!this.nodeIdle() || this.waveTimer) return;
      // rank 0 sent or received work since this wave began: wait for a quiet moment first
      if (this.trafficNow() !== this.traffic) this.armWave(); else this.startWave();
    };
    if (delay === 0) setImmediate(again); else setTimeout(again, delay);
  }

  /** This node's waits, one group per participant that has any. */
  private localWaits(): HangGroup[] {
    return this.participants.map((p) => ({ participant: p.name, node: this.rank, waits: p.waits() })).filter((g) => g.waits.length > 0);
  }

  private answerHang(): void {
    const groups = this.localWaits();
    const e = this.enc.reset().varint(groups.length);
    for (const g of groups) {
      e.string(g.participant).varint(g.waits.length);
      for (const w of g.waits) e.string(w.text).string(w.origin?.file ?? '').varint(w.origin?.line ?? 0).varint(w.origin?.col ?? 0);
    }
    this.send(0, HANG_REPORT, e.finishCopy());
  }

  private hangReport(from: number, d: Decoder): void {
    const groups: HangGroup[] = [];
    for (let g = d.varint(); g > 0; g--) {
      const participant = d.string();
      const waits = [];
      for (let n = d.varint(); n > 0; n--) {
        const text = d.string(), file = d.string(), line = d.varint(), col = d.varint();
        waits.push(file === '' ? { text } : { text, origin: { file, line, col } });
      }
      groups.push({ participant, node: from, waits });
    }
    this.hangReports[from] = groups;
    for (let r = 0; r < this.size; r++) if (!this.hangReports[r]) return;
    this.broadcastStop(false, { ok: false, kind: 'hang', message: formatHang(this.hangReports.flatMap((x) => x ?? []), this.summaries()) });
  }

  /** How each layer of this node sums up n of its waits (every node runs the same layers). */
  private summaries(): (participant: string, n: number) => string {
    return (name, n) => this.participants.find((p) => p.name === name)?.hangSummary(n) ?? `${n} wait(s) of ${name} never end`;
  }

  private broadcastStop(ok: boolean, result: ClusterResult = { ok }): void {
    for (let r = 1; r < this.size; r++) this.send(r, STOP, Uint8Array.of(ok ? 1 : 0));
    this.end(result);
  }

  // ------------------------------------------------------------------ faults

  private abortAll(message: string, kind: 'fault' | 'lost'): void {
    if (this.ended) return;
    for (let r = 0; r < this.size; r++) if (r !== this.rank) this.send(r, ABORT);
    this.end({ ok: false, kind, message });
  }

  private lost(rank: number, reason: string): void {
    if (this.ended) return;
    const message = `node ${rank} was lost (${reason}); stopping the run`;
    if (this.rank === 0) this.abortAll(message, 'lost');
    else if (rank === 0) this.end({ ok: false, kind: 'lost', message });
    else setTimeout(() => this.end({ ok: false, kind: 'lost', message }), LOST_VERDICT_MS).unref();
  }

  /**
   * This node is to stop (a signal, its launcher gone): every node ends its run as interrupted,
   * through rank 0, which names the node that was interrupted.
   */
  interrupt(message: string): void {
    if (this.finished) return;
    const text = this.rank === 0 ? message : `node ${this.rank}: ${message}`;
    if (this.rank !== 0) this.send(0, INTERRUPT, this.enc.reset().string(text).finishCopy());
    this.interrupted(this.rank, text);
  }

  private interrupted(from: number, text: string): void {
    if (this.finished) return;
    if (this.rank === 0) {
      const body = this.enc.reset().string(text).finishCopy();
      for (let r = 1; r < this.size; r++) if (r !== from) this.send(r, INTERRUPT, body);
    }
    this.end({ ok: false, kind: 'interrupted', message: text });
  }

  private end(r: ClusterResult): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waveTimer) { clearTimeout(this.waveTimer); this.waveTimer = null; }
    this.settle(r);
  }
}
