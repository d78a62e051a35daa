// Shared-memory ring files (transport/ring.ts) never outlive their run: real 2-node `bin/luna`
// runs whose nodes talk through a ring — one that ends normally, one whose node that offered the
// ring (and named its file) is SIGKILLed mid-run, one whose node that accepted it is — leave no
// luna-ring-* file in /dev/shm. The ring's memory never has a name at all (a memfd, mapped by
// both nodes as /memfd:luna-ring-…): a node killed between making it and its peer reading the
// offer leaves nothing either. Other runs on the machine make ring files too, so the test looks
// only at the files of its own run: the ones its processes map (read from /proc/<pid>/maps while
// it runs, which also shows that the run used a ring at all) and any named after its processes' pids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { RING_FILE_PREFIX, ringsAvailable } from '../../src/runtime/transport/ring.js';
import { cleanEnv, fixtureDir, groupGone, startLuna, type Started } from './procs.js';

const SHM = '/dev/shm';
const skip = !ringsAvailable() ? 'the shared-memory addon is not built' : !existsSync(SHM) ? `no ${SHM}` : false;

// n CFs of ms milliseconds, alternating between the nodes, each reading the one before: every
// value crosses between the nodes; the first says the run is going
const PROGRAM = `import c_init(int \`v, name \`x) as init;
import c_work(int \`ms, value \`a, name \`x) as work;
import c_print(value \`x) as print;
sub main(int n, int ms)
{
    df a;
    init(0, a[0]);
    for i = 0..n-1 cf w[i]: work(ms, a[i], a[i+1]) @ { locator_cyclic: i; };
    print(a[n]);
}
`;
const UCODES = `
let first = true;
const nap = (ms: number): void => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); };
type Int = { getInt(): number; setInt(v: number): void };
export function c_init(v: number, x: Int): void { x.setInt(v); }
/** the next value after ms; the first call says the run is going */
export function c_work(ms: number, a: Int, x: Int): void {
  if (first) console.log('running');
  first = false;
  nap(ms);
  x.setInt(a.getInt() + 1);
}
export function c_print(x: Int): void { console.log('result ' + x.getInt()); }
`;

const fixture = fixtureDir('luna-ring-files-', { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });

/** The processes of group `pgid` (its leader and every process it started in it). */
function group(pgid: number): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === pgid) pids.push(Number(d));
    } catch { /* ended */ }
  }
  return pids;
}

/** The ring files each of the processes `pids` maps now (their names, removed from /dev/shm or not), and which of them are nameless memfds. */
function mappedRings(pids: readonly number[], nameless?: Set<string>): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (const pid of pids) {
    let maps = '';
    try { maps = readFileSync(`/proc/${pid}/maps`, 'utf8'); } catch { continue; }
    for (const line of maps.split('\n')) {
      const named = line.indexOf(`${SHM}/${RING_FILE_PREFIX}`), memfd = line.indexOf(`/memfd:${RING_FILE_PREFIX}`);
      const at = named >= 0 ? named : memfd;
      if (at < 0) continue;
      const names = out.get(pid) ?? new Set<string>();
      const name = basename(line.slice(at).replace(/ \(deleted\)$/, '').replace(/^\/memfd:/, ''));
      names.add(name);
      if (named < 0) nameless?.add(name);
      out.set(pid, names);
    }
  }
  return out;
}

/** Ring files in /dev/shm that the run made: the names it mapped, and any named after one of its pids (the offering process's). */
function leftBehind(mapped: ReadonlySet<string>, pids: readonly number[]): string[] {
  return readdirSync(SHM).filter((f) => mapped.has(f) || pids.some((p) => f.startsWith(`${RING_FILE_PREFIX}${p}-`)));
}

/**
 * Start a 2-node run of `n` CFs and wait until it computes and both nodes map their ring: the
 * run, its processes, the ring's name, and the two nodes' pids — the one that offered the ring
 * (node 0: the name carries its pid) and the one that accepted it.
 */
