// pic3d with its particles in dynamic arrays (examples/pic3d/pic3d_dda.fa) through the CLI: on
// one node with 2 threads, and on 2 node processes over TCP with subdomains on both; each run
// checks every particle against the sequential reference and the exact mass (the program fails
// otherwise). The CLI gives the run the arrays' layer, as it does any program that declares one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REC } from '../../examples/pic3d/model.js';
import { readTrace } from '../../src/trace/merge.js';
import { exchangeShare } from '../../bench/pic-share.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { noCompiler } from '../cpp/fixtures.js';
import { runFile } from '../runtime/files.js';

const FILE = 'examples/pic3d/pic3d_dda.fa', CPP_FILE = 'examples/pic3d-cpp/pic3d_dda.fa';
const cxx = noCompiler() === undefined;

// (the Poisson sweeps on slabs of the grid, the default; and on the subdomains with deep halos)
for (const [nodes, threads, args, line, defines] of [
  [1, 2, ['8', '2', '400', '3', '2', '1', '1'], 'pic3d: OK (N=8, 2x2x2 subdomains, 400 particles, 3 steps, 2 sweeps; mass exact, momentum and positions match the reference)', []],
  [2, 1, ['8', '4', '300', '2', '2', '1', '2'], 'pic3d: OK (N=8, 4x4x4 subdomains, 300 particles, 2 steps, 2 sweeps; mass exact, momentum and positions match the reference)', []],
  [2, 1, ['12', '3', '300', '2', '4', '1', '2'], 'pic3d: OK (N=12, 3x3x3 subdomains, 300 particles, 2 steps, 4 sweeps; mass exact, momentum and positions match the reference)', ['-D', 'SUBDOMAIN_SWEEPS']],
] as const) {
  test(`pic3d_dda on ${nodes} node(s) × ${threads} thread(s)${defines.length ? ` (${defines.join(' ')})` : ''} matches the sequential reference`, () => {
    const r = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', String(nodes), '--threads', String(threads), ...defines, FILE, ...args], { encoding: 'utf8', timeout: 180_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.deepEqual(r.stdout.trim().split('\n'), [line]);
  });
}

// The destination form against the exchange through leaving arrays (pic3d.fa): the same seed, the
// same particles in every subdomain at the end, positions and velocities equal to rounding (the
// deposit sums the particles delivered by the array in arrival order), on 1 node and 3 nodes;
// with TypeScript kernels and (when a compiler is there) C++ ones (examples/pic3d-cpp/pic3d_dda.fa).
// Each run's final particles are dumped per subdomain (PIC3D_DUMP); the dda run is traced, and
// its global counts delivered particles (a test that moved nothing would prove nothing). The
// references need no arrays' layer, so they run on in-process nodes (test/runtime/files.ts), the
// destination form through the CLI: a CLI run costs a process per node, ~1 s of CPU each.
const byId = (f: Float64Array): Map<number, Float64Array> => {
  const m = new Map<number, Float64Array>();
  for (let o = 0; o < f.length; o += REC) m.set(f[o]!, f.subarray(o, o + REC));
  return m;
};

for (const [nodes, args] of [[1, ['8', '2', '600', '4', '2', '1', '1']], [3, ['12', '3', '900', '4', '2', '1', '3']]] as const) {
  test(`pic3d_dda (destination form) ends with the same particles as pic3d (leaving arrays) on ${nodes} node(s)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'luna-pic3d-dest-'));
    try {
      const dump = (file: string, out: string, extra: string[] = []): void => {
        mkdirSync(join(dir, out));
        const r = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', String(nodes), '--threads', '1', ...extra, file, ...args],
          { encoding: 'utf8', timeout: 180_000, env: { ...process.env, PIC3D_DUMP: join(dir, out) } });
        assert.equal(r.status, 0, `${file}: ${r.stdout}\n${r.stderr}`);
        assert.match(r.stdout, /^pic3d: OK/);
      };
      const reference = async (file: string, out: string): Promise<void> => {
        mkdirSync(join(dir, out));
        const before = process.env.PIC3D_DUMP;
        process.env.PIC3D_DUMP = join(dir, out);
        try {
          const r = await runFile(file, { nodes, lanes: 1, args });
          assert.equal(r.ok, true, `${file}: ${r.message}`);
          assert.match(r.stdout.at(-1) ?? '', /^pic3d: OK/);
        } finally {
          if (before === undefined) delete process.env.PIC3D_DUMP; else process.env.PIC3D_DUMP = before;
        }
      };
      await reference('examples/pic3d/pic3d.fa', 'df');
      dump(FILE, 'dda', ['--trace', join(dir, 'trace')]);
      // the C++ kernels on the same form (ucenv.h destinations(targets)), and pic3d.fa with C++
      // kernels (its final summary, which dumps, is C++ too)
      const versions = cxx ? ['dda', 'cpp', 'cppdf'] : ['dda'];
      if (cxx) { dump(CPP_FILE, 'cpp'); await reference('examples/pic3d-cpp/pic3d.fa', 'cppdf'); }
      const files = readdirSync(join(dir, 'df')).sort();
      const F = Number(args[1]);
      assert.equal(files.length, F * F * F);
      const read = (v: string, name: string): Float64Array => { const b = readFileSync(join(dir, v, name)); return new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8); };
      for (const v of versions) {
        assert.deepEqual(readdirSync(join(dir, v)).sort(), files, `${v}: every subdomain`);
        let n = 0, dx = 0;
        for (const name of files) {
          const a = byId(read('df', name)), b = byId(read(v, name));
          assert.deepEqual([...b.keys()].sort((x, y) => x - y), [...a.keys()].sort((x, y) => x - y), `${v}, subdomain ${name}: the same particles`);
          for (const [id, p] of a) {
            const q = b.get(id)!;
            assert.equal(q[1], p[1], `${v}, particle ${id}: mass`);
            for (let k = 2; k < REC; k++) dx = Math.max(dx, Math.abs(q[k]! - p[k]!));
          }
          n += a.size;
        }
        assert.equal(n, Number(args[2]), `${v}: every particle, once`);
        assert.ok(dx < 1e-12, `${v}: positions and velocities equal to rounding (largest difference ${dx})`);
      }
      const share = exchangeShare(readTrace(join(dir, 'trace')).events);
      assert.equal(share.steps, 4);
      // the trace reads whole: a global count the system thread asked is placed on a lane after
      // that lane's last CF, not at the same instant (which merged as two CFs on the lane at once)
      const damage = analyzeSlowTrace(join(dir, 'trace')).damage;
      assert.equal(damage.total, 0, `trace damage: ${damage.examples.map((x) => x.detail).join('; ')}`);
      assert.ok(share.exchangedBytes > 0 && share.exchangedBytes % (REC * 8) === 0, `particles delivered by destination: ${share.exchangedBytes} bytes`);
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
}
