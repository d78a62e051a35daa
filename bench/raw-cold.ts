// What a thread's bookkeeping costs right after it waited, on this machine: a warm function of
// the kind the system thread runs per fragment (string DF keys, a Map of small entries) timed back
// to back, and after the thread slept 1 ms (Atomics.wait, as it sleeps between worker results)
// or spun 1 ms (no sleep), in alternating blocks. Prints the ratio after-a-sleep ÷ back-to-back first.
//   node dist/bench/raw-cold.js [samples]
import { fileURLToPath } from 'node:url';
import { spin } from '../examples/kernels.js';
import { median } from './median.js';

const store = new Map<string, { v: number; waiters: number[] | null }>();
let next = 0;
/** 40 posts and reads of fresh keys in a store of ~4 000 live entries */
function bookkeeping(): number {
  let s = 0;
  for (let i = 0; i < 40; i++) {
    const k = `x#1.${next++}`;
    store.set(k, { v: i, waiters: null });
    if (store.size > 4000) store.delete(`x#1.${next - 4001}`);
    s += store.get(k)!.v;
  }
  return s;
}

const flag = new Int32Array(new SharedArrayBuffer(4));
const gaps: Record<string, () => void> = {
  'back to back': () => {},
  'after a 1 ms sleep': () => { Atomics.wait(flag, 0, 0, 1); },
  'after a 1 ms spin': () => spin(1000),
};

function main(): void {
  const samples = Number(process.argv[2] ?? 600), block = 50;
  let sink = 0;
  for (let i = 0; i < 20_000; i++) sink += bookkeeping();
  const us: Record<string, number[]> = Object.fromEntries(Object.keys(gaps).map((k) => [k, []]));
  // blocks of each kind in turn, so that the host's slower and faster minutes weigh on all
  for (let b = 0; b < samples / block; b++) {
    for (const [name, gap] of Object.entries(gaps)) {
      for (let i = 0; i < block; i++) {
        gap();
        const t = performance.now();
        sink += bookkeeping();
        us[name]!.push((performance.now() - t) * 1000);
      }
    }
  }
  if (!Number.isFinite(sink)) throw new Error('sink');
  const warm = median(us['back to back']!);
  console.log(`${(median(us['after a 1 ms sleep']!) / warm).toFixed(2)} × slower after a 1 ms sleep; medians: ` +
    Object.entries(us).map(([k, a]) => `${k} ${median(a).toFixed(1)} µs`).join(', '));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
