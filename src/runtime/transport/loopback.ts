// The transport of a one-node run: no sockets, messages to itself delivered on the next turn of
// the event loop. One node is a cluster of one: it runs the same protocol as many.
import type { Transport } from './types.js';

export class LoopbackTransport implements Transport {
  readonly rank = 0;
  readonly size = 1;
  private handler: ((from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void) | undefined;
  private queue: [number, Uint8Array, Uint8Array | undefined][] = [];
  private queued = false;
  private closed = false;

  send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array): void {
    if (to !== 0) throw new RangeError(`send: no rank ${to} (size 1)`);
    if (this.closed) return;
    this.queue.push([tag, body.slice(), payload]);
    if (!this.queued) {
      this.queued = true;
      setImmediate(this.drain);
    }
  }

  private drain = (): void => {
    this.queued = false;
    const batch = this.queue;
    this.queue = [];
    for (const [tag, body, payload] of batch) if (!this.closed) this.handler?.(0, tag, body, payload);
  };

  onMessage(handler: (from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void): void {
    this.handler = handler;
  }

  onPeerLost(): void {}

  async close(): Promise<void> {
    this.closed = true;
  }
}
