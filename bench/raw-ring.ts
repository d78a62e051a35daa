// The floor of a crossing through the transport's shared-memory ring (src/runtime/transport/ring.ts):
// two fresh Node processes pass one 8-byte message back and forth through a ring file, each
// replying as soon as it reads it, no runtime. Beside raw-pingpong.ts's socket floor it says what
// a hop costs when the receiver polls.
//   node dist/bench/raw-ring.js [crossings] [spin|loop]
// spin: both read in a tight loop (the least a crossing can cost); loop: both poll once per
// event-loop turn (setImmediate), as the transport's system thread does.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { usPerCrossing } from './median.js';
import { createRingFile, openRingFile, RingReader, RingWriter, unlinkRingFile } from '../src/runtime/transport/ring.js';

const SELF = fileURLToPath(import.meta.url);
const MSG = new Uint8Array(8);

/** Reply to every message in ring `inWhich` through the other until `n` messages came. */
function echo(path: string, capacity: number, inWhich: 0 | 1, mode: string): void {
  const f = openRingFile(path, capacity);
  if (typeof f === 'string') throw new Error(f);
  const rx = new RingReader(f.buffer, inWhich, capacity), tx = new RingWriter(f.buffer, inWhich === 0 ? 1 : 0, capacity);
  let quit = false;
  const onMsg = (tag: number, body: Uint8Array): void => { if (tag === 2) quit = true; else tx.write(0, 1, body, undefined); };
  process.send!('ready');
  if (mode === 'spin') {
    while (!quit) rx.read(0, onMsg);
    process.exit(0);
  }
  const turn = (): void => { rx.read(0, onMsg); if (quit) process.exit(0); setImmediate(turn); };
  turn();
}

/** µs per crossing over `crossings` crossings (median of 10 blocks). */
async function measure(crossings: number, mode: string): Promise<number> {
  const f = createRingFile();
  if (typeof f === 'string') throw new Error(f);
  const child = fork(SELF, ['--peer', f.path, String(f.capacity), mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    await new Promise<void>((res, rej) => { child.once('message', () => res()); child.once('exit', () => rej(new Error('peer exited'))); });
    unlinkRingFile(f.path);
    const tx = new RingWriter(f.buffer, 0, f.capacity), rx = new RingReader(f.buffer, 1, f.capacity);
    let back = 0;
    const onMsg = (): void => { back++; };
    // one round trip = two crossings
    const roundTrips = (n: number): Promise<void> => {
      if (mode === 'spin') {
        for (let i = 0; i < n; i++) {
          tx.write(0, 1, MSG, undefined);
          const want = back + 1;
          while (back < want) rx.read(0, onMsg);
        }
        return Promise.resolve();
      }
      return new Promise((res) => {
        let left = n, want = back + 1;
        tx.write(0, 1, MSG, undefined);
        const turn = (): void => {
          rx.read(0, onMsg);
          if (back >= want) {
            if (--left === 0) return res();
            want = back + 1;
            tx.write(0, 1, MSG, undefined);
          }
          setImmediate(turn);
        };
        setImmediate(turn);
      });
    };
    const us = await usPerCrossing(roundTrips, crossings);
    tx.write(0, 2, MSG, undefined);
    return us;
  } finally {
    setTimeout(() => child.kill(), 1000).unref();
  }
}

if (process.argv[2] === '--peer') echo(process.argv[3]!, Number(process.argv[4]), 0, process.argv[5] ?? 'loop');
else if (process.argv[1] === SELF) {
  const us = await measure(Number(process.argv[2] ?? 20_000), process.argv[3] ?? 'loop');
  console.log(us.toFixed(2));
}
