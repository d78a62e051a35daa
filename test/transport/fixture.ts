// Shared logic of the transport tests, run both in the test process (as rank 0) and in the
// spawned peers (peer.ts).
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import type { Transport } from '../../src/runtime/transport/types.js';

export const TAG_MESH = 1;
export const TAG_REPORT = 900;
export const TAG_LOST = 901;
/** Echo peers block their main thread for the u32 milliseconds in the body, then echo. */
export const TAG_BUSY = 902;
/** Echo peers answer with the time (Date.now(), f64) at which the message reached them. */
export const TAG_STAMP = 903;
export const TAG_QUIT = 999;

export interface MeshReport {
  rank: number;
  received: number[]; // per sender
  errors: string[];
  /** this rank's links over a Unix socket (a TCP transport's stats) */
  localLinks?: number;
}

function payloadFor(from: number, seq: number): Uint8Array | undefined {
  if (seq % 7 !== 0) return undefined;
  return new Uint8Array((seq % 100) + 1).fill((from * 31 + seq) & 255);
}

/**
 * Every rank sends `count` numbered messages to every rank (itself included) and checks that
 * each sender's messages arrive complete and in order. Resolves with this rank's report.
 * Messages other than TAG_MESH go to `other`.
 */
export function runMesh(t: Transport, count: number, other: (from: number, tag: number, body: Uint8Array) => void): Promise<MeshReport> {
  const received = new Array<number>(t.size).fill(0);
  const errors: string[] = [];
  return new Promise((resolve) => {
    const check = () => {
      if (received.every((n) => n === count)) resolve({ rank: t.rank, received, errors, localLinks: (t as { stats?: () => { localLinks: number } }).stats?.().localLinks });
    };
    t.onMessage((from, tag, body, payload) => {
      if (tag !== TAG_MESH) return other(from, tag, body);
      const d = new Decoder(body);
      const src = d.u32();
      const seq = d.u32();
      if (src !== from) errors.push(`message from ${from} claims sender ${src}`);
      if (seq !== received[from]) errors.push(`from ${from}: got seq ${seq}, expected ${received[from]}`);
      const want = payloadFor(from, seq);
      if ((want === undefined) !== (payload === undefined) || (want && !Buffer.from(want).equals(payload!))) {
        errors.push(`from ${from} seq ${seq}: wrong payload`);
      }
      received[from]!++;
      check();
    });
    const enc = new Encoder();
    // Interleave destinations so coalescing and ordering are exercised across peers.
    for (let seq = 0; seq < count; seq++) {
      for (let to = 0; to < t.size; to++) t.send(to, TAG_MESH, enc.reset().u32(t.rank).u32(seq).finish(), payloadFor(t.rank, seq));
    }
    check();
  });
}

/** Keep this thread busy (as a long computation would) for `ms` milliseconds. */
export function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

/** What a spawned node's children could see of the run's secret (peer.ts `secret` mode). */
export interface SecretProbe {
  /** LUNA_SECRET still in process.env when the node's code starts. */
  inProcessEnv: boolean;
  /** Child processes running when the ucode bundle was built (the esbuild service among them). */
  children: { comm: string; hasSecret: boolean; hasMarker: boolean }[];
  childProcessHasSecret: boolean;
  workerHasSecret: boolean;
}
