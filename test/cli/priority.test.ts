// Once worker lanes have run fragments for a while, V8's background threads (the threads Node
// started before luna's code) run at a lower priority (LUNA_V8_NICE, 10 by default), while the system thread and
// the worker threads keep the process's; a run of a few fragments on the system thread leaves them. A ucode reads every thread's nice value from /proc (on Linux a nice value is a
// thread's own) and says where it ran. A one-node program with a loop that begins with no worker
// started lowers them at its first fragment: there they took the system thread's own CPU. A node
// of coarse fragments (a CF marked `heavy`) runs its worker lanes below its system thread.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { explain, inTempDir, luna, LUNA } from './helpers.js';
import { BOOT_ONLY } from '../runtime/helpers.js';
import { LANE_NICE } from '../../src/runtime/policy/default.js';

// a chain of 16 `busy` links of 1 ms, then `nices` reads: the first batch of a code carries 4 CFs
// (the policy's FIRST_BATCH), so the lanes have run fragments long enough for the lowering
// before the last batch runs
const PROGRAM = `import busy(int \`ms, value \`prev, name \`next) as busy;
import start(name \`x) as start;
import nices(value \`x) as nices;
sub main()
{
    df x;
    start(x[0]);
    for i = 0..15
        busy(1, x[i], x[i + 1]);
    nices(x[16]);
}
`;

// field 19 of /proc/<pid>/task/<tid>/stat is the nice value (counted after the command name)
const UCODES = `import { readdirSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
const niceOf = (tid: string): number => Number(readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').replace(/^.*\\) /s, '').split(' ')[16]);
export function start(x: { setInt(v: number): void }): void { x.setInt(0); }
export function busy(ms: number, prev: { getInt(): number }, next: { setInt(v: number): void }): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
  next.setInt(prev.getInt() + 1);
}
export function nices(_x: unknown): void {
  const me = readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]!;
  const main = String(process.pid);
  const others = readdirSync('/proc/self/task').filter((t) => t !== me && t !== main).map(niceOf);
  console.log((isMainThread ? 'SYSTEM' : 'LANE') + ' ' + niceOf(me) + ' MAIN ' + niceOf(main) + ' OTHERS ' + others.join(','));
}
`;

interface Nices { where: string; self: number; main: number; others: number[] }

/** `nices` alone: one CF, ready at once */
const ALONE = `import start(name \`x) as start;
import nices(value \`x) as nices;
sub main()
{
    df x;
    start(x);
    nices(x);
}
`;

async function nices(dir: string, opts: string[], env: NodeJS.ProcessEnv, program = PROGRAM): Promise<Nices> {
  writeFileSync(join(dir, 'nices.fa'), program);
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  const r = await luna(['run', ...opts, 'nices.fa'], dir, 60_000, env);
  assert.equal(r.status, 0, explain(r));
  const m = /^(SYSTEM|LANE) (-?\d+) MAIN (-?\d+) OTHERS ([-\d,]*)$/m.exec(r.stdout);
  assert.ok(m, `the ucode reports the nice values: ${explain(r)}`);
  return { where: m[1]!, self: Number(m[2]), main: Number(m[3]), others: m[4] === '' ? [] : m[4]!.split(',').map(Number) };
}

const linux = existsSync('/proc/thread-self/stat');
// (--warm-start here for the workers booted before the program: not warmed, BOOT_ONLY)
const env = (): NodeJS.ProcessEnv => { const e = { ...process.env, ...BOOT_ONLY }; delete e.LUNA_V8_NICE; return e; };
const at = (ns: number[], v: number): number => ns.filter((n) => n === Math.min(19, v)).length;

