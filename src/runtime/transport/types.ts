// The transport every cross-node interaction uses (runtime messages, and later DDA/PGAS layers).
// A message is a small binary `body` (encoded with codec.ts) plus an optional raw `payload`
// (typed-array DF bytes) that is sent as-is, never JSON-encoded or structured-cloned.

import type { LocalAddress } from './local.js';

export interface Transport {
  readonly rank: number;
  readonly size: number;
  /**
   * Queue a message to `to` (may be this rank: delivered asynchronously, never re-entrantly).
   * Small messages to one peer are coalesced and written once per event-loop tick. The body is
   * always copied. True: the payload's bytes were copied too (a same-machine ring, an in-process
   * peer) or the message was dropped (its peer is lost), so the caller may reuse them at once;
   * false: the transport holds the payload as it is (a socket write pending, a message to this
   * rank) and its bytes must not change. `released`, when it returns false for a message to
   * another rank: called with the payload once the transport reads it no more (its write done or
   * failed), never within send; a message to this rank hands the payload itself to its receiver,
   * never released.
   */
  send(to: number, tag: number, body: Uint8Array, payload?: Uint8Array, released?: (payload: Uint8Array) => void): boolean;
  /**
   * Exactly one handler; messages from one peer arrive in send order. A payload from another rank
   * is the handler's own (the transport keeps no reference to it: it may be kept as it is); one
   * from this rank is the sender's bytes.
   */
  onMessage(handler: (from: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void): void;
  /**
   * Called after the messages that arrived together (one read from the network) were all
   * handed to onMessage: a consumer can act on them at once instead of on a later turn.
   */
  onArrived?(handler: () => void): void;
  /**
   * Write what is queued now rather than at the end of the tick: the caller is about to keep
   * this thread busy (a long computation), and a peer may be waiting for those messages.
   */
  flush?(): void;
  /** Called once per peer whose connection is lost (closed, reset, killed) before close(). */
  onPeerLost(handler: (rank: number, reason: string) => void): void;
  /** Flush pending writes and close all connections. */
  close(): Promise<void>;
  /**
   * The link to `to` for threads that write whole frames to its socket themselves (absent: the
   * transport has no such links, or that one is not up): see DirectLink.
   */
  directLink?(to: number): DirectLink | undefined;
}

/**
 * A link's socket as another thread of this process may write it: the socket's file descriptor
 * and two shared words, [0] a write lock (0 free; the transport takes it around its own writes
 * too) and [1] set while the transport still holds bytes for the socket (then frames written
 * directly would cut into them: the thread sends through the transport instead). A frame written
 * directly is whole (transport/frame.ts encodeFrame) and counts for nothing the transport counts.
 */
export interface DirectLink {
  fd: number;
  words: SharedArrayBuffer;
}

// --- Added with the TCP transport (additive; Transport above is unchanged) ---

/** Where a rank listens for mesh connections. */
export interface PeerAddress {
  host: string;
  port: number;
  /** its Unix socket, for ranks on the same machine */
  local?: LocalAddress;
}

/**
 * How ranks find rank 0, which then acts as the directory of everyone's listen address
 * (see docs/cluster.md). Rank 0 calls publish() once it listens; other ranks call lookup().
 */
export interface Rendezvous {
  /** Rank 0: make its address (and the run's secret, if this rendezvous carries it) findable. */
  publish(addr: PeerAddress, secret: string): Promise<void>;
  /** Ranks > 0: rank 0's address, plus the secret when the rendezvous carries it (file mode). */
  lookup(): Promise<PeerAddress & { secret?: string }>;
  /** Rank 0, once the mesh is complete: remove what publish() left behind. */
  cleanup?(): Promise<void>;
}
