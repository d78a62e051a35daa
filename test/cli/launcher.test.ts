// `bin/luna` run as a file (its first line, as a user or mpirun starts it): the glibc tunable it
// sets (one malloc arena for every thread) reaches every node process, and a user's own are kept
// after it, so they win; the
// certificate bundle Node would load at start-up for NODE_EXTRA_CA_CERTS is dropped on every node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inTempDir, LUNA } from './helpers.js';

const PROGRAM = `import c_env(int \`node) as env;
sub main()
{
    for r = 0..1
        cf show[r]: env(r) @ { locator_cyclic: r; };
}
`;
const UCODES = `export function c_env(node: number): void {
  console.log(\`node \${node}: \${process.env.GLIBC_TUNABLES ?? '(unset)'} ca=\${process.env.NODE_EXTRA_CA_CERTS ?? '(unset)'}\`);
}
`;

test('bin/luna started as a file asks glibc for one malloc arena and huge pages on every node, keeps the user\'s glibc tunables after it and drops NODE_EXTRA_CA_CERTS', async () => {
  await inTempDir('luna-launcher-', async (dir) => {
    writeFileSync(join(dir, 'env.fa'), PROGRAM);
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    for (const user of [undefined, 'glibc.malloc.arena_max=4']) {
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' };
      if (user === undefined) delete env.GLIBC_TUNABLES;
      else env.GLIBC_TUNABLES = user;
      const r = spawnSync(LUNA, ['run', '--nodes', '2', 'env.fa'], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.trim().split('\n').sort();
      assert.equal(lines.length, 2, r.stdout);
      for (const [i, line] of lines.entries()) {
        const m = /^node (\d): (.*) ca=(.*)$/.exec(line);
        assert.ok(m, line);
        assert.equal(m[1], String(i));
        assert.equal(m[3], '(unset)', `no certificate bundle to load at start-up: ${line}`);
        const tunables = m[2]!.split(':');
        assert.equal(tunables[0], 'glibc.malloc.arena_max=1', line);
        assert.equal(tunables[1], 'glibc.malloc.hugetlb=1', line);
        if (user !== undefined) assert.equal(tunables.at(-1), user, `the user's tunable is kept, last (the last setting wins): ${line}`);
      }
    }
  });
});
