// What the CLI opens (docs/reliability.md, "Files"): what is not a regular file or a directory
// is refused, named, never read (a FIFO would block forever, /dev/zero never ends); directories
// under /proc are refused instead of looping in mkdir; a ucode cache that cannot be used (a
// read-only working directory, a `.luna-cache` that is a file) leaves the program building
// elsewhere with a warning, and a damaged cache entry is rebuilt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { explain, inTempDir, luna, ROOT, type Run } from '../cli/helpers.js';

const HELLO = join(ROOT, 'examples/hello');
const SPREAD = join(ROOT, 'test/trace/programs/spread/spread.fa');

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  assert.equal(r.status, 0, `mkfifo ${path}: ${r.stderr}`);
}

/** Exit `status`, `pattern` on stderr, no stack trace and no internal error. */
function refused(r: Run, status: number, pattern: RegExp): void {
  assert.equal(r.status, status, explain(r));
  assert.match(r.stderr, pattern, explain(r));
  assert.doesNotMatch(r.stderr, /internal error|\n\s+at |EACCES|ENOENT|EISDIR|ENOTDIR/, explain(r));
}

/** A program and its ucodes copied into `dir` (the module imports luna-ts by its package name). */
function hello(dir: string): void {
  writeFileSync(join(dir, 'hello.fa'), readFileSync(join(HELLO, 'hello.fa')));
  writeFileSync(join(dir, 'ucodes.ts'), readFileSync(join(HELLO, 'ucodes.ts'), 'utf8').replace(/^import type .*$/m, 'type DF = any;'));
}

test('special files in a trace directory are refused by name, never read', () => inTempDir('luna-files-', async (dir) => {
  const t = join(dir, 'T');
  const made = await luna(['run', '--threads', '2', '--trace', t, SPREAD, '6'], dir);
  assert.equal(made.status, 0, explain(made));
  const variant = (name: string, replace: (p: string) => void): string => {
    const d = join(dir, name);
    cpSync(t, d, { recursive: true });
    const lanes = readdirSync(d).filter((f) => f.endsWith('.lt')).sort();
    const victim = join(d, lanes[lanes.length - 1]!);
    rmSync(victim);
    replace(victim);
    return d;
  };
  // a thread file that is a FIFO or a directory: damage naming it (exit 3), the rest analysed
  for (const [name, replace, what] of [['fifo', mkfifo, 'a FIFO'], ['dir', (p: string) => mkdirSync(p), 'a directory']] as const) {
    const d = variant(name, replace);
    for (const args of [['analyze', 'slow', d], ['export', 'perfetto', d, '-o', join(dir, `${name}.json`)]]) {
      refused(await luna(args, dir, 30_000), 3, new RegExp(`corrupted: node0\\.thread\\d\\.lt at byte 0: is ${what}`));
    }
  }
  // the manifest a FIFO: exit 1
  const m = join(dir, 'm');
  cpSync(t, m, { recursive: true });
  rmSync(join(m, 'manifest.json'));
  mkfifo(join(m, 'manifest.json'));
  refused(await luna(['analyze', 'slow', m], dir, 30_000), 1, /manifest\.json: is a FIFO \(named pipe\), not a regular file/);
}));

test('special program, include and ucode files are refused by name (check and run)', () => inTempDir('luna-files-', async (dir) => {
  hello(dir);
  mkfifo(join(dir, 'fifo.fa'));
  refused(await luna(['check', 'fifo.fa'], dir, 30_000), 1, /fifo\.fa is a FIFO \(named pipe\), not a regular file: a program is a regular file/);
  writeFileSync(join(dir, 'inc.fa'), '#include "pipe.h"\n' + readFileSync(join(dir, 'hello.fa'), 'utf8'));
  mkfifo(join(dir, 'pipe.h'));
  refused(await luna(['check', 'inc.fa'], dir, 30_000), 1, /error\[LUNA-P010\]: include file "pipe\.h": .*pipe\.h is a FIFO \(named pipe\), not a regular file/);
  for (const cmd of ['check', 'run']) {
    refused(await luna([cmd, '--ucodes', '/dev/zero', 'hello.fa'], dir, 30_000), 1, /error\[LUNA-U001\]: ucode file \/dev\/zero is a character device, not a regular file/);
  }
  rmSync(join(dir, 'ucodes.ts'));
  mkfifo(join(dir, 'ucodes.ts'));
  refused(await luna(['run', 'hello.fa'], dir, 30_000), 1, /ucode file .*ucodes\.ts is a FIFO \(named pipe\), not a regular file/);
}));