test("V8's background threads run at a lower priority once a lane runs fragments, the program's threads at the process's", { skip: !linux && 'nice values per thread are read from /proc (Linux)' }, async () => {
  await inTempDir('luna-priority-', async (dir) => {
    // --warm-start: the CFs run on a worker lane (booted before the program starts)
    const one = await nices(dir, ['--warm-start', '--threads', '1'], env());
    assert.equal(one.where, 'LANE');
    assert.equal(one.self, one.main, `the lane ${one.self}, the system thread ${one.main}`);
    // V8's platform pool (4 threads) and its delayed-task thread, lowered by 10 (up to 19)
    assert.ok(at(one.others, one.main + 10) >= 5, `threads at the system thread's nice ${one.main} + 10: ${one.others.join(', ')}`);
    // the other worker thread keeps the process's priority (two worker threads: the system
    // thread is not one of the lanes)
    const two = await nices(dir, ['--warm-start', '--threads', '2'], { ...env(), LUNA_SYSTEM_LANE: '0' });
    assert.equal(two.where, 'LANE');
    assert.ok(at(two.others, two.main) >= 1, `the other lane at the system thread's nice ${two.main}: ${two.others.join(', ')}`);
    assert.ok(at(two.others, two.main + 10) >= 5, two.others.join(', '));
  });
});

test('LUNA_V8_NICE sets how much they are lowered (0: not at all)', { skip: !linux && 'nice values per thread are read from /proc (Linux)' }, async () => {
  await inTempDir('luna-priority-set-', async (dir) => {
    const five = await nices(dir, ['--warm-start', '--threads', '1'], { ...env(), LUNA_V8_NICE: '5' });
    assert.equal(five.where, 'LANE');
    assert.ok(at(five.others, five.main + 5) >= 5, `LUNA_V8_NICE=5: ${five.others.join(', ')}`);
    assert.ok(five.others.every((n) => n <= Math.min(19, five.main + 5)), `none lowered by more than 5: ${five.others.join(', ')}`);
    const off = await nices(dir, ['--warm-start', '--threads', '1'], { ...env(), LUNA_V8_NICE: '0' });
    assert.equal(off.where, 'LANE');
    assert.deepEqual(off.others.filter((n) => n !== off.main), [], `LUNA_V8_NICE=0: ${off.others.join(', ')}`);
  });
});

test('a run whose fragments all run on the system thread leaves V8\'s threads at their priority', { skip: !linux && 'nice values per thread are read from /proc (Linux)' }, async () => {
  await inTempDir('luna-priority-inline-', async (dir) => {
    // without --warm-start two tiny CFs are ready before any worker has booted: the system thread runs them
    const r = await nices(dir, ['--threads', '1'], env(), ALONE);
    assert.equal(r.where, 'SYSTEM');
    assert.deepEqual(r.others.filter((n) => n !== r.main), [], r.others.join(', '));
  });
});

/** tiny links on the system thread (no worker starts on one thread), then `nices` */
const LOOP = `import start(name \`x) as start;
import step(value \`prev, name \`next) as step;
import nices(value \`x) as nices;
sub main()
{
    df x;
    start(x[0]);
    for i = 0..299
        step(x[i], x[i + 1]);
    nices(x[300]);
}
`;
/** `luna run --timing --threads <threads> nices.fa` in `dir`: what `nices` printed, and the timing line's fields */
async function timedNices(dir: string, threads: string, e: NodeJS.ProcessEnv): Promise<{ n: Nices; timing: Record<string, unknown> }> {
  const r = await luna(['run', '--timing', '--threads', threads, 'nices.fa'], dir, 60_000, e);
  assert.equal(r.status, 0, explain(r));
  const m = /^(SYSTEM|LANE) (-?\d+) MAIN (-?\d+) OTHERS ([-\d,]*)$/m.exec(r.stdout);
  assert.ok(m, explain(r));
  const t = /^luna: timing: (\{.*\})$/m.exec(r.stderr);
  assert.ok(t, explain(r));
  return { n: { where: m[1]!, self: Number(m[2]), main: Number(m[3]), others: m[4] === '' ? [] : m[4]!.split(',').map(Number) }, timing: JSON.parse(t[1]!) as Record<string, unknown> };
}

