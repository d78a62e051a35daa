// Worker lanes pinned one to a CPU, on real worker threads: each lane's thread reads back the one
// CPU it was given (/proc/self/task/<tid>/status), only where the node may use a CPU for each
// lane, and not at all when the plan does not ask for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { WorkerPool } from '../../src/runtime/exec/pool.js';
import { canPin, laneCpus, threadCpus } from '../../src/runtime/exec/affinity.js';
import { cpuSet, parseCpuList } from '../../src/core/cpus.js';
import type { WaitPlan } from '../../src/runtime/exec/protocol.js';

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

test('with pinning asked for, each worker lane runs on a CPU of its own where the node has one for each', { skip: !linux && 'Linux only' }, async () => {
  const set = cpuSet();
  const narrowed = await pinnedWith({ cpus: set.count, ...spins, pinLanes: true });
  const want = canPin ? laneCpus(2, set) : undefined;
  if (want === undefined) assert.deepEqual(narrowed, [], `no lane pinned (${set.count} CPU(s), addon ${canPin ? 'loaded' : 'absent'})`);
  else assert.deepEqual(narrowed, want.map(String).sort(), 'lane i on the i-th CPU of the set');
});

test('without it, no thread is pinned', { skip: !linux && 'Linux only' }, async () => {
  assert.deepEqual(await pinnedWith({ cpus: cpuSet().count, ...spins }), []);
});

test('lanes are pinned only where the node may use as many CPUs as it has lanes', () => {
  const set = (ids: number[] | null, machine = 4) => ({ ids, count: ids?.length ?? 1, machine, bound: (ids?.length ?? machine) < machine });
  assert.deepEqual(laneCpus(2, set([0, 1, 2, 3])), [0, 1]);
  assert.deepEqual(laneCpus(2, set([2, 5])), [2, 5], 'a binding to CPUs 2 and 5: those');
  assert.equal(laneCpus(2, set([3])), undefined, 'bound to one CPU (mpirun, np ≤ 2): not pinned, the lanes would be packed for good');
  assert.equal(laneCpus(3, set([0, 1])), undefined, 'more lanes than CPUs');
  assert.equal(laneCpus(2, set(null)), undefined, 'the set unknown');
  assert.equal(laneCpus(1, set([0, 1])), undefined, 'one lane: nothing to gain');
});
