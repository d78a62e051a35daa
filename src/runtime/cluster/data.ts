// The runtime's data channel: CF migration and the DF protocol between nodes (request, post,
// response, destroy, push; reads of a kept copy and its drop). Every message of this channel
// carries work or data, so all are counted for termination detection. Its clock and trace sink
// come from its host.
import { Decoder, Encoder } from '../transport/codec.js';
import { TAG_BITS, type Channel, type Router } from '../transport/router.js';
import { rawHeld, rawLet, receivedBytes, sharedBytes } from '../exec/shm.js';
import { valueSize, type DfValue } from '../../ucode/value.js';
import { pinRaw } from '../../ucode/recycle.js';
import type { DfKey } from '../../core/dfkey.js';
import type { Cf } from '../node/fragment.js';
import type { Served } from '../node/store.js';
import type { NodeRuntime, RemoteOps, Spread } from '../node/runtime.js';
import { CHANNEL } from './channels.js';
import type { ChannelHost } from './layer.js';
import { decodeEnv, decodeValue, encodeEnv, encodeValue } from './wire.js';

const MIGRATE = 1, REQUEST = 2, POST = 3, RESPONSE = 4, DESTROY = 5, PUSH = 6, REFUSE = 7, SPREAD = 8, READS = 9, DROP = 10;
/** RESPONSE flag: the receiver may keep a copy for its later readers */
const KEEP = 1;

/**
 * The transport's allocPayload for a node's runtime (`wire`: the message's tag on the wire, its
 * channel in the high bits): a DF value posted to this node or served to it goes into a
 * recyclable buffer (exec/shm.ts receivedBytes), its holders counted from its arrival (node/state.ts);
 * every other payload into fresh shared memory.
 */
export function receivedPayload(n: number, wire: number): Uint8Array {
  const tag = wire & ((1 << TAG_BITS) - 1);
  return wire >>> TAG_BITS === CHANNEL.data && (tag === POST || tag === RESPONSE) ? receivedBytes(n) : sharedBytes(n);
}

export class DataChannel implements RemoteOps {
  private readonly ch: Channel;
  private readonly enc = new Encoder(1024);
  private rt!: NodeRuntime;
  /** a CF arrived (stealing uses it to know its request was answered) */
  onCfArrived: () => void = () => {};

  constructor(private readonly router: Router, private readonly host: ChannelHost) {
    this.ch = router.channel(CHANNEL.data, 'runtime data', (from, tag, body, payload) => this.receive(from, tag, body, payload), { counted: () => true });
  }

  /** The runtime whose messages this channel carries (built after it: the runtime sends through it). */
  attach(rt: NodeRuntime): void {
    this.rt = rt;
  }

  // ------------------------------------------------------------------ sending (RemoteOps)

  migrate(cf: Cf, to: number): void {
    const e = this.enc.reset();
    e.varint(cf.site.id).string(cf.gid).varint(cf.id).svarint(cf.counter).svarint(cf.counterEnd).u8(cf.begun ? 1 : 0).f64(cf.priority);
    encodeEnv(e, cf.env);
    const got = cf.got ?? [];
    e.varint(got.length / 2);
    for (let i = 0; i < got.length; i += 2) { e.string(got[i] as string); encodeValue(e, got[i + 1] as DfValue, true); }
    this.ch.send(to, MIGRATE, e.finish());
  }

  spread(cf: Cf, to: number, s: Spread): void {
    const e = this.enc.reset();
    e.varint(cf.site.id).string(cf.gid).varint(cf.id).svarint(cf.counter).svarint(cf.counterEnd).f64(cf.priority);
    e.varint(s.origin);
    encodeEnv(e, cf.env);
    this.ch.send(to, SPREAD, e.finish());
  }

  request(key: DfKey, owner: number): void {
    this.ch.send(owner, REQUEST, this.enc.reset().string(key).finish());
  }

  reads(key: DfKey, owner: number, n: number): void {
    this.ch.send(owner, READS, this.enc.reset().string(key).varint(n).finish());
  }

  drop(key: DfKey, to: number): void {
    this.ch.send(to, DROP, this.enc.reset().string(key).finish());
  }

  post(key: DfKey, owner: number, v: DfValue, count: number, by: Cf): void {
    // the writer travels along: the owner names it if it finds the DF assigned already
    const e = this.enc.reset().string(key).svarint(count).svarint(by.site.id).string(by.gid);
    this.sendValue(key, owner, POST, v, encodeValue(e, v));
  }

  respond(key: DfKey, to: number, served: Served): void {
    const e = this.enc.reset().string(key).u8(served.keep ? KEEP : 0).varint(served.granted).svarint(served.left);
    this.sendValue(key, to, RESPONSE, served.v, encodeValue(e, served.v));
  }

