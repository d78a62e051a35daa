// Transport benchmark: two processes, round-trip latency of a small message and bandwidth of
// 1 MiB and 64 MiB payloads, through the Transport and through a raw node:net framing baseline
// ([u32 len][u8 kind][data], chunks collected and assembled once) measured in the same run.
// `node dist/bench/transport.js` prints the figures; run() returns them.
import * as net from 'node:net';
import { fileURLToPath } from 'node:url';
import { startNode } from '../src/runtime/launch/cluster.js';
import type { Transport } from '../src/runtime/transport/types.js';
import { rawConnect, rawListen, rawSocketKind, type RawAddress } from './raw-socket.js';

const SELF = fileURLToPath(import.meta.url);
const TAG_PING = 1;
const TAG_BULK = 2;
const TAG_ACK = 3;
const TAG_RAW_ADDRESS = 4;
const TAG_QUIT = 5;
const MiB = 1024 * 1024;

// ------------------------------------------------------------------ raw baseline

type RawHandler = (kind: number, data: Buffer) => void;

/** Minimal framing reader: buffer chunks until a frame is complete, then one concat. */
function rawReader(socket: net.Socket, onFrame: RawHandler): void {
  let chunks: Buffer[] = [];
  let have = 0;
  let need = -1;
  socket.on('data', (c: Buffer) => {
    chunks.push(c);
    have += c.length;
    for (;;) {
      if (need < 0) {
        if (have < 4) return;
        const head = chunks[0]!.length >= 4 ? chunks[0]! : Buffer.concat(chunks);
        need = head.readUInt32LE(0);
      }
      if (have < 4 + need) return;
      const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, have);
      const frame = all.subarray(4, 4 + need);
      const rest = all.subarray(4 + need);
      chunks = rest.length ? [rest] : [];
      have = rest.length;
      need = -1;
      onFrame(frame[0]!, frame.subarray(1));
    }
  });
}

function rawSend(socket: net.Socket, kind: number, data: Uint8Array): void {
  const head = Buffer.allocUnsafe(5);
  head.writeUInt32LE(data.length + 1, 0);
  head[4] = kind;
  if (data.length < 16 * 1024) {
    socket.write(Buffer.concat([head, data]));
  } else {
    socket.cork();
    socket.write(head);
    socket.write(data);
    socket.uncork();
  }
}

// ------------------------------------------------------------------ peer (rank 1)

async function peer(): Promise<void> {
  const { transport: t } = await startNode({});
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    let bulk = 0;
    rawReader(s, (kind, data) => {
      if (kind === TAG_PING) rawSend(s, TAG_PING, data);
      else if (kind === TAG_BULK && data[0] === 1) {
        bulk++;
        rawSend(s, TAG_ACK, Buffer.from([bulk & 255]));
      }
    });
  });
  const addr = await rawListen(server);
  t.onMessage((from, tag, body, payload) => {
    if (tag === TAG_PING) t.send(from, TAG_PING, body);
    else if (tag === TAG_BULK && body[0] === 1) t.send(from, TAG_ACK, new Uint8Array([payload ? 1 : 0]));
    else if (tag === TAG_QUIT) {
      server.close();
      void t.close().then(() => process.exit(0));
    }
  });
  t.send(0, TAG_RAW_ADDRESS, Buffer.from(JSON.stringify(addr)));
}

// ------------------------------------------------------------------ measurements (rank 0)

interface Link {
  /** Round trip of a small message; resolves with the reply. */
  ping(body: Uint8Array): Promise<void>;
  /** Send `count` payloads back to back; resolves when the receiver acknowledges the last. */
  bulk(payload: Uint8Array, count: number): Promise<void>;
}

function transportLink(t: Transport, next: { fn: ((tag: number) => void) | undefined }): Link {
  const waitFor = (tag: number) => new Promise<void>((res) => (next.fn = (got) => got === tag && res()));
  const more = new Uint8Array([0]);
  const last = new Uint8Array([1]);
  return {
    ping(body) {
      const p = waitFor(TAG_PING);
      t.send(1, TAG_PING, body);
      return p;
    },
    bulk(payload, count) {
      const p = waitFor(TAG_ACK);
      for (let i = 0; i < count; i++) t.send(1, TAG_BULK, i === count - 1 ? last : more, payload);
      return p;
    },
  };
}

