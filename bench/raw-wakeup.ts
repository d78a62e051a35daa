// The wake-up probe: what it costs here to hand something to a thread that waits for it. Two
// bare worker threads ping-pong a counter through a SharedArrayBuffer (`Atomics` only, no
// runtime), in three ways:
//   wait   the waiter calls Atomics.wait at once: every crossing wakes a sleeping thread, and on
//          a virtual machine an idle vCPU with it;
//   spin   the waiter spins SPIN_US first, then waits (what luna's waiting threads do while a
//          core is free for them);
//   busy   as `wait`, while as many threads as the machine has cores spin beside the pair: the
//          vCPUs never go idle, so a wake-up is a run-queue switch, not a vCPU's return.
// Also what `Atomics.notify` costs its caller when the other thread sleeps. A machine fact,
// printed beside the bench's results (bench/run.ts) and used by the waiting policy's constants
// (src/runtime/policy/waiting.ts).
//   node dist/bench/raw-wakeup.js [roundTrips]      prints one JSON object (µs)
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { median } from './median.js';
import { cpuSet } from '../src/core/cpus.js';

const SELF = fileURLToPath(import.meta.url);
/** how long the `spin` waiter spins before it sleeps (the "~20 µs") */
const SPIN_US = 20;
const BLOCKS = 10;
/** slots: the ping counter, the pong counter, the start barrier, the busy threads' stop flag */
const PING = 0, PONG = 1, BARRIER = 2, STOP = 3;

export interface WakeupProbe {
  /** µs per round trip, each crossing waking a sleeping thread */
  waitUs: number;
  /** µs per round trip, the waiter spinning SPIN_US before it sleeps */
  spinUs: number;
  /** µs per round trip waiting at once while every core is kept busy */
  busyUs: number;
  /** µs an Atomics.notify of a sleeping thread costs its caller */
  notifyUs: number;
  /** the spin of `spinUs` */
  spinForUs: number;
  cores: number;
}

interface Job { sab: SharedArrayBuffer; role: 'ping' | 'pong' | 'busy'; roundTrips: number; spinNs: number }
interface Out { us: number[]; notifyNs: number; notified: number }

const now = (): number => performance.now() * 1e6;

/** Wait until slot `i` reaches `want`: spin `spinNs` first, then sleep. */
function waitFor(f: Int32Array, i: number, want: number, spinNs: number): void {
  if (Atomics.load(f, i) >= want) return;
  if (spinNs > 0) {
    const until = now() + spinNs;
    while (now() < until) if (Atomics.load(f, i) >= want) return;
  }
  for (let v = Atomics.load(f, i); v < want; v = Atomics.load(f, i)) Atomics.wait(f, i, v);
}

function thread(job: Job): Out {
  const f = new Int32Array(job.sab);
  if (job.role === 'busy') {
    Atomics.add(f, BARRIER, 1);
    let x = 0;
    while (Atomics.load(f, STOP) === 0) x++;
    return { us: [x], notifyNs: 0, notified: 0 };
  }
  const ping = job.role === 'ping';
  const mine = ping ? PING : PONG, theirs = ping ? PONG : PING;
  let notifyNs = 0, notified = 0;
  const post = (k: number): void => {
    Atomics.store(f, mine, k);
    const t0 = now();
    if (Atomics.notify(f, mine) > 0) { notifyNs += now() - t0; notified++; }
  };
  const per = Math.max(1, Math.floor(job.roundTrips / BLOCKS));
  const warm = Math.min(200, per);
  const us: number[] = [];
  let k = 0;
  for (let b = -1; b < BLOCKS; b++) {
    const n = b < 0 ? warm : per;
    const t0 = now();
    for (let r = 0; r < n; r++) {
      k++;
      if (ping) { post(k); waitFor(f, theirs, k, job.spinNs); } else { waitFor(f, theirs, k, job.spinNs); post(k); }
    }
    if (b >= 0) us.push((now() - t0) / 1e3 / n);
  }
  return { us, notifyNs, notified };
}

function start(job: Job): { done: Promise<Out>; w: Worker } {
  const w = new Worker(SELF, { workerData: job });
  const done = new Promise<Out>((res, rej) => { w.once('message', (o: Out) => res(o)); w.once('error', rej); });
  return { done, w };
}

/** µs per round trip (median of blocks) and the notify cost, one way of waiting. */
async function measure(roundTrips: number, spinNs: number, busy: number): Promise<{ us: number; notifyUs: number }> {
  const sab = new SharedArrayBuffer(16);
  const f = new Int32Array(sab);
  const hogs = Array.from({ length: busy }, () => start({ sab, role: 'busy', roundTrips, spinNs }));
  while (Atomics.load(f, BARRIER) < busy) await new Promise((r) => setTimeout(r, 1));
  try {
    const [a, b] = await Promise.all([start({ sab, role: 'ping', roundTrips, spinNs }).done, start({ sab, role: 'pong', roundTrips, spinNs }).done]);
    const n = a!.notified + b!.notified;
    return { us: median(a!.us), notifyUs: n > 0 ? (a!.notifyNs + b!.notifyNs) / n / 1e3 : NaN };
  } finally {
    Atomics.store(f, STOP, 1);
    await Promise.all(hogs.map((h) => h.done));
  }
}

/** The three ways of waiting, measured one after the other in this process. */
export async function probeWakeup(roundTrips = 2000): Promise<WakeupProbe> {
  const cores = cpuSet().count; // the CPUs this process may use, as a luna node counts them
  const wait = await measure(roundTrips, 0, 0);
  const spin = await measure(roundTrips, SPIN_US * 1000, 0);
  const busy = await measure(roundTrips, 0, cores);
  return { waitUs: wait.us, spinUs: spin.us, busyUs: busy.us, notifyUs: wait.notifyUs, spinForUs: SPIN_US, cores };
}

/** One line for a results table: the probe as a machine fact. */
export function wakeupLine(p: WakeupProbe): string {
  const f = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '—');
  return `wake-up round trip between two threads: wait at once ${f(p.waitUs)} µs, spin ${p.spinForUs} µs then wait ${f(p.spinUs)} µs, ` +
    `every core busy ${f(p.busyUs)} µs; Atomics.notify of a sleeper costs its caller ${f(p.notifyUs)} µs (${p.cores} cores)`;
}

if (isMainThread) {
  if (process.argv[1] === SELF) console.log(JSON.stringify(await probeWakeup(Number(process.argv[2] ?? 2000))));
} else {
  parentPort!.postMessage(thread(workerData as Job));
}
