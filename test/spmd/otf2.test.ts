// An SPMD run's operations in the OTF2 export, read back by otf2-print: a region per operation
// (UPC's paradigm, the role of its kind), an Enter/Leave pair per operation the trace recorded on
// the rank's lane, with its call site, and a collective's bytes sent and received.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { explain, inTempDir, luna, ROOT } from '../cli/helpers.js';
import { readTrace } from '../../src/trace/index.js';
import { SPMD_OPS } from '../../src/trace/schema.js';
import { builtFile } from '../../src/core/addon.js';

const has = (cmd: string, args: string[]): boolean => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const missing = [
  builtFile('luna-otf2') ? null : 'the luna-otf2 helper (install libotf2-trace-dev, then npm run install)',
  has('otf2-print', ['--version']) ? null : 'otf2-print (Debian package otf2-tools)',
].filter(Boolean);

test('luna export otf2 of a traced luna spmd run: an Enter/Leave per operation on its rank, its region\'s role, site and bytes', async (t) => {
  if (missing.length) {
    assert.ok(!process.env.CI, `missing in CI: ${missing.join(', ')}`);
    t.skip(`missing: ${missing.join(', ')}`);
    return;
  }
  await inTempDir('luna-spmd-otf2-', async (dir) => {
    const env = { ...process.env, LUNA_CACHE_DIR: join(dir, 'cache') };
    const r = await luna(['spmd', '--threads', '3', '--trace', 'tr', join(ROOT, 'test/spmd/programs/late.ts')], dir, 60_000, env);
    assert.equal(r.status, 0, explain(r));
    const x = await luna(['export', 'otf2', 'tr', '-o', 'out'], dir, 60_000, env);
    assert.equal(x.status, 0, explain(x));
    // operations the trace recorded, per lane and operation
    const want = new Map<string, number>();
    for (const e of readTrace(join(dir, 'tr')).events) if (e.kind === 'spmdEnter') want.set(`${e.thread} spmd ${SPMD_OPS[e.op]}`, (want.get(`${e.thread} spmd ${SPMD_OPS[e.op]}`) ?? 0) + 1);
    assert.ok(want.size > 0);
    const defs = spawnSync('otf2-print', ['-G', join(dir, 'out', 'traces.otf2')], { encoding: 'utf8' });
    assert.equal(defs.status, 0, defs.stderr);
    const role = (op: string): string | undefined => new RegExp(`REGION .*Name: "spmd ${op}".*Role: (\\w+), Paradigm: (\\w+)`).exec(defs.stdout)?.slice(1).join(' ');
    assert.equal(role('barrier'), 'BARRIER UPC');
    assert.equal(role('all_alloc'), 'ALLOCATE UPC');
    assert.equal(role('lock'), 'CRITICAL UPC');
    assert.equal(role('put'), 'RMA UPC');
    assert.equal(role('region'), 'CODE UPC');
    const ev = spawnSync('otf2-print', [join(dir, 'out', 'traces.otf2')], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(ev.status, 0, ev.stderr);
    // location ids are node · 65536 + lane: lane k is rank k − 1
    const got = new Map<string, number>(), left = new Map<string, number>();
    const lines = ev.stdout.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const m = /^(ENTER|LEAVE)\s+(\d+)\s+\d+\s+Region: "(spmd \w+)"/.exec(lines[i]!);
      if (!m) continue;
      const key = `${Number(m[2]) % 65536} ${m[3]}`;
      const into = m[1] === 'ENTER' ? got : left;
      into.set(key, (into.get(key) ?? 0) + 1);
      if (m[1] === 'ENTER') {
        assert.match(lines[i + 1] ?? '', /"site" <\d+>; STRING; "[^"]*late\.ts:\d+:\d+"/, `the call site of ${lines[i]}`);
        if (m[3] === 'spmd barrier') assert.match(lines[i + 1]!, /"bytes_sent" <\d+>; UINT64; 0\), \("bytes_received" <\d+>; UINT64; 0\)/);
      }
    }
    assert.deepEqual([...got].sort(), [...want].sort());
    assert.deepEqual([...left].sort(), [...want].sort());
  });
});
