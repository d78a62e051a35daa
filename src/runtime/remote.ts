// The node's side of a multi-node run: runtime messages over the transport (CF migration, DF
// request/post/response/destroy/push), distributed termination detection, one merged hang
// report, fault propagation and work stealing.
//
// Termination (rank 0 coordinates): when rank 0 is idle it sends a PROBE wave; every node
// answers with (idle, sent, received, live). The run is over when two consecutive waves see
// every node idle with Σsent = Σreceived and identical counters (no message was in flight and
// nothing moved in between). Live CFs left then → hang: rank 0 gathers and prints the report.
import { hostname } from 'node:os';
import { Decoder, Encoder } from './transport/codec.js';
import type { Transport } from './transport/types.js';
import { valueSize, type DfValue } from '../ucode/value.js';
import type { Cf } from './cf.js';
import type { NodeRuntime, RemoteOps, RunFault } from './node.js';
import { decodeEnv, decodeValue, encodeEnv, encodeValue, isCounted, TAG } from './wire.js';
import { faultText, formatHang, hangItems, type HangItem } from './report.js';

export interface ClusterResult { ok: boolean; message?: string; kind?: 'fault' | 'hang' | 'lost' }

export class ClusterNode implements RemoteOps {
  private rt!: NodeRuntime;
  private enc = new Encoder(1024);
  private sent = 0;
  private recv = 0;
  private wave = 0;
  private replies: { idle: boolean; sent: number; recv: number; live: number }[] = [];
  private lastWave: string | null = null;
  private probing = false;
  private probeDelay = 1;
  private hangReports: HangItem[][] = [];
  private stealing = false;
  private stealVictim: number;
  private stealBackoff = 1;
  private finished = false;
  private settle!: (r: ClusterResult) => void;
  readonly done: Promise<ClusterResult>;

  constructor(private tp: Transport, private now: () => number) {
    this.done = new Promise((r) => { this.settle = r; });
    this.stealVictim = (tp.rank + 1) % tp.size;
    tp.onMessage((from, tag, body, payload) => this.onMessage(from, tag, body, payload));
    tp.onPeerLost((rank, reason) => this.lost(rank, reason));
  }

  /**
   * Rank 0: estimate each node's clock offset (NTP-style, the sample with the smallest round
   * trip). Nodes on rank 0's host share its monotonic clock: their offset is exactly 0.
   */
  async measureClocks(rounds = 8): Promise<number[]> {
    const offsets = new Array<number>(this.tp.size).fill(0);
    for (let r = 1; r < this.tp.size; r++) {
      let best = Infinity;
      for (let i = 0; i < rounds; i++) {
        const t0 = this.now();
        const pong = await new Promise<{ t: number; host: string }>((res) => { this.pong = res; this.tp.send(r, TAG.CLOCK_PING, new Uint8Array(0)); });
        const t1 = this.now();
        if (pong.host === hostname()) { offsets[r] = 0; break; }
        if (t1 - t0 < best) { best = t1 - t0; offsets[r] = Math.round((t0 + t1) / 2 - pong.t); }
      }
    }
    return offsets;
  }

  private pong: ((p: { t: number; host: string }) => void) | null = null;

  attach(rt: NodeRuntime): void {
    this.rt = rt;
    rt.onIdle = () => this.idle();
    rt.onFault = (f) => this.fault(f);
  }

  get rank(): number { return this.tp.rank; }

  // ------------------------------------------------------------------ RemoteOps

  private send(to: number, tag: number, payload?: Uint8Array): void {
    if (isCounted(tag)) this.sent++;
    this.tp.send(to, tag, this.enc.finishCopy(), payload);
  }

  migrate(cf: Cf, to: number): void {
    const e = this.enc.reset();
    e.varint(cf.site.id).string(cf.gid).varint(cf.id).svarint(cf.iter).u8(cf.outKeys !== null ? 1 : 0);
    encodeEnv(e, cf.env);
    const got = cf.got ?? [];
    e.varint(got.length / 2);
    for (let i = 0; i < got.length; i += 2) { e.string(got[i] as string); encodeValue(e, got[i + 1] as DfValue, true); }
    this.send(to, TAG.MIGRATE);
  }

  request(key: string, owner: number): void {
    this.enc.reset().string(key);
    this.send(owner, TAG.REQUEST);
  }

  post(key: string, owner: number, v: DfValue, count: number): void {
    const e = this.enc.reset().string(key).svarint(count);
    const payload = encodeValue(e, v);
    this.sendDf(key, owner, TAG.POST, v, payload);
  }

  respond(key: string, to: number, v: DfValue): void {
    const e = this.enc.reset().string(key);
    const payload = encodeValue(e, v);
    this.sendDf(key, to, TAG.RESPONSE, v, payload);
  }

