// Profile-based distribution end to end, with real node processes: trace → luna balance →
// luna run --distribution, on 2 nodes and under mpirun; DF keys the same from run to run; bad
// files and options. Placement in spread loops and stealing: test/runtime/distribution.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { explain, inTempDir, luna, ROOT } from './helpers.js';
import { profileOf, readProfile } from '../../src/analysis/balance/profile.js';
import { nameList } from '../../src/analysis/balance/names.js';
import { readTrace } from '../../src/trace/merge.js';
import { assertSameProfile } from '../analysis/same-profile.js';
import { checkLoads, placementOf } from '../../src/analysis/balance/validate.js';
import { weightsOf } from '../../src/analysis/balance/weights.js';
import type { Distribution } from '../../src/runtime/policy/distribution-file.js';
import { PLACES } from '../runtime/places.js';

const SEED004 = join(ROOT, 'examples/seed004/seed004.fa');

const PLACES_UCODES = `import type { DF } from 'luna-ts/ucode';
const RANK = process.env.LUNA_RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? '0';
export function c_put(i: number, t: DF): void { t.setInt(10 * i); console.log(\`w \${i} @\${RANK}\`); }
export function c_show(i: number, t: DF): void { console.log(\`r \${i} = \${t.getInt()} @\${RANK}\`); }
export function c_busy(i: number, ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* busy */ }
  console.log(\`s \${i} @\${RANK}\`);
}
`;

function distribution(cfs: Record<string, number>, dfs: Record<string, number> = {}, nodes = 2): Distribution {
  return { format: 'luna-ts-distribution', version: 1, program: 'places.fa', args: [], nodes, decision: 'apply', made: { strategy: 'hand', traces: [], merged: [], at: new Date(0).toISOString() }, cfs, dfs };
}

function where(stdout: string, tag: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const l of stdout.split('\n')) { const x = new RegExp(`^${tag} (\\d+)(?: = -?\\d+)? @(\\d)$`).exec(l); if (x) m.set(Number(x[1]), Number(x[2])); }
  return m;
}

