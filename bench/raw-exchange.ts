// The floor of a stencil step across two nodes on this machine: two fresh Node processes each
// compute for `work` µs (a spin), send the other 8 bytes over node:net (a Unix socket, as luna's
// links within a machine: raw-socket.ts), and wait for
// the other's 8 bytes before the next step — Task Bench stencil_1d on 2 nodes × 1 thread without
// a runtime. Prints µs per step and the overhead on top of the work.
//   node dist/bench/raw-exchange.js [work µs] [steps]
import { fork } from 'node:child_process';
import * as net from 'node:net';
import { fileURLToPath } from 'node:url';
import { rawConnect, rawListen, type RawAddress } from './raw-socket.js';

const SELF = fileURLToPath(import.meta.url);
const WARM = 200;

function spin(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end) { /* the task */ }
}

/** Run the exchange on `s`; `done` gets µs per step after the warm-up steps. */
function exchange(s: net.Socket, work: number, steps: number, done: (usPerStep: number) => void): void {
  const msg = Buffer.alloc(8, 1);
  let step = 0, have = 0, t0 = 0;
  const next = (): void => { spin(work); s.write(msg); };
  s.on('data', (c: Buffer) => {
    have += c.length;
    while (have >= msg.length) {
      have -= msg.length;
      if (++step === WARM) t0 = performance.now();
      if (step === steps) { done((1000 * (performance.now() - t0)) / (steps - WARM)); return; }
      next();
    }
  });
  next();
}

async function main(): Promise<void> {
  const work = Number(process.argv[2] ?? 0), steps = Math.max(WARM + 100, Number(process.argv[3] ?? 3000));
  if (process.argv[4] === '--peer') {
    const server = net.createServer((s) => {
      s.setNoDelay(true);
      exchange(s, work, steps, () => {});
      s.on('close', () => process.exit(0));
    });
    void rawListen(server).then((addr) => process.send!(addr));
    return;
  }
  const child = fork(SELF, [String(work), String(steps), '--peer'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const addr = await new Promise<RawAddress>((res, rej) => { child.once('message', (p) => res(p as RawAddress)); child.once('exit', () => rej(new Error('peer exited'))); });
    const s = rawConnect(addr);
    await new Promise<void>((res, rej) => { s.once('connect', res); s.once('error', rej); });
    const us = await new Promise<number>((res) => exchange(s, work, steps, res));
    s.destroy();
    console.log(`${us.toFixed(1)} µs per step, ${(us - work).toFixed(1)} µs on top of ${work} µs of work`);
  } finally {
    child.kill();
  }
}

if (process.argv[1] === SELF) await main();
