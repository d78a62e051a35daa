// The probe behind test_1's 2-node target: how much faster can two node processes on this machine
// run test_1's work than one? test_1 is 576 independent add-one fragments (examples/seed004,
// c_add_one on a 48×48 block of doubles, 2 500 repeats: ~2.8 ms of CPU each); balanced perfectly on 2 nodes its speedup is bounded
// by the throughput of two processes running that kernel at once over one process alone. Each
// process runs the kernel K times and reports its wall and CPU time; the run alternates one
// process alone and two at once, R times, and prints medians:
//   cpuPerCfUs.alone / .pair    CPU time per fragment (a rise: the two cores slow each other)
//   bound                       2 × (alone wall per fragment) / (pair wall per fragment): the
//                               best speedup any placement of test_1 can reach on 2 local nodes
// A quiet machine is needed for the bound to mean anything:
//   npm run build && node dist/bench/balance-cores.js [K] [R]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface One { wallMs: number; cpuMs: number; k: number }

/** c_add_one of examples/seed004/ucodes.ts, its output in shared memory as the runtime gives it. */
function addOne(src: Float64Array, repeat: number): Float64Array {
  const dst = new Float64Array(new SharedArrayBuffer(src.byteLength));
  dst.set(src);
  for (let k = 0; k < repeat; k++) for (let i = 0; i < dst.length; i++) dst[i] += 1;
  return dst;
}

function child(k: number): void {
  const src = Float64Array.from({ length: 48 * 48 }, (_, i) => i);
  let sum = 0;
  const t0 = performance.now(), c0 = process.cpuUsage();
  for (let j = 0; j < k; j++) sum += addOne(src, 2500)[3]!;
  const cu = process.cpuUsage(c0);
  if (sum !== k * 2503) throw new Error('kernel result wrong');
  console.log(JSON.stringify({ wallMs: performance.now() - t0, cpuMs: (cu.user + cu.system) / 1000, k }));
}

function runOne(k: number): Promise<One> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', String(k)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b: Buffer) => { out += b.toString(); });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as One) : reject(new Error(`probe child exited ${code}`))));
  });
}

const median = (xs: number[]): number => { const s = xs.slice().sort((a, b) => a - b); return s[s.length >> 1]!; };

async function main(): Promise<void> {
  const [k = 300, reps = 5] = process.argv.slice(2).map(Number);
  const alone: One[] = [], pair: One[][] = [];
  for (let r = 0; r < reps; r++) {
    const order = r % 2 === 0 ? ['alone', 'pair'] : ['pair', 'alone'];
    for (const w of order) {
      if (w === 'alone') alone.push(await runOne(k));
      else pair.push(await Promise.all([runOne(k), runOne(k)]));
    }
  }
  const perCf = (o: One, f: 'wallMs' | 'cpuMs'): number => (1000 * o[f]) / o.k;
  const aWall = median(alone.map((o) => perCf(o, 'wallMs'))), aCpu = median(alone.map((o) => perCf(o, 'cpuMs')));
  // a pair's throughput: both processes' fragments over the longer of the two
  const pWall = median(pair.map((p) => Math.max(...p.map((o) => o.wallMs)) * 1000 / (p[0]!.k + p[1]!.k)));
  const pCpu = median(pair.flatMap((p) => p.map((o) => perCf(o, 'cpuMs'))));
  const load = (await import('node:os')).loadavg()[0]!;
  console.log(JSON.stringify({
    fragments: k, reps, cpuPerCfUs: { alone: +aCpu.toFixed(1), pair: +pCpu.toFixed(1) }, wallPerCfUs: { alone: +aWall.toFixed(1), pairThroughput: +pWall.toFixed(1) },
    bound: +(aWall / pWall).toFixed(3), load: +load.toFixed(1),
  }));
  if (load > 1.5) console.error(`warning: load average ${load.toFixed(1)} on ${(await import('node:os')).cpus().length} cores: the bound is meaningless under load; measure on a quiet machine`);
}

if (process.argv[2] === '--child') child(Number(process.argv[3]));
else await main();