  private sendDf(key: string, to: number, tag: number, v: DfValue, payload: Uint8Array | undefined): void {
    const tr = this.rt.tr;
    if (!tr) { this.send(to, tag, payload); return; }
    const df = tr.dfName(key);
    tr.dfSendStart(this.now(), df, to, valueSize(v));
    this.send(to, tag, payload);
    tr.dfSendEnd(this.now(), df, to);
  }

  private received(key: string, from: number, v: DfValue): void {
    const tr = this.rt.tr;
    if (tr) tr.dfReceive(this.now(), tr.dfName(key), from, valueSize(v));
  }

  destroy(key: string, owner: number): void {
    this.enc.reset().string(key);
    this.send(owner, TAG.DESTROY);
  }

  push(pushKey: string, owner: number, v: DfValue): void {
    const e = this.enc.reset().string(pushKey);
    const payload = encodeValue(e, v);
    this.send(owner, TAG.PUSH, payload);
  }

  // ------------------------------------------------------------------ receiving

  private onMessage(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    if (this.finished) return;
    if (isCounted(tag)) this.recv++;
    const d = new Decoder(body);
    const rt = this.rt;
    try {
      switch (tag) {
        case TAG.MIGRATE: {
          const site = rt.program.sites[d.varint()]!;
          const gid = d.string();
          const remoteId = d.varint();
          const iter = d.svarint();
          const started = d.u8() === 1;
          const env = decodeEnv(d);
          const cf = rt.makeCf(site, env, gid);
          cf.iter = iter;
          if (started) cf.outKeys = [];
          const n = d.varint();
          for (let i = 0; i < n; i++) { const k = d.string(); cf.addGot(k, decodeValue(d, undefined, true)); }
          cf.from = from;
          this.stealBackoff = 1;
          this.stealing = false;
          rt.receiveCf(cf, from, remoteId);
          break;
        }
        case TAG.REQUEST: rt.remoteRequest(d.string(), from); break;
        case TAG.POST: { const key = d.string(); const count = d.svarint(); const v = decodeValue(d, payload); this.received(key, from, v); rt.remotePost(key, v, count); break; }
        case TAG.RESPONSE: { const key = d.string(); const v = decodeValue(d, payload); this.received(key, from, v); rt.response(key, v); break; }
        case TAG.DESTROY: rt.remoteDestroy(d.string()); break;
        case TAG.PUSH: { const key = d.string(); rt.remotePush(key, decodeValue(d, payload)); break; }
        case TAG.PROBE: this.answerProbe(d.varint()); break;
        case TAG.PROBE_REPLY: this.probeReply(from, d); break;
        case TAG.HANG_QUERY: this.answerHang(); break;
        case TAG.HANG_REPORT: this.hangReport(from, d); break;
        case TAG.STOP: this.end({ ok: d.u8() === 1 }); break;
        case TAG.FAULT: this.abortAll(`node ${from}: ${d.string()}`, 'fault'); break;
        case TAG.ABORT: this.end({ ok: false, kind: 'fault' }); break;
        case TAG.STEAL_REQ: this.giveWork(from); break;
        case TAG.STEAL_NONE: this.stealRefused(); break;
        case TAG.CLOCK_PING: this.enc.reset().f64(this.now()).string(hostname()); this.tp.send(from, TAG.CLOCK_PONG, this.enc.finishCopy()); break;
        case TAG.CLOCK_PONG: { const p = this.pong; this.pong = null; p?.({ t: d.f64(), host: d.string() }); break; }
        default: throw new Error(`unknown message tag ${tag} from node ${from}`);
      }
    } catch (e) { rt.fail(e); }
  }

  // ------------------------------------------------------------------ termination

  private idle(): void {
    if (this.finished) return;
    if (this.rt.program.hasStealable) this.trySteal();
    if (this.tp.rank === 0 && !this.probing) this.startWave();
  }

  private startWave(): void {
    this.probing = true;
    this.wave++;
    this.replies = [];
    this.enc.reset().varint(this.wave);
    for (let r = 0; r < this.tp.size; r++) this.tp.send(r, TAG.PROBE, this.enc.finishCopy());
  }

  private answerProbe(wave: number): void {
    const rt = this.rt;
    const idle = rt.idle();
    this.enc.reset().varint(wave).u8(idle ? 1 : 0).varint(this.sent).varint(this.recv).varint(rt.live);
    this.tp.send(0, TAG.PROBE_REPLY, this.enc.finishCopy());
  }

