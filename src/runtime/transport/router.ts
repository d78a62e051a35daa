// Channels over one transport: every layer that talks across nodes (the runtime's DF and CF
// messages, its control messages, and later the dynamic array and the PGAS layer) registers
// its own channel and handler. A channel says which of its messages carry work or data; the
// router counts those in both directions, over all channels, for termination detection.
import type { Transport } from './types.js';

export type MessageHandler = (from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void;

export interface Channel {
  readonly id: number;
  readonly name: string;
  /** Queue a message to node `to` (may be this node); whether the payload was copied, and `released` (Transport.send). */
  send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array, released?: (payload: Uint8Array) => void): boolean;
}

export interface ChannelOptions {
  /** messages that carry work or data (counted for termination detection) */
  counted?: (tag: number) => boolean;
}

export const TAG_BITS = 16;
const MAX_TAG = (1 << TAG_BITS) - 1;

export class Router {
  private readonly handlers = new Map<number, { name: string; handle: MessageHandler; counted: (tag: number) => boolean }>();
  /** counted messages sent and received by this node, all channels together */
  sent = 0;
  received = 0;
  /** messages for a channel nobody registered (a node running other layers): kept for the error */
  onUnknown: (from: number, channel: number, tag: number) => void = (from, ch, tag) => {
    throw new Error(`message for unknown channel ${ch} (tag ${tag}) from node ${from}`);
  };

  constructor(readonly transport: Transport) {
    transport.onMessage((from, wire, body, payload) => {
      const ch = wire >>> TAG_BITS, tag = wire & MAX_TAG;
      const h = this.handlers.get(ch);
      if (!h) { this.onUnknown(from, ch, tag); return; }
      if (h.counted(tag)) this.received++;
      h.handle(from, tag, body, payload);
    });
  }

  /** After each group of messages that arrived together (see Transport.onArrived). */
  onArrived(handler: () => void): void {
    this.transport.onArrived?.(handler);
  }

  /** Write what every channel queued now (see Transport.flush). */
  flush(): void {
    this.transport.flush?.();
  }

  get rank(): number { return this.transport.rank; }
  get size(): number { return this.transport.size; }

  channel(id: number, name: string, handle: MessageHandler, o: ChannelOptions = {}): Channel {
    if (!(Number.isInteger(id) && id > 0 && id < 1 << (32 - TAG_BITS))) throw new RangeError(`bad channel id ${id}`);
    const dup = this.handlers.get(id);
    if (dup) throw new Error(`channel ${id} is taken by ${dup.name}`);
    const counted = o.counted ?? (() => false);
    this.handlers.set(id, { name, handle, counted });
    const tp = this.transport;
    const base = id << TAG_BITS;
    return {
      id, name,
      send: (to, tag, body, payload, released) => {
        if (tag < 0 || tag > MAX_TAG) throw new RangeError(`bad tag ${tag} on channel ${name}`);
        if (counted(tag)) this.sent++;
        return tp.send(to, (base | tag) >>> 0, body, payload, released);
      },
    };
  }
}
