// A ucode module that throws as it loads fails the run on every node count, traced or not, with
// the module's own message and the node that met it: rank 0 of a traced run measures the nodes'
// clocks before the program starts, and a peer that failed answers no more of its pings.
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertFails, luna } from './helpers.js';

const PROGRAM = `import c_one(name \`x) as one;
sub main()
{
    df x;
    one(x);
}
`;
const UCODES = `export function c_one(x: { setInt(v: number): void }): void { x.setInt(1); }
throw new Error('this module fails as it loads');
`;

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-load-fault-'));
  writeFileSync(join(dir, 'p.fa'), PROGRAM);
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

test('a ucode module that throws as it loads fails a run on 2 nodes, traced or not, naming its message and the node', async () => {
  const [plain, traced] = await Promise.all([
    luna(['run', '--nodes', '2', '--threads', '1', join(dir, 'p.fa')], { timeoutMs: 30_000 }),
    luna(['run', '--nodes', '2', '--threads', '1', '--trace', join(dir, 'trace'), join(dir, 'p.fa')], { timeoutMs: 30_000 }),
  ]);
  for (const r of [plain, traced]) assertFails(r, [/cannot load the ucode module: this module fails as it loads/, /on node \d/]);
});