async function started(n: number, ms: number, seen?: (pids: number[]) => void): Promise<{ run: Started; pids: number[]; ring: string; offered: number; accepted: number; nameless: Set<string> }> {
  const run = startLuna(['run', '--nodes', '2', '--threads', '1', '--timing', 'prog.fa', String(n), String(ms)], fixture(), cleanEnv());
  await run.waitFor(/^running$/m);
  let pids: number[] = [], mapped = new Map<number, Set<string>>();
  const nameless = new Set<string>();
  const until = Date.now() + 30_000;
  // the ring is set up once the mesh is; both nodes map it from then on
  while (Date.now() < until) {
    pids = group(run.pid);
    mapped = mappedRings(pids, nameless);
    seen?.(pids);
    if (mapped.size >= 2) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const ctx = `processes ${pids.join(', ')} map ${JSON.stringify([...mapped].map(([p, s]) => [p, [...s]]))}\n--- stderr\n${run.err()}`;
  assert.equal(mapped.size, 2, `both nodes map the ring file: ${ctx}`);
  const ring = [...mapped.values()][0]!.values().next().value as string;
  const offered = Number(/^luna-ring-(\d+)-/.exec(ring)?.[1]);
  const accepted = [...mapped.keys()].find((p) => p !== offered)!;
  assert.ok(mapped.get(offered)?.has(ring) && mapped.get(accepted)?.has(ring), `one ring, offered by the process its name carries: ${ctx}`);
  return { run, pids, ring, offered, accepted, nameless };
}

test('a 2-node run that ends normally leaves no ring file in /dev/shm', { skip }, async () => {
  const { run, pids, ring } = await started(200, 2);
  const ended = await run.exited;
  assert.equal(ended.code, 0, `--- stdout\n${run.out()}--- stderr\n${run.err()}`);
  assert.match(run.out(), /^result 200$/m);
  // the messages went through the ring
  const timing = /luna: timing: (\{.*\})$/m.exec(run.err());
  assert.ok(timing, run.err());
  assert.ok((JSON.parse(timing[1]!) as { ringFrames?: number }).ringFrames! > 0, timing[1]);
  assert.ok(await groupGone(run.pid), 'no process of the run is left');
  assert.deepEqual(leftBehind(new Set([ring]), pids), []);
});

for (const which of ['offered', 'accepted'] as const) {
  test(`a 2-node run whose node that ${which} the ring is SIGKILLed mid-run leaves no ring file in /dev/shm`, { skip }, async () => {
    // far longer than the test waits
    const s = await started(100_000, 20);
    const { run, pids, ring } = s;
    process.kill(s[which], 'SIGKILL');
    const ended = await run.exited;
    const ctx = `--- stdout\n${run.out()}--- stderr\n${run.err()}`;
    assert.ok(ended.code !== 0 || ended.signal !== null, `the run fails: ${JSON.stringify(ended)}\n${ctx}`);
    assert.doesNotMatch(run.out(), /^result /m, 'the run did not complete');
    assert.ok(await groupGone(run.pid), `no process of the run is left\n${ctx}`);
    assert.deepEqual(leftBehind(new Set([ring]), pids), []);
  });
}

test('the ring of a 2-node run never has a name: both nodes map a memfd, and no file of the run appears in /dev/shm meanwhile', { skip }, async () => {
  // what /dev/shm holds named after the run's processes, looked at while the ring is set up
  const named = new Set<string>();
  const look = (pids: readonly number[]): void => { for (const f of leftBehind(new Set(), pids)) named.add(f); };
  const { run, pids, ring, nameless } = await started(200, 2, look);
  look(pids);
  assert.ok(nameless.has(ring), `the ring ${ring} is mapped as a memfd, not as a file of ${SHM}`);
  assert.deepEqual([...named], [], `files of the run in ${SHM}`);
  const ended = await run.exited;
  assert.equal(ended.code, 0, `--- stdout\n${run.out()}--- stderr\n${run.err()}`);
  assert.match(run.out(), /^result 200$/m);
  assert.deepEqual(leftBehind(new Set([ring]), pids), []);
});
