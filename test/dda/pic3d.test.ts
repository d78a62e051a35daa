// pic3d with its particles in dynamic arrays (examples/pic3d/pic3d_dda.fa) through the CLI: on
// one node with 2 threads, and on 2 node processes over TCP with subdomains on both; each run
// checks every particle against the sequential reference and the exact mass (the program fails
// otherwise). The CLI gives the run the arrays' layer, as it does any program that declares one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

const FILE = 'examples/pic3d/pic3d_dda.fa';

for (const [nodes, threads, args, line] of [
  [1, 2, ['8', '2', '400', '3', '2', '1', '1'], 'pic3d: OK (N=8, 2x2x2 subdomains, 400 particles, 3 steps, 2 sweeps; mass exact, momentum and positions match the reference)'],
  [2, 1, ['8', '4', '300', '2', '2', '1', '2'], 'pic3d: OK (N=8, 4x4x4 subdomains, 300 particles, 2 steps, 2 sweeps; mass exact, momentum and positions match the reference)'],
] as const) {
  test(`pic3d_dda on ${nodes} node(s) × ${threads} thread(s) matches the sequential reference`, () => {
    const r = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', String(nodes), '--threads', String(threads), FILE, ...args], { encoding: 'utf8', timeout: 180_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.deepEqual(r.stdout.trim().split('\n'), [line]);
  });
}
