// The transport every cross-node interaction uses (runtime messages, and later DDA/PGAS layers).
// A message is a small binary `body` (encoded with codec.ts) plus an optional raw `payload`
// (typed-array DF bytes) that is sent as-is, never JSON-encoded or structured-cloned.

export interface Transport {
  readonly rank: number;
  readonly size: number;
  /**
   * Queue a message to `to` (may be this rank: delivered asynchronously, never re-entrantly).
   * Small messages to one peer are coalesced and written once per event-loop tick.
   */
  send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array): void;
  /** Exactly one handler; messages from one peer arrive in send order. */
  onMessage(handler: (from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void): void;
  /** Called once per peer whose connection is lost (closed, reset, killed) before close(). */
  onPeerLost(handler: (rank: number, reason: string) => void): void;
  /** Flush pending writes and close all connections. */
  close(): Promise<void>;
}