function rawLink(s: net.Socket): Link {
  let waiting: ((kind: number) => void) | undefined;
  rawReader(s, (kind) => waiting?.(kind));
  const waitFor = (kind: number) => new Promise<void>((res) => (waiting = (k) => k === kind && res()));
  return {
    ping(body) {
      const p = waitFor(TAG_PING);
      rawSend(s, TAG_PING, body);
      return p;
    },
    bulk(payload, count) {
      const p = waitFor(TAG_ACK);
      // The raw baseline sends the marker byte in the frame: [kind][last?][payload].
      for (let i = 0; i < count; i++) {
        const head = Buffer.allocUnsafe(6);
        head.writeUInt32LE(payload.length + 2, 0);
        head[4] = TAG_BULK;
        head[5] = i === count - 1 ? 1 : 0;
        s.cork();
        s.write(head);
        s.write(payload);
        s.uncork();
      }
      return p;
    },
  };
}

async function latencyUs(link: Link, rounds: number): Promise<number> {
  const body = new Uint8Array(16);
  for (let i = 0; i < 200; i++) await link.ping(body); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await link.ping(body);
  return Number(process.hrtime.bigint() - t0) / 1e3 / rounds;
}

/** MiB/s of raw and transport, alternating runs and keeping each side's best of `reps`. */
async function bandwidth(raw: Link, tr: Link, size: number, count: number, reps: number): Promise<[number, number]> {
  const payload = new Uint8Array(size).fill(7);
  const best = [0, 0];
  for (const link of [raw, tr]) await link.bulk(payload, 1); // warm-up
  for (let r = 0; r < reps; r++) {
    for (const [i, link] of [raw, tr].entries()) {
      const t0 = process.hrtime.bigint();
      await link.bulk(payload, count);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      best[i] = Math.max(best[i]!, (size * count) / MiB / s);
    }
  }
  return [best[0]!, best[1]!];
}

export async function run(): Promise<Record<string, number>> {
  const { transport: t, children } = await startNode({ nodes: 2, argv: [SELF, '--peer'] });
  const next: { fn: ((tag: number) => void) | undefined } = { fn: undefined };
  const rawAddr = await new Promise<RawAddress>((res) =>
    t.onMessage((_from, tag, body) => {
      if (tag === TAG_RAW_ADDRESS) res(JSON.parse(Buffer.from(body).toString()) as RawAddress);
      else next.fn?.(tag);
    }),
  );
  const sock = rawConnect(rawAddr);
  await new Promise((r) => sock.once('connect', r));
  const tl = transportLink(t, next);
  const rl = rawLink(sock);
  const out: Record<string, number> = {};
  // Interleave raw and transport so both see the same machine state.
  // Latency: alternate short rounds and keep each side's best, so load from other processes
  // on this 2-core machine does not land on one side only.
  out.raw_rtt_us = Infinity;
  out.transport_rtt_us = Infinity;
  for (let round = 0; round < 5; round++) {
    out.raw_rtt_us = Math.min(out.raw_rtt_us, await latencyUs(rl, 1000));
    out.transport_rtt_us = Math.min(out.transport_rtt_us, await latencyUs(tl, 1000));
  }
  [out.raw_1mib_mibps, out.transport_1mib_mibps] = await bandwidth(rl, tl, MiB, 64, 5);
  [out.raw_64mib_mibps, out.transport_64mib_mibps] = await bandwidth(rl, tl, 64 * MiB, 4, 3);
  out.rtt_ratio = out.transport_rtt_us / out.raw_rtt_us;
  out.bw_1mib_ratio = out.transport_1mib_mibps / out.raw_1mib_mibps;
  out.bw_64mib_ratio = out.transport_64mib_mibps / out.raw_64mib_mibps;
  sock.destroy();
  t.send(1, TAG_QUIT, new Uint8Array(0));
  await children!.exited();
  await t.close();
  return out;
}

if (process.argv[1] === SELF) {
  if (process.argv.includes('--peer')) {
    peer().catch((e: Error) => {
      console.error(`bench peer: ${e.message}`);
      process.exit(2);
    });
  } else {
    const r = await run();
    const f = (x: number) => x.toFixed(2);
    console.log(`small-message round trip: transport ${f(r.transport_rtt_us!)} µs, raw ${f(r.raw_rtt_us!)} µs, ratio ${f(r.rtt_ratio!)} (target ≤ 2)`);
    console.log(`1 MiB payloads: transport ${f(r.transport_1mib_mibps!)} MiB/s, raw ${f(r.raw_1mib_mibps!)} MiB/s, ratio ${f(r.bw_1mib_ratio!)} (target ≥ 0.7)`);
    console.log(`64 MiB payloads: transport ${f(r.transport_64mib_mibps!)} MiB/s, raw ${f(r.raw_64mib_mibps!)} MiB/s, ratio ${f(r.bw_64mib_ratio!)} (target ≥ 0.7)`);
    console.log(JSON.stringify(r));
  }
}
