// The node's side of a run's coordination, on a control channel: distributed termination
// detection, one merged hang report, fault propagation, work stealing and clock offsets. The
// same protocol runs with one node (over a loopback transport) and many.
//
// Termination (rank 0 coordinates): when rank 0 is idle it sends a PROBE wave; every node
// answers with (idle, counted messages sent and received over all channels, live CFs). The run
// is over when two consecutive waves see every node idle with Σsent = Σreceived and identical
// counters (no message was in flight and nothing moved in between). Live CFs left then → hang:
// rank 0 gathers every node's waiting CFs and prints one report.
import { hostname } from 'node:os';
import { hostCpus, type HostCpus } from '../../core/cpus.js';
import { Decoder, Encoder } from '../transport/codec.js';
import type { Channel, Router } from '../transport/router.js';
import type { NodeRuntime, RunFault } from '../node/runtime.js';
import { DataChannel } from './data.js';
import { faultText, formatHang, hangItems, type HangItem } from './report.js';

export const CONTROL_CHANNEL = 2;
/** how long rank 0 stays idle before it probes for termination */
const WAVE_DELAY_MS = 1;
const PROBE = 1, PROBE_REPLY = 2, STOP = 3, HANG_QUERY = 4, HANG_REPORT = 5, FAULT = 6, ABORT = 7;
const STEAL_REQ = 8, STEAL_NONE = 9, CLOCK_PING = 10, CLOCK_PONG = 11;

export type EndKind = 'completed' | 'failed' | 'hung' | 'lost';
export interface ClusterResult { ok: boolean; message?: string; kind?: 'fault' | 'hang' | 'lost' }

interface Reply { idle: boolean; sent: number; recv: number; live: number }

export class ClusterNode {
  readonly data: DataChannel;
  private readonly ctl: Channel;
  private readonly enc = new Encoder(256);
  private rt!: NodeRuntime;
  private readonly rank: number;
  private readonly size: number;
  // termination
  private wave = 0;
  private replies: (Reply | undefined)[] = [];
  private lastWave: string | null = null;
  private probing = false;
  private probeDelay = 1;
  private hangReports: (HangItem[] | undefined)[] = [];
  // stealing
  private stealing = false;
  private stealAttempt = 0;
  private stealBackoff = 1;
  // clock
  private pong: ((p: { t: number } & HostCpus) => void) | null = null;
  /** rank 0 after measureClocks: each node's host and CPUs */
  readonly hosts: HostCpus[] = [];
  private finished = false;
  private settle!: (r: ClusterResult) => void;
  readonly done: Promise<ClusterResult>;

  constructor(private readonly router: Router, private readonly now: () => number) {
    this.rank = router.rank;
    this.size = router.size;
    this.done = new Promise((r) => { this.settle = r; });
    this.data = new DataChannel(router, now, (e) => this.rt.fail(e));
    this.data.onCfArrived = () => { this.stealBackoff = 1; this.stealing = false; this.stealAttempt = 0; };
    this.ctl = router.channel(CONTROL_CHANNEL, 'runtime control', (from, tag, body) => this.receive(from, tag, body));
    router.transport.onPeerLost((rank, reason) => this.lost(rank, reason));
  }

  attach(rt: NodeRuntime): void {
    this.rt = rt;
    this.data.attach(rt);
    // what arrived may make CFs ready: run them now rather than on the next turn of the loop
    this.router.onArrived(() => { if (!this.finished) rt.pumpNow(); });
    rt.onIdle = () => this.idle();
    rt.onFault = (f) => this.fault(f);
  }

  private send(to: number, tag: number, body: Uint8Array = new Uint8Array(0)): void {
    this.ctl.send(to, tag, body);
  }