test('the whole loop on a real 2-node program: trace → luna balance → luna run --distribution (each fragment where predicted); a second step merges the first', async (t) => {
  await inTempDir('luna-dist-loop-', async (dir) => {
    const args = ['24', '6', '200'];
    const t1 = await luna(['run', '--nodes', '2', '--threads', '1', '--trace', 't1', SEED004, ...args], dir, 90_000);
    assert.equal(t1.status, 0, explain(t1));
    // --no-host: at this size (23 ms of work) the traced machine — 2 nodes sharing its cores, a
    // system thread's cost per fragment — predicts no gain worth a move; --no-error-bar: a loaded
    // machine stretches a run this short beyond what any model explains; this test is the loop
    const b = await luna(['balance', 't1', '-o', 'd1.json', '--plot', 'plots', '--json', '--no-host', '--no-error-bar'], dir, 90_000);
    assert.equal(b.status, 0, explain(b));
    const summary = JSON.parse(b.stdout) as { decision: string; weights: 'wall' | 'cpu'; moved: number; fragments: number; before: { perNode: number[] }; after: { perNode: number[]; maxOverAvg: number }; predicted: { currentNs: number; nextNs: number } };
    assert.equal(summary.decision, 'apply', b.stdout);
    assert.equal(summary.before.perNode[1], 0, 'test_1: everything ran on node 0');
    assert.ok(summary.after.perNode[1]! > 0 && summary.after.maxOverAvg < 1.5, b.stdout);
    assert.ok(summary.predicted.nextNs < summary.predicted.currentNs, b.stdout);
    for (const f of ['before.svg', 'after.svg']) assert.match(readFileSync(join(dir, 'plots', f), 'utf8'), /^<svg[^>]*>/, f);
    const d1 = JSON.parse(readFileSync(join(dir, 'd1.json'), 'utf8')) as Distribution;
    assert.equal(Object.keys(d1.cfs).length, summary.moved);
    const t2 = await luna(['run', '--nodes', '2', '--threads', '1', '--trace', 't2', '--distribution', 'd1.json', SEED004, ...args], dir, 90_000);
    assert.equal(t2.status, 0, explain(t2));
    assert.match(t2.stdout, /seed004: OK/);
    const p1 = readProfile(join(dir, 't1')), p2 = readProfile(join(dir, 't2'));
    // the columnar reading equals the trace model's on both real traces
    for (const [d, p] of [['t1', p1], ['t2', p2]] as const) { const tr = readTrace(join(dir, d)); assertSameProfile(p, profileOf(tr.manifest, tr.events)); }
    // the placed CFs were spawned on node 0 and shipped: the profile knows where each came from
    const shipped = nameList(p2.gid).filter((_, i) => p2.spawn![i] !== p2.node[i]).length;
    assert.ok(shipped > 0 && p1.spawn!.every((s, i) => s === p1.node[i]), `${shipped} CFs ran away from their spawning node`);
    const ran = new Map(nameList(p2.gid).map((g, i) => [g, p2.node[i]!]));
    for (const [g, n] of Object.entries(d1.cfs)) assert.equal(ran.get(g), n, `CF ${g} ran where the file placed it`);
    assert.deepEqual(new Set(nameList(p2.dfKey)), new Set(nameList(p1.dfKey)), 'DF keys are the same from run to run, whatever the placement');
    // +LBSim's check: every CF ran where the step placed it, so the traced load of what each node
    // ran is the predicted load exactly; what the next run measured differs only by the drift of
    // the same CFs' CPU times (the machine's: printed, not asserted)
    const chk = checkLoads(p1, weightsOf(p1, summary.weights, true), placementOf(p1, d1.cfs, 2), p2, 2, summary.weights);
    assert.deepEqual([chk.misplaced, chk.unmatched, chk.missing], [0, 0, 0], JSON.stringify(chk));
    assert.deepEqual(chk.measuredCfs, chk.predictedCfs, 'fragments per node as predicted');
    for (let m = 0; m < 2; m++) {
      assert.ok(Math.abs(chk.placedNs[m]! - chk.predictedNs[m]!) <= 1e-9 * chk.predictedNs[m]!, `node ${m}: ${chk.placedNs[m]} against ${chk.predictedNs[m]}`);
      assert.ok(Math.abs(chk.predictedNs[m]! - summary.after.perNode[m]!) <= 1e-6 * summary.after.perNode[m]!, `node ${m}: the step's predicted load ${summary.after.perNode[m]} is the traced load of what it placed there ${chk.predictedNs[m]}`);
    }
    t.diagnostic(`predicted ${chk.predictedNs.map((x) => (x / 1e6).toFixed(1)).join(' / ')} ms, measured ${chk.measuredNs.map((x) => (x / 1e6).toFixed(1)).join(' / ')} ms, drift ${chk.drift.map((x) => x.toFixed(2)).join(' / ')}, share error ${chk.shareError.map((x) => `${(100 * x).toFixed(1)} %`).join(' / ')}`);
    const busy1 = nameList(p2.gid).reduce((a, _, i) => a + (p2.node[i] === 1 ? p2.finish[i]! - p2.start[i]! : 0), 0);
    assert.ok(busy1 > 0, 'node 1 worked this time');
    // the next step on the applied run: it keeps the first file's placements
    const b2 = await luna(['balance', 't2', '-o', 'd2.json', '--merge', 'd1.json'], dir, 90_000);
    assert.equal(b2.status, 0, explain(b2));
    const d2 = JSON.parse(readFileSync(join(dir, 'd2.json'), 'utf8')) as Distribution;
    assert.deepEqual(d2.made.merged, ['d1.json']);
    for (const g of Object.keys(d1.cfs)) assert.ok(g in d2.cfs, `${g} kept`);
    const warn = await luna(['balance', 't2', '-o', 'd3.json'], dir, 90_000);
    assert.match(warn.stderr, /applied a distribution .*give that file with --merge/, 'forgetting --merge is pointed out');
  });
});

test('bad distribution files stop the run before anything runs (exit 2, the file and entry named); a file for another program applies what matches', async () => {
  await inTempDir('luna-dist-bad-', async (dir) => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...distribution({ '5_0_0_0_1': 3 }), nodes: 2 }));
    const bad = await luna(['run', '--distribution', 'bad.json', SEED004, '8', '2', '3'], dir);
    assert.equal(bad.status, 2, explain(bad));
    assert.match(bad.stderr, /luna: error: bad\.json: entry cfs\["5_0_0_0_1"\]: the node must be a whole number from 0 to 1/);
    assert.equal(bad.stdout, '', 'nothing ran');
    writeFileSync(join(dir, 'four.json'), JSON.stringify(distribution({ '5_0_0_0_1': 3 }, {}, 4)));
    const big = await luna(['run', '--nodes', '2', '--distribution', 'four.json', SEED004, '8', '2', '3'], dir);
    assert.equal(big.status, 2, explain(big));
    assert.match(big.stderr, /four\.json places fragments on 4 nodes \(up to node 3\); this run has 2/);
    const missing = await luna(['run', '--distribution', 'none.json', SEED004, '8', '2', '3'], dir);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /none\.json: no such file/);
    writeFileSync(join(dir, 'other.json'), JSON.stringify(distribution({ '5_0_0_0_1': 0, '9_9_9': 0 }, {}, 1)));
    const other = await luna(['run', '--distribution', 'other.json', SEED004, '8', '2', '3'], dir);
    assert.equal(other.status, 0, explain(other));
    assert.match(other.stderr, /other\.json was made for program places\.fa, arguments \(none\): what matches this run applies/);
    assert.match(other.stderr, /1 of the \d+ fragment\(s\) run here were placed by other\.json; 1 of its 2 entries named no fragment of this run/);
  });
});

