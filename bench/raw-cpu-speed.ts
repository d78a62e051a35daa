// How fast each CPU of this process runs Task Bench's kernel, one at a time: a fresh process
// pinned to each CPU (taskset) times the TypeScript compute_bound alone. On this 2-vCPU VM the
// host's other tenants slow one vCPU at a time, invisibly from inside (no steal time is
// reported): 2^16 iterations took 3.3 ms on CPU 0 against 2.0 ms on CPU 1 for minutes on end.
// Two lanes in lockstep on such CPUs cannot both be busy: the fast one waits for the slow one
// each step, whatever the runtime does. Prints each CPU's µs per call (median of 5 rounds), then
// the slowest ÷ the fastest.
//   node dist/bench/raw-cpu-speed.js [iters]      (Linux with taskset; elsewhere: "no per-CPU probe")
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { computeBound, warmKernel } from './taskbench/kernel.js';
import { cpuSet } from '../src/core/cpus.js';

const SELF = fileURLToPath(import.meta.url);
const ROUNDS = 5;
const CALLS = 60;

/** µs per call of the kernel on this process's CPU: the median of ROUNDS rounds, after warming up. */
function timeHere(iters: number): number {
  let sink = 0;
  // the kernel's fastest compile, as every other probe of it runs
  warmKernel();
  for (let i = 0; i < 20; i++) sink += computeBound(iters);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) sink += computeBound(iters);
    rounds.push(((performance.now() - t0) * 1000) / CALLS);
  }
  if (!Number.isFinite(sink)) throw new Error('kernel');
  return rounds.sort((a, b) => a - b)[ROUNDS >> 1]!;
}

function main(): void {
  const iters = Number(process.argv[2] ?? 16384);
  if (process.argv[3] === 'here') { console.log(timeHere(iters).toFixed(1)); return; }
  const ids = cpuSet().ids;
  const per: { cpu: number; us: number }[] = [];
  for (const cpu of ids ?? []) {
    const r = spawnSync('taskset', ['-c', String(cpu), process.execPath, SELF, String(iters), 'here'], { encoding: 'utf8', timeout: 120_000 });
    const us = Number.parseFloat(r.stdout);
    if (r.status !== 0 || !Number.isFinite(us)) { console.log('no per-CPU probe: taskset did not run the kernel on one CPU'); return; }
    per.push({ cpu, us });
  }
  if (per.length === 0) { console.log('no per-CPU probe: this system does not list the CPUs of a process'); return; }
  const us = per.map((p) => p.us);
  const spread = Math.max(...us) / Math.min(...us);
  console.log(`${spread.toFixed(2)} slowest ÷ fastest CPU (${iters} iterations: ${per.map((p) => `CPU ${p.cpu} ${p.us.toFixed(0)} µs`).join(', ')})`);
}

main();
