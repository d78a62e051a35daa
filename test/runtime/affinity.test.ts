// Worker lanes pinned one to a CPU, on real worker threads: each lane that waits for values its
// partner feeds reads back the one CPU it was given (/proc/thread-self/status), only where the
// node may use a CPU for each lane; lanes that never wait for each other, or a plan that does not
// ask for it, leave every thread on the process's CPUs (/proc/self/task/<tid>/status).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerPool, waitPlan } from '../../src/runtime/exec/pool.js';
import { canPin, laneCpus, pinCpus, pinSelf, threadCpus } from '../../src/runtime/exec/affinity.js';
import { cpuSet, parseCpuList } from '../../src/core/cpus.js';
import type { WaitPlan } from '../../src/runtime/exec/protocol.js';
import { assertOk, describeRun, luna, type Run } from './helpers.js';
import { PROGRAM } from './stencil2.js';

/** Each thread of this process but the main one, with the CPUs it may run on (Linux). */
function threadSets(): Map<number, string> {
  const out = new Map<number, string>();
  for (const t of readdirSync('/proc/self/task').map(Number)) {
    if (t === process.pid) continue;
    try {
      const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/self/task/${t}/status`, 'utf8'));
      if (m) out.set(t, m[1]!);
    } catch { /* ended meanwhile */ }
  }
  return out;
}

async function pinnedWith(plan: WaitPlan, lanes = 2): Promise<string[]> {
  const p = new WorkerPool({ lanes, imports: [], waiting: plan, onResult: () => {}, onDeath: (lane, _cf, cause) => { throw new Error(`worker ${lane} ${cause}`); } });
  await p.allBooted();
  const before = threadCpus();
  // the process's own set, as the lanes would have it unpinned
  const all = parseCpuList(/^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!)!.join(',');
  const narrowed = [...threadSets().values()].map((s) => parseCpuList(s)!.join(',')).filter((s) => s !== all).sort();
  await p.stop();
  assert.deepEqual(threadCpus(), before, 'the system thread is never pinned');
  return narrowed;
}

const linux = process.platform === 'linux';
const spins = { idleSpinNs: 0, fedSpinNs: 0, resultSpinNs: 0 };

test('lanes that never wait for each other are not pinned, even with pinning asked for', { skip: !linux && 'Linux only' }, async () => {
  assert.deepEqual(await pinnedWith({ cpus: cpuSet().count, ...spins, pinLanes: true }), []);
});

// A two-wide stencil on real workers: each lane waits for the value the other feeds it, and from
// step 100 on reports the CPUs its thread may run on.
const UCODES = `
import { isMainThread } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
let told = false;
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(_kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  const until = performance.now() + 0.15;
  while (performance.now() < until) { /* work: keeps the CFs on the workers */ }
  if (!isMainThread && t >= 100 && !told) {
    told = true;
    const m = /^Cpus_allowed_list:\\s*(\\S+)/m.exec(readFileSync('/proc/thread-self/status', 'utf8'));
    console.log('lane-cpus ' + (m ? m[1] : '?'));
  }
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;

test('lanes that feed each other run each on a CPU of its own where the node has one for each, and LUNA_PIN_LANES=0 leaves them free', { skip: !linux && 'Linux only' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-affinity-'));
  try {
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    writeFileSync(join(dir, 'stencil.fa'), PROGRAM);
    const run = (env: NodeJS.ProcessEnv): Promise<Run> => luna(['run', '--warm-start', '--threads', '2', join(dir, 'stencil.fa'), '200', 'ok'], { env: { ...process.env, ...env }, timeoutMs: 90_000 });
    const [pinned, free] = await Promise.all([run({ LUNA_PIN_LANES: '1' }), run({ LUNA_PIN_LANES: '0' })]);
    const sets = (r: Run): string[] => { assertOk(r); return r.stdout.split('\n').filter((l) => l.startsWith('lane-cpus ')).map((l) => parseCpuList(l.slice(10))!.join(',')).sort(); };
    const set = cpuSet(), all = set.ids!.join(',');
    const want = canPin ? laneCpus(2, set) : undefined;
    const got = sets(pinned);
    assert.ok(got.length >= 1, `no lane reported its CPUs\n${describeRun(pinned)}`);
    if (want === undefined) assert.deepEqual(got, got.map(() => all), `not pinned (${set.count} CPU(s), addon ${canPin ? 'loaded' : 'absent'})`);
    else {
      for (const g of got) assert.ok(want.map(String).includes(g), `lane on CPU ${g}, one of ${want.join(', ')}\n${describeRun(pinned)}`);
      assert.equal(new Set(got).size, got.length, 'no two lanes on one CPU');
    }
    for (const g of sets(free)) assert.equal(g, all, 'LUNA_PIN_LANES=0: the process\'s set');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('lanes are pinned only where the node may use as many CPUs as it has lanes', () => {
  const set = (ids: number[] | null, machine = 4) => ({ ids, count: ids?.length ?? 1, machine, bound: (ids?.length ?? machine) < machine });
  assert.deepEqual(laneCpus(2, set([0, 1, 2, 3])), [0, 1]);
  assert.deepEqual(laneCpus(2, set([2, 5])), [2, 5], 'a binding to CPUs 2 and 5: those');
  assert.equal(laneCpus(2, set([3])), undefined, 'bound to one CPU (mpirun, np ≤ 2): not pinned, the lanes would be packed for good');
  assert.equal(laneCpus(3, set([0, 1])), undefined, 'more lanes than CPUs');
  assert.equal(laneCpus(2, set(null)), undefined, 'the set unknown');
  assert.equal(laneCpus(2, set([0, 1, 2, 3]), 2), undefined, 'two ranks on this host share its four CPUs unbound: each would pin to CPUs 0 and 1');
  assert.deepEqual(laneCpus(2, set([0, 1]), 2), [0, 1], 'the node has the whole set');
  assert.equal(laneCpus(1, set([0, 1])), undefined, 'one lane: nothing to gain');
});

test('LUNA_PIN_LANES overrides the policy either way', () => {
  const saved = process.env.LUNA_PIN_LANES;
  try {
    process.env.LUNA_PIN_LANES = '0';
    assert.equal(waitPlan({ cpus: 2, ...spins, pinLanes: true }).pinLanes, undefined, '0: not pinned');
    process.env.LUNA_PIN_LANES = '1';
    assert.equal(waitPlan({ cpus: 2, ...spins }).pinLanes, true, '1: pinned');
    delete process.env.LUNA_PIN_LANES;
    assert.equal(waitPlan({ cpus: 2, ...spins, pinLanes: true }).pinLanes, true, 'unset: the policy\'s');
    assert.equal(waitPlan({ cpus: 2, ...spins }).pinLanes, undefined);
  } finally {
    if (saved === undefined) delete process.env.LUNA_PIN_LANES; else process.env.LUNA_PIN_LANES = saved;
  }
});

// a rehearsal pins a lane for real and gives it its set back after (worker.ts pinDue)
test('a thread pinned to one CPU gets its whole set back', { skip: (!linux || !canPin) && 'Linux with the native addon only' }, () => {
  const before = threadCpus()!;
  try {
    assert.ok(pinSelf(before[before.length - 1]!));
    assert.deepEqual(threadCpus(), [before[before.length - 1]]);
    assert.ok(pinCpus(before));
    assert.deepEqual(threadCpus(), before);
    assert.equal(pinCpus([]), false, 'no CPU: refused, the set unchanged');
    assert.deepEqual(threadCpus(), before);
  } finally {
    pinCpus(before);
  }
});