test('luna balance: bad options and files are refused (exit 2); a directory that is not a trace (exit 1)', async () => {
  await inTempDir('luna-balance-opts-', async (dir) => {
    const t = await luna(['run', '--trace', 't', SEED004, '8', '2', '3'], dir);
    assert.equal(t.status, 0, explain(t));
    const cases: [string[], number, RegExp][] = [
      [['--strategy', 'magic'], 2, /--strategy must be one of seed, refine, greedy, got "magic"/],
      [['--quantum', '10'], 2, /--quantum: "10" needs a unit/],
      [['--dfs', 'nowhere'], 2, /--dfs must be follow or keep/],
      [['--tolerance', '0.5'], 2, /--tolerance must be a number ≥ 1/],
      [['--contention', '0.9'], 2, /--contention must be a number from 1/],
      [['--contention', 'fast'], 2, /--contention must be a number from 1 .*"fast"/],
      [['--merge', 'none.json'], 2, /none\.json: no such file/],
    ];
    for (const [opts, code, re] of cases) {
      const r = await luna(['balance', 't', ...opts], dir);
      assert.equal(r.status, code, explain(r));
      assert.match(r.stderr, re, explain(r));
      assert.ok(!existsSync(join(dir, 'distribution.json')), 'nothing written');
    }
    const notTrace = await luna(['balance', 'nowhere'], dir);
    assert.equal(notTrace.status, 1);
    assert.match(notTrace.stderr, /no trace directory nowhere/);
    const ok = await luna(['balance', 't', '--strategy', 'refine', '--nodes', '3'], dir);
    assert.equal(ok.status, 0, explain(ok));
    assert.match(ok.stdout, /strategy refine \(CPU-time weights, the median of each class\), 3 node\(s\)/);
    const own = await luna(['balance', 't', '--strategy', 'refine', '--no-typical', '-o', 'own.json'], dir);
    assert.equal(own.status, 0, explain(own));
    assert.match(own.stdout, /strategy refine \(CPU-time weights\), 1 node\(s\)/, '--no-typical: each fragment its own measurement');
    assert.match(ok.stdout, /load\/node +min +mean +max +max\/avg/);
    assert.match(ok.stdout, /time {7}strategy [\d.]+ ms/);
    const d = JSON.parse(readFileSync(join(dir, 'distribution.json'), 'utf8')) as Distribution;
    assert.equal(d.nodes, 3);
  });
});

test('luna report --distribution: the load per node traced and as the file places it', async () => {
  await inTempDir('luna-balance-report-', async (dir) => {
    const t = await luna(['run', '--nodes', '2', '--threads', '1', '--trace', 't', SEED004, '16', '4', '50'], dir, 90_000);
    assert.equal(t.status, 0, explain(t));
    const b = await luna(['balance', 't', '-o', 'd.json', '--no-guard'], dir, 90_000);
    assert.equal(b.status, 0, explain(b));
    const r = await luna(['report', 't', '--distribution', 'd.json', '-o', 'r.html'], dir, 90_000);
    assert.equal(r.status, 0, explain(r));
    const html = readFileSync(join(dir, 'r.html'), 'utf8');
    assert.match(html, /<section id="balance"><h2>Load per node<\/h2>/);
    assert.match(html, /<th>with d\.json \(\d+ moved\)<\/th>/);
    writeFileSync(join(dir, 'bad.json'), '[]');
    const bad = await luna(['report', 't', '--distribution', 'bad.json', '-o', 'r2.html'], dir);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /bad\.json: not a luna-ts distribution/);
  });
});

function hasMpirun(): boolean {
  try { execFileSync('sh', ['-c', 'command -v mpirun'], { stdio: 'ignore' }); return true; } catch { return false; }
}

test('under mpirun the ranks apply the same distribution', { skip: hasMpirun() ? false : 'mpirun not found (Debian: apt-get install -y openmpi-bin)' }, async () => {
  await inTempDir('luna-dist-mpi-', async (dir) => {
    writeFileSync(join(dir, 'places.fa'), PLACES);
    writeFileSync(join(dir, 'ucodes.ts'), PLACES_UCODES);
    const cfs: Record<string, number> = {};
    for (let i = 0; i < 16; i++) cfs[`0_${i}_0`] = (i + 1) % 2;
    writeFileSync(join(dir, 'd.json'), JSON.stringify(distribution(cfs)));
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(LUNA_|OMPI_|PMIX_|PMI_|SLURM_)/.test(k)) env[k] = v;
    const out = execFileSync('mpirun', ['--allow-run-as-root', '--oversubscribe', '-np', '2', process.execPath, join(ROOT, 'bin/luna'), 'run', '--threads', '1', '--distribution', 'd.json', 'places.fa', '16', '0'], { cwd: dir, env, encoding: 'utf8', timeout: 90_000 });
    const w = where(out, 'w');
    assert.equal(w.size, 16, out);
    for (let i = 0; i < 16; i++) assert.equal(w.get(i), (i + 1) % 2, `w[${i}] on rank ${(i + 1) % 2}`);
  });
});
