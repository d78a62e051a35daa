// bin/luna collects the young generation once before a program's first fragment (its first line
// exposes V8's collector, which it hands to the runtime and hides from ucodes): `--timing` says
// how long the collection took, only for programs that can make many fragments, and
// LUNA_START_GC=0 turns it off. bin/luna is started as an executable here, so that its first
// line's flags apply as they do for a user.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { inTempDir, LUNA, type Run } from './helpers.js';

function lunaExe(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(LUNA, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [], err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 60_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), args }); });
  });
}

/** The `--timing` record of a run. */
function timing(r: Run): Record<string, unknown> {
  const m = /^luna: timing: (\{.*\})$/m.exec(r.stderr);
  assert.ok(m, `no timing line: status ${r.status}\n${r.stderr}`);
  return JSON.parse(m[1]!) as Record<string, unknown>;
}

const UCODES = `import type { DF } from 'luna-ts/ucode';
export function start(x: DF): void { x.setInt(0); }
export function step(prev: DF, next: DF): void { next.setInt(prev.getInt() + 1); }
// what a ucode on the system thread sees of the collector bin/luna exposed
export function check(last: DF): void { console.log('last', last.getInt(), 'gc', typeof (globalThis as { gc?: unknown }).gc); }
`;
const LOOP = `import start(name \`x) as start;
import step(value \`prev, name \`next) as step;
import check(value \`last) as check;
sub main(int n) {
  df x;
  cf first: start(x[0]);
  for i = 0..n-1
    cf link[i]: step(x[i], x[i + 1]);
  check(x[n]);
}
`;
// the check marked heavy: it runs on a worker thread
const ON_WORKER = LOOP.replace('  check(x[n]);', '  cf c: check(x[n]) @ { heavy; };');
const FLAT = `import start(name \`x) as start;
import check(value \`last) as check;
sub main() {
  df x;
  start(x);
  check(x);
}
`;

test('a program with a loop: the young generation is collected before its first fragment, and a ucode sees no global gc', async () => {
  await inTempDir('luna-start-gc-', async (dir) => {
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    writeFileSync(join(dir, 'loop.fa'), LOOP);
    const r = await lunaExe(['run', '--quiet', '--timing', '--threads', '1', 'loop.fa', '300'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^last 300 gc undefined$/m);
    const t = timing(r);
    assert.equal(typeof t.startGcMs, 'number', `startGcMs in ${JSON.stringify(t)}`);
    assert.ok((t.startGcMs as number) >= 0);
    // turned off: no collection, nothing printed
    const off = await lunaExe(['run', '--quiet', '--timing', '--threads', '1', 'loop.fa', '300'], dir, { ...process.env, LUNA_START_GC: '0' });
    assert.equal(off.status, 0, off.stderr);
    assert.equal(timing(off).startGcMs, undefined);
  });
});

test('a ucode on a worker thread sees no global gc either (the flag is process-wide)', async () => {
  await inTempDir('luna-start-gc-worker-', async (dir) => {
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    writeFileSync(join(dir, 'worker.fa'), ON_WORKER);
    const r = await lunaExe(['run', '--quiet', '--timing', '--threads', '2', 'worker.fa', '30'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^last 30 gc undefined$/m);
    assert.ok((timing(r).sent as number) >= 1, `the check ran on a worker: ${JSON.stringify(timing(r))}`);
  });
});

test('a program of a few ucode calls (no loop, no sub call) is not collected before it starts', async () => {
  await inTempDir('luna-start-gc-flat-', async (dir) => {
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    writeFileSync(join(dir, 'flat.fa'), FLAT);
    const r = await lunaExe(['run', '--quiet', '--timing', 'flat.fa'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^last 0 gc undefined$/m);
    assert.equal(timing(r).startGcMs, undefined);
  });
});

test('LUNA_START_GC other than 0 or 1 is refused by name', async () => {
  await inTempDir('luna-start-gc-bad-', async (dir) => {
    writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    writeFileSync(join(dir, 'loop.fa'), LOOP);
    const r = await lunaExe(['run', '--quiet', 'loop.fa', '3'], dir, { ...process.env, LUNA_START_GC: 'yes' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /LUNA_START_GC must be a whole number from 0 to 1/);
  });
});
