// One benchmark suite on two Node versions, alternated: the harness (bench/run.js SUITE
// --reps 1 --no-save) runs under this node and under another, A B A B …, and each figure is
// printed with its median on both and the ratio B/A (the machine drifts; alternating and
// medians keep the comparison fair). docs/benchmarks.md, "Node versions".
//
// Run: node dist/bench/node-versions.js /opt/node24/node_modules/.bin/node [SUITE=finegrain] [ROUNDS=3] [--quick]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from './median.js';

const RUN = fileURLToPath(new URL('./run.js', import.meta.url));

/** The figures of one harness run: `  name  value  unit …` rows of its suite table. */
function figures(node: string, suite: string, quick: boolean): { version: string; values: Map<string, number> } {
  const r = spawnSync(node, [RUN, suite, '--reps', '1', '--no-save', ...(quick ? ['--quick'] : [])], { encoding: 'utf8', timeout: 3_600_000, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${node} ${RUN} ${suite} failed (status ${r.status}): ${r.stderr.slice(-2000)}`);
  const version = /Node (v[\d.]+)/.exec(r.stdout)?.[1] ?? '?';
  const values = new Map<string, number>();
  let inSuite = false;
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith(`=== ${suite}`)) { inSuite = true; continue; }
    if (line.startsWith('=== ')) inSuite = false;
    const m = inSuite ? /^ {2}(\S+)\s+(-?[\d.]+(?:e[+-]?\d+)?)\s/.exec(line) : null;
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return { version, values };
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const [other, suite = 'finegrain', rounds = '3'] = args.filter((a) => a !== '--quick');
if (!other) {
  console.error('usage: node dist/bench/node-versions.js OTHER_NODE [SUITE=finegrain] [ROUNDS=3] [--quick]');
  process.exit(2);
}
const runs: { a: Map<string, number>[]; b: Map<string, number>[] } = { a: [], b: [] };
let versions = ['?', '?'];
for (let i = 0; i < Number(rounds); i++) {
  const a = figures(process.execPath, suite, quick), b = figures(other, suite, quick);
  runs.a.push(a.values);
  runs.b.push(b.values);
  versions = [a.version, b.version];
  console.error(`round ${i + 1} of ${rounds} done`);
}
const med = (xs: Map<string, number>[], k: string): number => median(xs.map((x) => x.get(k)).filter((v): v is number => v !== undefined));
console.log(`${suite}: Node ${versions[0]} (A) and Node ${versions[1]} (B), ${rounds} alternated round(s), medians`);
console.log(`${'figure'.padEnd(36)} ${'A'.padStart(10)} ${'B'.padStart(10)} ${'B/A'.padStart(7)}`);
for (const k of runs.a[0]!.keys()) {
  if (k.endsWith('.xOriginal')) continue;
  const a = med(runs.a, k), b = med(runs.b, k);
  console.log(`${k.padEnd(36)} ${a.toPrecision(4).padStart(10)} ${b.toPrecision(4).padStart(10)} ${(b / a).toFixed(2).padStart(7)}`);
}
