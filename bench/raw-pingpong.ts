// The floor of a pingpong step on this machine: two fresh Node processes pass one small message
// back and forth over node:net — a Unix socket, as luna's links within a machine (raw-socket.ts) —
// each replying as soon as it arrives ([u32 length]
// framing, no runtime). One crossing = one step of bench/programs/pingpong. The figure is the
// median over blocks of crossings, not the best round trip: on a virtual machine a crossing that
// wakes a sleeping process costs several times the best case, and a runtime's step always does.
//   node dist/bench/raw-pingpong.js [crossings] [bytes]      prints µs per crossing
import { fork } from 'node:child_process';
import * as net from 'node:net';
import { fileURLToPath } from 'node:url';
import { usPerCrossing } from './median.js';
import { rawConnect, rawListen, type RawAddress } from './raw-socket.js';

const SELF = fileURLToPath(import.meta.url);

/** Echo every framed message back on the same socket (the peer process). */
function serve(): void {
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('data', (c: Buffer) => s.write(c));
    s.on('close', () => process.exit(0));
  });
  void rawListen(server).then((addr) => process.send!(addr));
}

/** µs per crossing over `crossings` crossings of a `bytes`-byte message (median of 10 blocks). */
async function measure(crossings: number, bytes: number): Promise<number> {
  const child = fork(SELF, ['--peer'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const addr = await new Promise<RawAddress>((res, rej) => { child.once('message', (p) => res(p as RawAddress)); child.once('exit', () => rej(new Error('peer exited'))); });
    const s = rawConnect(addr);
    await new Promise<void>((res, rej) => { s.once('connect', res); s.once('error', rej); });
    const msg = Buffer.alloc(4 + bytes, 7);
    msg.writeUInt32LE(bytes, 0);
    // one round trip = two crossings; a reply is whole once its length has arrived
    const roundTrips = (n: number): Promise<void> => new Promise((res) => {
      let left = n, have = 0;
      const onData = (c: Buffer): void => {
        have += c.length;
        if (have < msg.length) return;
        have = 0;
        if (--left === 0) { s.off('data', onData); res(); return; }
        s.write(msg);
      };
      s.on('data', onData);
      s.write(msg);
    });
    const us = await usPerCrossing(roundTrips, crossings);
    s.end();
    return us;
  } finally {
    child.kill();
  }
}

if (process.argv[2] === '--peer') serve();
else if (process.argv[1] === SELF) {
  const us = await measure(Number(process.argv[2] ?? 20_000), Number(process.argv[3] ?? 8));
  console.log(us.toFixed(2));
}