const STEP = `export function step(prev: { getInt(): number }, next: { setInt(v: number): void }): void { next.setInt(prev.getInt() + 1); }\n`;

test("a loop program that begins on the system thread lowers V8's background threads at its first fragment (LUNA_V8_NICE_START=0: not)", { skip: !linux && 'nice values per thread are read from /proc (Linux)' }, async () => {
  await inTempDir('luna-priority-loop-', async (dir) => {
    writeFileSync(join(dir, 'nices.fa'), LOOP);
    writeFileSync(join(dir, 'ucodes.ts'), UCODES + STEP);
    const run = async (e: NodeJS.ProcessEnv): Promise<{ n: Nices; lowered: unknown }> => {
      const { n, timing } = await timedNices(dir, '1', e);
      return { n, lowered: timing.backgroundLowered };
    };
    const on = await run(env());
    assert.equal(on.n.where, 'SYSTEM');
    // V8's platform pool (4 threads) and its delayed-task thread, lowered by 10 (up to 19)
    assert.ok(at(on.n.others, on.n.main + 10) >= 5, `threads at the system thread's nice ${on.n.main} + 10: ${on.n.others.join(', ')}`);
    assert.ok(typeof on.lowered === 'number' && on.lowered >= 5, `backgroundLowered ${String(on.lowered)}`);
    const off = await run({ ...env(), LUNA_V8_NICE_START: '0' });
    assert.equal(off.n.where, 'SYSTEM');
    assert.deepEqual(off.n.others.filter((n) => n !== off.n.main), [], `LUNA_V8_NICE_START=0: ${off.n.others.join(', ')}`);
    assert.equal(off.lowered, undefined);
  });
});

/** a CF marked heavy: the node's fragments are coarse from the start, and `nices` runs on a lane */
const HEAVY = `import start(name \`x) as start;
import nices(value \`x) as nices;
sub main()
{
    df x;
    cf s: start(x);
    cf n: nices(x) @ { heavy; };
}
`;

test('a node of coarse fragments runs its lanes below the system thread (LUNA_LANE_NICE, LANE_NICE by default; 0: not)', { skip: !linux && 'nice values per thread are read from /proc (Linux)' }, async () => {
  await inTempDir('luna-priority-lanes-', async (dir) => {
    writeFileSync(join(dir, 'nices.fa'), HEAVY);
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    const run = async (e: NodeJS.ProcessEnv): Promise<{ n: Nices; lowered: unknown }> => {
      const { n, timing } = await timedNices(dir, '2', e);
      return { n, lowered: timing.lanesLowered };
    };
    const on = await run({ ...env(), LUNA_V8_NICE: '0' });
    assert.equal(on.n.where, 'LANE', 'a heavy CF runs on a lane');
    assert.equal(on.n.self, Math.min(19, on.n.main + LANE_NICE), `the lane at the system thread's nice ${on.n.main} + ${LANE_NICE}: ${on.n.self}`);
    // the other lane is lowered too once it has booted, which may come after this program's end
    assert.ok(on.lowered === 1 || on.lowered === 2, `lanesLowered ${String(on.lowered)}`);
    assert.ok(on.n.others.every((n) => n === on.n.main || n === Math.min(19, on.n.main + LANE_NICE)), `no thread but the lanes lowered (V8's threads left here): ${on.n.others.join(', ')}`);
    const three = await run({ ...env(), LUNA_V8_NICE: '0', LUNA_LANE_NICE: '3' });
    assert.equal(three.n.self, Math.min(19, three.n.main + 3), `LUNA_LANE_NICE=3: ${three.n.self}`);
    const off = await run({ ...env(), LUNA_V8_NICE: '0', LUNA_LANE_NICE: '0' });
    assert.equal(off.n.where, 'LANE');
    assert.equal(off.n.self, off.n.main, `LUNA_LANE_NICE=0: ${off.n.self}`);
    assert.deepEqual(off.n.others.filter((n) => n !== off.n.main), [], off.n.others.join(', '));
    assert.equal(off.lowered, undefined);
  });
});

