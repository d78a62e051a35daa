// Liveness of the mesh's links. TCP reports a peer that closes or resets its connections, but not
// one that is frozen (SIGSTOP, swapped out, a hung host) or cut off without a reset: its
// connections stay open and silent. So each rank sends a small control frame on every link that
// has been quiet for an eighth of the timeout, and a peer from which nothing at all (data or
// heartbeat) arrived for the timeout is declared lost. A peer that keeps taking the bytes we
// send it (a large payload draining) is alive too, even when its heartbeats wait behind that
// payload or its main thread is too busy receiving to beat. See docs/cluster.md, "Liveness".

export const DEFAULT_HEARTBEAT_MS = 5000;
export const MIN_HEARTBEAT_MS = 100;
const MAX_HEARTBEAT_MS = 0xffffffff; // carried as a u32 in heartbeat frames
/** A link quiet for timeout / BEAT_FRACTION gets a heartbeat. */
const BEAT_FRACTION = 8;
/** The timer runs every timeout / TICK_FRACTION. */
const TICK_FRACTION = 16;

/** Validate a heartbeat timeout (ms, 0 = off); `what` names it in the message. */
export function checkHeartbeatMs(ms: number, what = 'heartbeatMs'): number {
  if (ms === 0) return 0;
  if (!Number.isInteger(ms) || ms < MIN_HEARTBEAT_MS || ms > MAX_HEARTBEAT_MS) {
    throw new RangeError(`${what}=${ms}: expected a timeout in milliseconds of at least ${MIN_HEARTBEAT_MS}, or 0 to turn the heartbeat off`);
  }
  return ms;
}

/** LUNA_HEARTBEAT_MS, validated; undefined when unset. */
export function heartbeatMsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.LUNA_HEARTBEAT_MS;
  if (v === undefined || v.trim() === '') return undefined;
  if (!/^\s*\d+\s*$/.test(v)) {
    throw new RangeError(`LUNA_HEARTBEAT_MS=${v}: expected a timeout in milliseconds of at least ${MIN_HEARTBEAT_MS}, or 0 to turn the heartbeat off`);
  }
  return checkHeartbeatMs(Number(v), 'LUNA_HEARTBEAT_MS');
}

/**
 * Per-link counters. The transport only increments `rx` (a chunk arrived) and `tx` (a write
 * left), so the hot paths never read the clock; the heartbeat's timer turns changes of the
 * counters into times.
 */
export class LinkClock {
  rx = 0;
  tx = 0;
  /** The peer's own timeout, from its heartbeats (0: it does not watch us). */
  peerTimeoutMs = 0;
  rxSeen = 0;
  txSeen = 0;
  /** bytes waiting to be written to the peer at the last tick */
  queuedSeen = 0;
  lastRx = 0;
  lastTx = 0;
}

export interface HeartbeatHost {
  /** Links to watch: established, not lost, not closing gracefully. */
  liveLinks(): { rank: number; clock: LinkClock }[];
  /** Send a heartbeat frame carrying our timeout to `rank`. */
  sendBeat(rank: number, timeoutMs: number): void;
  /** Report `rank` lost (once) and drop its link. */
  lost(rank: number, reason: string): void;
  /** Bytes written to `rank`'s link and not yet taken by the kernel (they leave as the peer reads). */
  queued(rank: number): number;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private tickMs = 0;
  private started = false;
  private stopped = false;
  private verdictQueued = false;

  /** `timeoutMs`: how long a silent peer is tolerated (0: we never declare one lost). */
  constructor(
    readonly timeoutMs: number,
    private readonly host: HeartbeatHost,
  ) {}

  /** The mesh is formed: announce our timeout to every peer and start the timer. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    const now = performance.now();
    for (const { rank, clock } of this.host.liveLinks()) {
      clock.rxSeen = clock.rx;
      clock.lastRx = now;
      if (this.timeoutMs > 0) this.host.sendBeat(rank, this.timeoutMs);
      clock.txSeen = clock.tx;
      clock.lastTx = now;
    }
    this.schedule();
  }

  /** A peer's heartbeat said how long it waits for us: we must beat often enough for it too. */
  peerTimeout(clock: LinkClock, ms: number): void {
    if (ms === clock.peerTimeoutMs) return;
    clock.peerTimeoutMs = ms;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Tick at a sixteenth of the shortest timeout anyone applies to our links; no timer if none. */
  private schedule(): void {
    if (!this.started || this.stopped) return;
    let shortest = this.timeoutMs || Infinity;
    for (const { clock } of this.host.liveLinks()) if (clock.peerTimeoutMs) shortest = Math.min(shortest, clock.peerTimeoutMs);
    const tick = shortest === Infinity ? 0 : Math.max(10, Math.floor(shortest / TICK_FRACTION));
    if (tick === this.tickMs) return;
    clearInterval(this.timer);
    this.tickMs = tick;
    this.timer = undefined;
    if (tick === 0) return;
    this.timer = setInterval(this.tick, tick);
    this.timer.unref(); // the transport's sockets decide whether the process stays alive
  }

  private readonly tick = (): void => {
    const now = performance.now();
    let suspect = false;
    for (const { rank, clock: c } of this.host.liveLinks()) {
      if (c.tx !== c.txSeen) {
        c.txSeen = c.tx;
        c.lastTx = now;
      }
      const expected = Math.min(this.timeoutMs || Infinity, c.peerTimeoutMs || Infinity);
      if (now - c.lastTx >= expected / BEAT_FRACTION) {
        this.host.sendBeat(rank, this.timeoutMs);
        c.txSeen = c.tx;
        c.lastTx = now;
      }
      if (this.heard(rank, c)) c.lastRx = now;
      else if (this.timeoutMs > 0 && now - c.lastRx > this.timeoutMs) suspect = true;
    }
    if (suspect && !this.verdictQueued) {
      // Timers run before the event loop reads the sockets: after this thread was busy for a
      // while, the peer's frames may be waiting unread. Judge after one round of I/O.
      this.verdictQueued = true;
      setImmediate(this.verdict);
    }
  };

  /** Whether the peer showed life since the last look: it sent something, or took some of what we send it. */
  private heard(rank: number, c: LinkClock): boolean {
    const q = this.host.queued(rank);
    const drained = q < c.queuedSeen;
    c.queuedSeen = q;
    if (c.rx === c.rxSeen && !drained) return false;
    c.rxSeen = c.rx;
    return true;
  }

  private readonly verdict = (): void => {
    this.verdictQueued = false;
    if (this.stopped) return;
    const now = performance.now();
    for (const { rank, clock: c } of this.host.liveLinks()) {
      if (this.heard(rank, c)) {
        c.lastRx = now;
        continue;
      }
      const silent = now - c.lastRx;
      if (silent > this.timeoutMs) {
        this.host.lost(rank, `rank ${rank} sent nothing for ${seconds(silent)} (frozen or unreachable; heartbeat timeout ${seconds(this.timeoutMs)})`);
      }
    }
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
