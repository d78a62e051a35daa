// N endpoints of one mesh in one process, behind the Transport interface of the TCP mesh: the
// transport of a one-node run (a mesh of one), and of many node runtimes in one process for
// tests (test/runtime/harness.ts), where the cluster protocols then run in milliseconds.
// A message is delivered on a later turn of the event loop, never inside send(), in send order
// per sender; bodies and payloads are copied as a socket would (encoders reuse their buffers).
// lose() simulates a node lost to the others (killed, a dropped link); hold() a slow link, whose
// messages stay in flight (sent, not received) until release().
import type { Transport } from './types.js';

type Handler = (from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void;

export class MemoryMesh {
  readonly endpoints: MemoryTransport[];
  /**
   * Where a payload sent to another node is copied, by its message's tag, as a TCP mesh's
   * allocPayload (a received DF value in a recycled buffer); unset, a plain copy.
   */
  allocPayload: ((byteLength: number, tag: number) => Uint8Array) | undefined;
  /**
   * Payloads go as a socket takes them: kept as they are when sent (send says it holds them) and
   * copied only when delivered, on a later turn; unset, copied in send, as a same-machine ring does.
   */
  copyLate = false;

  constructor(readonly size: number) {
    if (!(Number.isInteger(size) && size >= 1)) throw new RangeError(`bad mesh size ${size}`);
    this.endpoints = Array.from({ length: size }, (_, r) => new MemoryTransport(this, r));
  }

  /**
   * Node `rank` is lost: every other endpoint reports it through onPeerLost (on a later turn, as
   * a socket's error arrives), and it reports every other; messages to or from it are dropped.
   */
  lose(rank: number, reason = 'connection reset'): void {
    const gone = this.endpoint(rank, 'lose');
    for (const e of this.endpoints) {
      if (e === gone) continue;
      e.peerLost(rank, reason);
      gone.peerLost(e.rank, reason);
    }
  }

  /** Messages from node `from` to node `to` stay in flight until release(from, to); other links flow. */
  hold(from: number, to: number): void {
    this.endpoint(from, 'hold');
    this.endpoint(to, 'hold').hold(from);
  }

  release(from: number, to: number): void {
    this.endpoint(to, 'release').release(from);
  }

  private endpoint(rank: number, op: string): MemoryTransport {
    const e = this.endpoints[rank];
    if (!e) throw new RangeError(`${op}: no rank ${rank} (size ${this.size})`);
    return e;
  }
}

export class MemoryTransport implements Transport {
  readonly size: number;
  private handler: Handler | undefined;
  private arrived: (() => void) | undefined;
  private lostHandler: ((rank: number, reason: string) => void) | undefined;
  /** `released`: a payload copied late goes back to its sender once copied (Transport.send) */
  private inbox: [from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined, late: boolean, released: ((payload: Uint8Array) => void) | undefined][] = [];
  private queued = false;
  private closed = false;
  /** senders whose messages wait in the inbox (MemoryMesh.hold) */
  private readonly held = new Set<number>();
  /** peers this endpoint lost (it neither sends to nor hears from them) */
  private readonly cut = new Set<number>();

  constructor(private readonly mesh: MemoryMesh, readonly rank: number) {
    this.size = mesh.size;
  }

  send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array, released?: (payload: Uint8Array) => void): boolean {
    const dest = this.mesh.endpoints[to];
    if (!dest) throw new RangeError(`send: no rank ${to} (size ${this.size})`);
    if (this.closed || this.cut.has(to) || dest.closed) return true;
    // a message to oneself keeps its payload, as over TCP; another node gets its own bytes
    const own = to === this.rank || payload === undefined;
    const late = !own && this.mesh.copyLate;
    dest.deliver(this.rank, tag, body.slice(), own || late ? payload : this.copy(tag, payload), late, late ? released : undefined);
    return own ? payload === undefined : !late;
  }

  /** (a payload copied late is copied by the receiver, from the sender's bytes as they are then) */
  copy(tag: number, payload: Uint8Array): Uint8Array {
    const alloc = this.mesh.allocPayload;
    if (alloc === undefined) return payload.slice();
    const p = alloc(payload.length, tag);
    p.set(payload);
    return p;
  }

  private deliver(from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined, late: boolean, released: ((payload: Uint8Array) => void) | undefined): void {
    this.inbox.push([from, tag, body, payload, late, released]);
    this.deliverLater();
  }

  private deliverLater(): void {
    if (this.queued) return;
    this.queued = true;
    setImmediate(this.drain);
  }

  /** (MemoryMesh.hold, release) */
  hold(from: number): void {
    this.held.add(from);
  }

  release(from: number): void {
    this.held.delete(from);
    if (this.inbox.length > 0) this.deliverLater();
  }

  private readonly drain = (): void => {
    this.queued = false;
    let batch = this.inbox;
    this.inbox = [];
    if (this.held.size > 0) {
      // a held link's messages stay, in their order
      this.inbox = batch.filter((m) => this.held.has(m[0]));
      batch = batch.filter((m) => !this.held.has(m[0]));
    }
    if (batch.length === 0) return;
    for (const [from, tag, body, payload, late, released] of batch) {
      const gone = this.closed || this.cut.has(from);
      const p = late && !gone ? this.mesh.endpoints[from]!.copy(tag, payload!) : payload;
      // (the sender's bytes are read no more: copied, or the message dropped)
      if (released !== undefined) released(payload!);
      if (!gone) this.handler?.(from, tag, body, p);
    }
    if (!this.closed) this.arrived?.();
  };

  /** (MemoryMesh.lose) */
  peerLost(rank: number, reason: string): void {
    if (this.closed || this.cut.has(rank)) return;
    this.cut.add(rank);
    setImmediate(() => { if (!this.closed) this.lostHandler?.(rank, reason); });
  }

  onMessage(handler: Handler): void {
    this.handler = handler;
  }

  onArrived(handler: () => void): void {
    this.arrived = handler;
  }

  onPeerLost(handler: (rank: number, reason: string) => void): void {
    this.lostHandler = handler;
  }

  /** A graceful close (as TCP's Bye): peers do not count it as a loss; what is sent to it is dropped. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