test('LUNA_V8_NICE that is not a whole number from 0 to 19 is refused by name, before anything runs', async () => {
  await inTempDir('luna-priority-bad-', async (dir) => {
    writeFileSync(join(dir, 'nices.fa'), PROGRAM);
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    for (const bad of ['low', '20', '-1', '2.5']) {
      const r = await luna(['run', '--threads', '1', 'nices.fa'], dir, 60_000, { ...process.env, LUNA_V8_NICE: bad });
      assert.equal(r.status, 2, explain(r));
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `luna: error: LUNA_V8_NICE must be a whole number from 0 to 19 (how far V8's background threads are lowered once lanes run fragments, or from the first fragment of a one-node program with a loop that begins with no worker started (0: not at all)), got ${JSON.stringify(bad)}\n`);
    }
  });
});

/** Whether this process may lower a nice value back from above to `base` (CAP_SYS_NICE, or RLIMIT_NICE), as exec/priority.ts asks. */
function mayRaise(base: number): boolean {
  const eff = /^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  if (eff !== undefined && (BigInt('0x' + eff) & (1n << 23n)) !== 0n) return true;
  const lim = /^Max nice priority\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return lim !== undefined && Number(lim) >= 20 - base;
}

test('LUNA_SYSTEM_NICE lowers the system thread while every worker lane runs a batch, only where it may get its priority back', { skip: !linux && 'nice values per thread are read from /proc (Linux)' }, async () => {
  await inTempDir('luna-priority-system-', async (dir) => {
    const base = getPriority();
    // one lane: while it runs the chain's batches, every lane has one in flight
    const low = await nices(dir, ['--warm-start', '--threads', '1'], { ...env(), LUNA_V8_NICE: '0', LUNA_SYSTEM_NICE: '5' });
    assert.equal(low.where, 'LANE');
    assert.equal(low.self, base, 'the lane keeps the process\'s priority');
    if (mayRaise(base)) assert.equal(low.main, Math.min(19, base + 5), `the system thread lowered by 5 while the lane runs: ${low.main}`);
    else assert.equal(low.main, base, `without a way back the system thread is never lowered: ${low.main}`);
    const off = await nices(dir, ['--warm-start', '--threads', '1'], { ...env(), LUNA_V8_NICE: '0', LUNA_SYSTEM_NICE: '0' });
    assert.equal(off.main, base, `LUNA_SYSTEM_NICE=0: ${off.main}`);
  });
});

test('without a way back (no CAP_SYS_NICE, RLIMIT_NICE 0) the system thread keeps its priority', { skip: (!linux || !existsSync('/usr/bin/setpriv')) && 'needs /proc and setpriv (Linux)' }, async (t) => {
  await inTempDir('luna-priority-unprivileged-', async (dir) => {
    writeFileSync(join(dir, 'nices.fa'), PROGRAM);
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    // the run under setpriv without CAP_SYS_NICE (a no-op for an unprivileged user) and with RLIMIT_NICE 0
    const r = spawnSync('/usr/bin/setpriv', ['--inh-caps=-sys_nice', '--bounding-set=-sys_nice', 'prlimit', '--nice=0', process.execPath, LUNA, 'run', '--warm-start', '--threads', '1', 'nices.fa'],
      { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...env(), LUNA_V8_NICE: '0', LUNA_SYSTEM_NICE: '5' } });
    if (r.error || (r.status !== 0 && /setpriv|prlimit/.test(r.stderr))) { t.skip(`setpriv or prlimit refused here: ${r.error?.message ?? r.stderr}`); return; }
    assert.equal(r.status, 0, r.stderr);
    const m = /^LANE (-?\d+) MAIN (-?\d+) /m.exec(r.stdout);
    assert.ok(m, r.stdout + r.stderr);
    assert.equal(Number(m[2]), Number(m[1]), `the system thread at the lane's nice: ${r.stdout}`);
  });
});