test('outputs under /proc, or of the wrong kind, are refused with a message (no mkdir loop, no errno text)', () => inTempDir('luna-files-', async (dir) => {
  const t = join(dir, 'T');
  refused(await luna(['run', '--trace', '/proc/luna-test/T', join(HELLO, 'hello.fa')], dir, 30_000), 1, /cannot create the trace directory \/proc\/luna-test\/T: \/proc\/luna-test: no such file or directory/);
  assert.equal((await luna(['run', '--trace', t, join(HELLO, 'hello.fa')], dir)).status, 0);
  refused(await luna(['export', 'tables', t, '-o', '/proc/luna-test'], dir, 30_000), 1, /cannot create the tables directory \/proc\/luna-test: /);
  writeFileSync(join(dir, 'F'), '');
  refused(await luna(['export', 'tables', t, '-o', 'F'], dir, 30_000), 1, /cannot create the tables directory F: .*F is a regular file, not a directory/);
  mkdirSync(join(dir, 'D'));
  refused(await luna(['export', 'perfetto', t, '-o', 'D'], dir, 30_000), 1, /cannot write the Perfetto trace: D is a directory, not a regular file/);
}));

test('a .luna-cache that is a file: the program builds elsewhere, with a warning', () => inTempDir('luna-files-', async (dir) => {
  hello(dir);
  writeFileSync(join(dir, '.luna-cache'), 'not a directory');
  const env = { LUNA_CACHE_DIR: '' };
  const r = await lunaEnv(['run', 'hello.fa'], dir, env);
  assert.equal(r.status, 0, explain(r));
  assert.match(r.stderr, /warning\[LUNA-U010\]: cannot use the ucode cache: .*\.luna-cache is a regular file, not a directory; building in .*luna-cache-\d+ instead/);
  assert.match(r.stdout, /hello: OK/);
}));

test('a read-only working directory: the program builds elsewhere, with a warning', () => inTempDir('luna-files-', async (dir) => {
  const ro = join(dir, 'ro');
  mkdirSync(ro);
  hello(ro);
  chmodSync(ro, 0o555);
  chmodSync(dir, 0o755);
  // root writes anywhere: the command runs as nobody then (it must be able to read the checkout)
  const asNobody = process.getuid?.() === 0;
  if (asNobody) {
    const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(join(ROOT, 'bin/luna'))})`]);
    assert.equal(probe.status, 0, `the checkout must be readable by nobody for this test: ${probe.stderr}`);
  }
  const argv = [join(ROOT, 'bin/luna'), 'run', 'hello.fa'];
  const r = asNobody
    ? spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...argv], { cwd: ro, encoding: 'utf8', env: { ...process.env, LUNA_CACHE_DIR: '' }, timeout: 60_000 })
    : spawnSync(process.execPath, argv, { cwd: ro, encoding: 'utf8', env: { ...process.env, LUNA_CACHE_DIR: '' }, timeout: 60_000 });
  const run: Run = { status: r.status, stdout: r.stdout, stderr: r.stderr, args: argv };
  assert.equal(run.status, 0, explain(run));
  assert.match(run.stderr, /warning\[LUNA-U010\]: cannot use the ucode cache: .*ro\/\.luna-cache: permission denied; building in .*luna-cache-\d+ instead/);
  assert.match(run.stdout, /hello: OK/);
  assert.throws(() => accessSync(join(ro, '.luna-cache'), constants.F_OK));
}));

test('a damaged cache entry is rebuilt, not loaded', () => inTempDir('luna-files-', async (dir) => {
  hello(dir);
  const cache = join(dir, 'cache');
  const first = await lunaEnv(['run', 'hello.fa'], dir, { LUNA_CACHE_DIR: cache });
  assert.equal(first.status, 0, explain(first));
  const bundle = readdirSync(cache).find((f) => /^ucodes-[0-9a-f]{16}\.mjs$/.test(f))!;
  const good = readFileSync(join(cache, bundle), 'utf8');
  writeFileSync(join(cache, bundle), good.slice(0, good.length >> 1));
  const again = await lunaEnv(['run', 'hello.fa'], dir, { LUNA_CACHE_DIR: cache });
  assert.equal(again.status, 0, explain(again));
  assert.match(again.stdout, /hello: OK/);
  assert.equal(readFileSync(join(cache, bundle), 'utf8'), good);
  // a damaged entry file (the JSON) likewise
  for (const f of readdirSync(cache).filter((x) => x.startsWith('bundle-'))) writeFileSync(join(cache, f), '{"file": 3');
  const third = await lunaEnv(['run', 'hello.fa'], dir, { LUNA_CACHE_DIR: cache });
  assert.equal(third.status, 0, explain(third));
}));

/** luna with extra environment variables. */
async function lunaEnv(args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try { return await luna(args, cwd, 60_000); } finally {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  }
}
