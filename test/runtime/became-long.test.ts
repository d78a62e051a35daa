// The inline rule and a code whose calls change length (policy/default.ts BECAME_LONG): a chain
// whose calls turn long leaves the system thread within a few sampled calls, while lone long
// samples among tiny ones leave it where it is. The ucodes say which thread ran them: the step
// counts are the run's own, not times.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOk, BOOT_ONLY, describeRun, lines, luna, type Run } from './helpers.js';
import { CHAIN } from './plan-programs.js';

// `turns`: tiny, then 2 ms a call from step 200; `blips`: tiny but for runs of 16 calls of 2 ms
// from step 600, 48 tiny calls apart. Both say which steps ran on the system thread (turns, on
// its stdout) or on a worker (blips, into a file: a worker's console.log costs a call tens of µs,
// on Node 24 enough in 1 run of 8 to keep the code's mean over the inline bound for good).
const ucodes = (awayFile: string): string => `import { isMainThread } from 'node:worker_threads';
import { openSync, writeSync } from 'node:fs';
let away = -1;
type In = { getInt(): number };
type Out = { setInt(v: number): void };
const spin = (ms: number): void => { const until = performance.now() + ms; while (performance.now() < until) { /* work */ } };
export function c_start(v: Out): void { v.setInt(7); }
export function c_show(i: number, v: In): void { console.log('x[' + i + '] = ' + v.getInt()); }
export function c_turns(a: In, i: number, v: Out): void {
  if (i >= 200) { spin(2); if (isMainThread) console.log('here ' + i); }
  v.setInt((a.getInt() * 31 + i) % 1000003);
}
export function c_blips(a: In, i: number, v: Out): void {
  if (i >= 600 && (i - 600) % 64 < 16) spin(2);
  if (!isMainThread) writeSync(away < 0 ? (away = openSync(${JSON.stringify(awayFile)}, 'a')) : away, 'away ' + i + '\\n');
  v.setInt((a.getInt() * 31 + i) % 1000003);
}
`;

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-became-long-'));
  writeFileSync(join(dir, 'ucodes.ts'), ucodes(join(dir, 'away.txt')));
  for (const k of ['turns', 'blips']) writeFileSync(join(dir, `${k}.fa`), CHAIN.replace('c_link(value', `c_${k}(value`));
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

// the workers are up before the program starts: the inline rule alone decides where a CF runs
const run = (file: string, n: number): Promise<Run> =>
  luna(['run', '--warm-start', '--threads', '1', join(dir, file), String(n)], { env: { ...process.env, ...BOOT_ONLY }, timeoutMs: 90_000 });

const last = (n: number): string => {
  let x = 7;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  return `x[${n}] = ${x}`;
};

const steps = (text: string, what: string): number[] => [...text.matchAll(new RegExp(`^${what} (\\d+)$`, 'gm'))].map((m) => Number(m[1]));

test('a chain whose calls turn long leaves the system thread within a few sampled calls', async () => {
  // The premise is that the tiny calls run here until step 200; on a loaded machine their measured
  // time can keep them from it (a run of the suite on Node 24 had none here), so up to two more
  // runs to find a run that meets it
  let r = await run('turns.fa', 400);
  for (let again = 0; again < 2 && steps(r.stdout, 'here').length === 0; again++) r = await run('turns.fa', 400);
  assertOk(r);
  assert.ok(lines(r.stdout).includes(last(400)), describeRun(r));
  // A tiny code's calls are timed 1 in 16: three long ones in a row leave by step 200 + 3 × 16
  // (one more sample's slack). The damped mean alone needed ~25 samples: steps up to ~660.
  const here = steps(r.stdout, 'here');
  assert.ok(here.length > 0, `the first long calls run here before they are measured (3 runs)\n${describeRun(r)}`);
  assert.ok(Math.max(...here) < 200 + 4 * 16, `long steps on the system thread up to ${Math.max(...here)}\n${describeRun(r)}`);
});

test('lone long samples among tiny ones leave the chain on the system thread', async () => {
  const r = await run('blips.fa', 800);
  assertOk(r);
  assert.ok(lines(r.stdout).includes(last(800)), describeRun(r));
  // A code's first calls go to a worker until it is measured there to be tiny (~70 steps quiet;
  // from step 500 on, under load too, it runs here). Calls are timed 1 in 16: each run of 16 long
  // calls gives exactly one long sample, between three tiny ones, and a rule that followed a
  // lone sample would send the chain away.
  const awayFile = join(dir, 'away.txt');
  const away = existsSync(awayFile) ? steps(readFileSync(awayFile, 'utf8'), 'away') : [];
  assert.ok(away.length > 0, `the first calls run on a worker, before the code is measured\n${describeRun(r)}`);
  assert.deepEqual(away.filter((i) => i >= 500), [], `steps run on a worker: ${away.join(' ')}\n${describeRun(r)}`);
});
