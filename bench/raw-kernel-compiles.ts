// How fast each compile of Task Bench's TypeScript kernel runs: the same text over the same array,
// compiled `compiles` times in one thread (kernel.ts compileKernel: each a function of its own,
// optimised and placed in the code space on its own), each warmed as warmKernel warms one and
// timed on the thread CPU clock (its best of 15 calls). On this host about one compile in three
// runs ~1.49× slower than the others for as long as it lives: the speed follows the code's
// placement, not the data, the thread or the moment (docs/benchmarks.md, "The TypeScript
// kernel's speed follows where V8 places its code"). Prints ns an iteration per compile, then
// the slowest ÷ the fastest.
//   node dist/bench/raw-kernel-compiles.js [compiles] [iters]
import { compileKernel } from './taskbench/kernel.js';
import { cpuClockExact, threadCpuNs } from '../src/trace/clock.js';

const compiles = Number(process.argv[2] ?? 10), iters = Number(process.argv[3] ?? 8192);
if (!(compiles >= 1) || !(iters >= 1)) {
  process.stderr.write('usage: node dist/bench/raw-kernel-compiles.js [compiles ≥ 1] [iters ≥ 1]\n');
  process.exit(2);
}
// without the addon the clock is the wall's: still a best of 15, but the host's preemption shows
const clock = cpuClockExact ? threadCpuNs : (): number => performance.now() * 1e6;
const ns: number[] = [];
let sink = 0;
for (let c = 0; c < compiles; c++) {
  const f = compileKernel();
  for (let i = 0; i < 300; i++) sink += f(8);
  let best = Infinity;
  for (let r = 0; r < 15; r++) {
    const c0 = clock();
    sink += f(iters);
    best = Math.min(best, (clock() - c0) / iters);
  }
  ns.push(best);
}
if (!Number.isFinite(sink)) throw new Error('kernel');
console.log(`${(Math.max(...ns) / Math.min(...ns)).toFixed(2)} slowest ÷ fastest compile; ns an iteration (${iters} iterations, ${cpuClockExact ? 'thread CPU' : 'wall'}): ${ns.map((x) => x.toFixed(1)).join(' ')}`);