  private probeReply(from: number, d: Decoder): void {
    const wave = d.varint();
    if (wave !== this.wave) return;
    this.replies[from] = { idle: d.u8() === 1, sent: d.varint(), recv: d.varint(), live: d.varint() };
    if (this.replies.filter(Boolean).length < this.tp.size) return;
    const all = this.replies;
    const quiet = all.every((r) => r.idle);
    const sent = all.reduce((a, r) => a + r.sent, 0), recv = all.reduce((a, r) => a + r.recv, 0);
    const sig = all.map((r) => `${r.sent}/${r.recv}/${r.live}`).join(',');
    if (quiet && sent === recv && sig === this.lastWave) {
      const live = all.reduce((a, r) => a + r.live, 0);
      if (live === 0) { this.broadcastStop(true); return; }
      this.hangReports = [];
      for (let r = 0; r < this.tp.size; r++) this.tp.send(r, TAG.HANG_QUERY, new Uint8Array(0));
      return;
    }
    this.lastWave = quiet && sent === recv ? sig : null;
    // Busy or changing: probe again soon (quickly when the counters just settled).
    const delay = this.lastWave ? 0 : this.probeDelay;
    this.probeDelay = Math.min(20, this.probeDelay * 2);
    setTimeout(() => { this.probing = false; if (this.rt.idle()) this.startWave(); }, delay);
  }

  private answerHang(): void {
    const items = hangItems(this.rt, this.tp.rank);
    const e = this.enc.reset().varint(items.length);
    for (const it of items) e.string(it.text).string(it.origin.file).varint(it.origin.line).varint(it.origin.col);
    this.tp.send(0, TAG.HANG_REPORT, this.enc.finishCopy());
  }

  private hangReport(from: number, d: Decoder): void {
    const n = d.varint();
    const items: HangItem[] = [];
    for (let i = 0; i < n; i++) items.push({ node: from, text: d.string(), origin: { file: d.string(), line: d.varint(), col: d.varint() } });
    this.hangReports[from] = items;
    if (this.hangReports.filter(Boolean).length < this.tp.size) return;
    const message = formatHang(this.hangReports.flat());
    this.broadcastStop(false, { ok: false, kind: 'hang', message });
  }

  private broadcastStop(ok: boolean, result: ClusterResult = { ok }): void {
    for (let r = 1; r < this.tp.size; r++) this.tp.send(r, TAG.STOP, Uint8Array.of(ok ? 1 : 0));
    this.end(result);
  }

  // ------------------------------------------------------------------ faults

  private fault(f: RunFault): void {
    const text = faultText(this.rt, f);
    if (this.tp.rank === 0) this.abortAll(text, 'fault');
    else {
      this.enc.reset().string(text);
      this.tp.send(0, TAG.FAULT, this.enc.finishCopy());
      // Rank 0 answers with ABORT; if it is gone the lost-peer path ends us.
    }
  }

  private abortAll(message: string, kind: 'fault' | 'lost'): void {
    if (this.finished) return;
    for (let r = 0; r < this.tp.size; r++) if (r !== this.tp.rank) this.tp.send(r, TAG.ABORT, new Uint8Array(0));
    this.end({ ok: false, kind, message });
  }

  private lost(rank: number, reason: string): void {
    if (this.finished) return;
    const message = `node ${rank} was lost (${reason}); stopping the run`;
    if (this.tp.rank === 0) this.abortAll(message, 'lost');
    else this.end({ ok: false, kind: 'lost', message: rank === 0 ? message : undefined });
  }

  private end(r: ClusterResult): void {
    if (this.finished) return;
    this.finished = true;
    this.settle(r);
  }

  // ------------------------------------------------------------------ stealing

  private trySteal(): void {
    if (this.stealing || this.tp.size < 2) return;
    this.stealing = true;
    const victim = this.stealVictim;
    this.stealVictim = (victim + 1) % this.tp.size;
    if (this.stealVictim === this.tp.rank) this.stealVictim = (this.stealVictim + 1) % this.tp.size;
    this.tp.send(victim, TAG.STEAL_REQ, new Uint8Array(0));
  }

  private giveWork(thief: number): void {
    const cfs = this.rt.takeStealable(Math.max(1, Math.ceil(this.rt.stealableCount() / 2)), thief);
    if (cfs.length === 0) { this.tp.send(thief, TAG.STEAL_NONE, new Uint8Array(0)); return; }
    for (const cf of cfs) this.migrate(cf, thief);
  }

  private stealRefused(): void {
    this.stealing = false;
    // Back off so that idle nodes do not flood busy ones; the next idle() retries.
    const wait = this.stealBackoff;
    this.stealBackoff = Math.min(50, this.stealBackoff * 2);
    setTimeout(() => { if (!this.finished && this.rt.idle()) this.idle(); }, wait);
  }

}