  private receive(from: number, tag: number, body: Uint8Array): void {
    if (this.finished) return;
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
        case STEAL_REQ: this.giveWork(from); break;
        case STEAL_NONE: this.stealRefused(); break;
        case CLOCK_PING: { const h = hostCpus(hostname()); this.send(from, CLOCK_PONG, this.enc.reset().f64(this.now()).string(h.host).string(h.list).varint(h.count).varint(h.machine).finishCopy()); break; }
        case CLOCK_PONG: { const p = this.pong; this.pong = null; p?.({ t: d.f64(), host: d.string(), list: d.string(), count: d.varint(), machine: d.varint() }); break; }
        default: throw new Error(`unknown control message ${tag} from node ${from}`);
      }
    } catch (e) { this.rt.fail(e); }
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
        const pong = await new Promise<{ t: number } & HostCpus>((res) => { this.pong = res; this.send(r, CLOCK_PING); });
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

  private idle(): void {
    if (this.finished) return;
    if (this.size === 1) {
      // a node alone: idle with nothing in flight is the end (or a hang), no wave needed
      if (this.rt.live === 0) this.end({ ok: true });
      else this.answerHangLocally();
      return;
    }
    if (this.rt.program.hasStealable) this.trySteal();
    // Rank 0 probes only once it stayed idle a moment: a node that waits for a message a few
    // microseconds away (fine-grained work across nodes) must not slow it with probe traffic.
    if (this.rank === 0 && !this.probing && !this.waveTimer) {
      this.waveTimer = setTimeout(() => {
        this.waveTimer = null;
        if (!this.finished && !this.probing && this.rt.idle()) this.startWave();
      }, WAVE_DELAY_MS);
    }
  }

  private waveTimer: NodeJS.Timeout | null = null;

  private answerHangLocally(): void {
    this.end({ ok: false, kind: 'hang', message: formatHang(hangItems(this.rt, this.rank)) });
  }

  private startWave(): void {
    this.probing = true;
    this.wave++;
    this.replies = [];
    const body = this.enc.reset().varint(this.wave).finishCopy();
    for (let r = 0; r < this.size; r++) this.send(r, PROBE, body);
  }

  private answerProbe(wave: number): void {
    const rt = this.rt;
    this.send(0, PROBE_REPLY, this.enc.reset().varint(wave).u8(rt.idle() ? 1 : 0).varint(this.router.sent).varint(this.router.received).varint(rt.live).finishCopy());
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
    const again = (): void => { this.probing = false; if (this.rt.idle()) this.startWave(); };
    if (delay === 0) setImmediate(again); else setTimeout(again, delay);
  }

  private answerHang(): void {
    const items = hangItems(this.rt, this.rank);
    const e = this.enc.reset().varint(items.length);
    for (const it of items) e.string(it.text).string(it.origin.file).varint(it.origin.line).varint(it.origin.col);
    this.send(0, HANG_REPORT, e.finishCopy());
  }

  private hangReport(from: number, d: Decoder): void {
    const n = d.varint();
    const items: HangItem[] = [];
    for (let i = 0; i < n; i++) items.push({ node: from, text: d.string(), origin: { file: d.string(), line: d.varint(), col: d.varint() } });
    this.hangReports[from] = items;
    for (let r = 0; r < this.size; r++) if (!this.hangReports[r]) return;
    this.broadcastStop(false, { ok: false, kind: 'hang', message: formatHang(this.hangReports.flatMap((x) => x ?? [])) });
  }

  private broadcastStop(ok: boolean, result: ClusterResult = { ok }): void {
    for (let r = 1; r < this.size; r++) this.send(r, STOP, Uint8Array.of(ok ? 1 : 0));
    this.end(result);
  }

  // ------------------------------------------------------------------ faults

  private fault(f: RunFault): void {
    const text = faultText(this.rt, f);
    if (this.rank === 0) this.abortAll(text, 'fault');
    // rank 0 answers with ABORT; if it is gone the lost-peer path ends us
    else this.send(0, FAULT, this.enc.reset().string(text).finishCopy());
  }

  private abortAll(message: string, kind: 'fault' | 'lost'): void {
    if (this.finished) return;
    for (let r = 0; r < this.size; r++) if (r !== this.rank) this.send(r, ABORT);
    this.end({ ok: false, kind, message });
  }

  private lost(rank: number, reason: string): void {
    if (this.finished) return;
    const message = `node ${rank} was lost (${reason}); stopping the run`;
    if (this.rank === 0) this.abortAll(message, 'lost');
    else this.end({ ok: false, kind: 'lost', message: rank === 0 ? message : undefined });
  }

  private end(r: ClusterResult): void {
    if (this.finished) return;
    this.finished = true;
    if (this.waveTimer) { clearTimeout(this.waveTimer); this.waveTimer = null; }
    this.settle(r);
  }

  // ------------------------------------------------------------------ stealing

  private trySteal(): void {
    if (this.stealing || this.size < 2) return;
    this.stealing = true;
    const victim = this.rt.policy.stealVictim(this.rank, this.size, this.stealAttempt++);
    this.send(victim, STEAL_REQ);
  }

  private giveWork(thief: number): void {
    const cfs = this.rt.takeStealable(thief);
    if (cfs.length === 0) { this.send(thief, STEAL_NONE); return; }
    for (const cf of cfs) this.data.migrate(cf, thief);
  }

  private stealRefused(): void {
    this.stealing = false;
    // Back off so that idle nodes do not flood busy ones; the next idle() retries.
    const wait = this.stealBackoff;
    this.stealBackoff = Math.min(50, this.stealBackoff * 2);
    setTimeout(() => { if (!this.finished && this.rt.idle()) this.idle(); }, wait);
  }
}