  refuse(key: DfKey, to: number, message: string): void {
    this.ch.send(to, REFUSE, this.enc.reset().string(key).string(message).finish());
  }

  destroy(key: DfKey, owner: number): void {
    this.ch.send(owner, DESTROY, this.enc.reset().string(key).finish());
  }

  push(pushKey: string, owner: number, v: DfValue): void {
    const e = this.enc.reset().string(pushKey);
    const payload = encodeValue(e, v);
    // (a pushed value is pinned where it arrives: here too, whatever the transport does)
    if (!this.ch.send(owner, PUSH, e.finish(), payload)) pinRaw(payload!);
  }

  flush(): void {
    this.router.flush();
  }

  /**
   * A value's bytes the transport copied (a same-machine ring, an in-process peer) may go back to a
   * pool once nothing on this node reads them (the node counts its holders across the send); ones
   * it keeps as they are (a socket's write pending) are held by the send until the transport
   * releases them (its write done), and pinned, never recycled, if it never will or the node does
   * not count the value.
   */
  private sendValue(key: DfKey, to: number, tag: number, v: DfValue, payload: Uint8Array | undefined): void {
    const tr = this.host.trace;
    let copied: boolean;
    if (!tr) copied = this.ch.send(to, tag, this.enc.finish(), payload, rawLet);
    else {
      const df = tr.dfName(key);
      tr.dfSendStart(this.host.now(), df, to, valueSize(v));
      copied = this.ch.send(to, tag, this.enc.finish(), payload, rawLet);
      tr.dfSendEnd(this.host.now(), df, to);
    }
    // (the transport releases it later, never within send: the hold is counted first)
    if (!copied && (to === this.router.rank || !rawHeld(payload!))) pinRaw(payload!);
  }

  // ------------------------------------------------------------------ receiving

  private received(key: DfKey, from: number, v: DfValue): void {
    const tr = this.host.trace;
    if (tr) tr.dfReceive(this.host.now(), tr.dfName(key), from, valueSize(v));
  }

  private receive(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): void {
    const d = new Decoder(body);
    const rt = this.rt;
    try {
      switch (tag) {
        case MIGRATE: {
          const siteId = d.varint();
          const site = rt.program.sites[siteId];
          if (!site) throw new Error(`node ${from} sent a CF of unknown spawn site ${siteId} (different programs?)`);
          const gid = d.string();
          const remoteId = d.varint();
          const counter = d.svarint(), counterEnd = d.svarint(), begun = d.u8() === 1, priority = d.f64();
          const cf = rt.adoptCf(site, decodeEnv(d), gid);
          cf.counter = counter;
          cf.counterEnd = counterEnd;
          cf.begun = begun;
          cf.priority = priority;
          const n = d.varint();
          for (let i = 0; i < n; i++) { const k = d.string(); cf.addGot(k, decodeValue(d, undefined, true)); }
          this.onCfArrived();
          rt.receiveCf(cf, from, remoteId);
          break;
        }
        case SPREAD: {
          const siteId = d.varint();
          const site = rt.program.sites[siteId];
          if (!site || site.kind !== 'for') throw new Error(`node ${from} sent a loop of spawn site ${siteId}, which is not a loop here (different programs?)`);
          const gid = d.string();
          const remoteId = d.varint();
          const counter = d.svarint(), counterEnd = d.svarint(), priority = d.f64();
          const spread: Spread = { origin: d.varint() };
          const cf = rt.adoptCf(site, decodeEnv(d), gid);
          cf.counter = counter;
          cf.counterEnd = counterEnd;
          cf.priority = priority;
          rt.receiveSpread(cf, from, remoteId, spread);
          break;
        }
        case REQUEST: rt.remoteRequest(d.string(), from); break;
        case POST: {
          const key = d.string(), count = d.svarint(), site = d.svarint(), gid = d.string();
          const v = decodeValue(d, payload);
          this.received(key, from, v);
          rt.remotePost(key, v, count, site, gid, from);
          break;
        }
        case RESPONSE: {
          const key = d.string(), keep = (d.u8() & KEEP) !== 0, granted = d.varint(), left = d.svarint();
          const v = decodeValue(d, payload);
          this.received(key, from, v);
          rt.response(key, { v, granted, left, keep });
          break;
        }
        case READS: { const key = d.string(); rt.remoteReads(key, from, d.varint()); break; }
        case DROP: rt.dropCopy(d.string()); break;
        case DESTROY: rt.remoteDestroy(d.string()); break;
        case PUSH: { const key = d.string(); rt.remotePush(key, decodeValue(d, payload)); break; }
        case REFUSE: { const key = d.string(); rt.refused(key, d.string()); break; }
        default: throw new Error(`unknown runtime data message ${tag} from node ${from}`);
      }
    } catch (e) { rt.fail(e); }
  }
}
