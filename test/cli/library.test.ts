// The library API as the README shows it: the snippet of its "Library API" section runs as
// written (importing the built package), its trace carries a manifest like `luna run --trace`,
// and `luna analyze slow` reads it. Bad options are errors with a message, before anything runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { explain, inTempDir, luna, ROOT, runNode } from './helpers.js';
import { loadProgram, MAX_THREADS, runSingleNode, RunOptionsError } from '../../src/index.js';

/** The first ```js block after the README's "## Library API" heading. */
function readmeSnippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library API'));
  const m = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'README.md has a ```js block in its Library API section');
  assert.match(section, /npm install luna-ts/, 'and says how to install the package');
  return m[1]!;
}

test('the README Library API snippet runs as written and its trace is analysed like a CLI trace', async () => {
  const snippet = readmeSnippet();
  assert.match(snippet, /from 'luna-ts'/);
  await inTempDir('luna-lib-readme-', async (dir) => {
    // the snippet's paths are relative to a project holding the example
    cpSync(join(ROOT, 'examples', 'hello'), join(dir, 'examples', 'hello'), { recursive: true });
    // `npm install /path/to/luna-ts` links the package into node_modules: the snippet runs verbatim
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', 'luna-ts'), 'dir');
    writeFileSync(join(dir, 'snippet.mjs'), snippet);
    const traceDir = /traceDir: '([^']+)'/.exec(snippet)?.[1];
    assert.ok(traceDir, 'the snippet records a trace');
    assert.equal(existsSync(join(dir, traceDir)), false);

    const r = await runNode(['snippet.mjs'], dir);
    assert.equal(r.status, 0, explain(r));
    assert.match(r.stdout, /^hello: OK$/m, explain(r)); // the program's own check
    assert.match(r.stdout, /P_U = /, explain(r)); // the analysis' advice

    const manifest = JSON.parse(readFileSync(join(dir, traceDir, 'manifest.json'), 'utf8')) as { program: string; status: string; threads: number; nodes: number; files: unknown[] };
    assert.equal(manifest.program, 'examples/hello/hello.fa');
    assert.equal(manifest.status, 'completed');
    assert.equal(manifest.nodes, 1);
    assert.equal(manifest.threads, 2);
    assert.ok(manifest.files.length >= 1);

    const a = await luna(['analyze', 'slow', traceDir], dir);
    assert.equal(a.status, 0, explain(a));
    assert.match(a.stdout, /^SLOW analysis \(\w+\) of examples\/hello\/hello\.fa: 1 node\(s\) × 2 worker thread\(s\)/m, explain(a));
    assert.doesNotMatch(a.stdout + a.stderr, / of \?|manifest\.json: missing/, explain(a));
  });
});

async function loadHello(dir: string) {
  const loaded = await loadProgram(join(ROOT, 'examples', 'hello', 'hello.fa'), { cacheDir: join(dir, '.luna-cache') });
  assert.ok(loaded.program, loaded.text);
  return loaded;
}

test('a trace directory that cannot be created is a RunOptionsError naming it, and nothing runs', async () => {
  await inTempDir('luna-lib-tracedir-', async (dir) => {
    const loaded = await loadHello(dir);
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'not a directory');
    const traceDir = join(file, 'trace');
    await assert.rejects(
      runSingleNode({ program: loaded.program!, bundle: loaded.bundle, args: [], threads: 1, traceDir }),
      (e: Error) => e instanceof RunOptionsError && e.message.startsWith(`cannot open trace directory ${traceDir}: `),
    );
  });
});

test('threads outside 1..MAX_THREADS are a RunOptionsError before any worker starts', async () => {
  await inTempDir('luna-lib-threads-', async (dir) => {
    const loaded = await loadHello(dir);
    for (const threads of [0, 1.5, MAX_THREADS + 1]) {
      await assert.rejects(
        runSingleNode({ program: loaded.program!, bundle: loaded.bundle, args: [], threads }),
        (e: Error) => e instanceof RunOptionsError && e.message === `threads must be an integer from 1 to ${MAX_THREADS}, got ${threads}`,
      );
    }
  });
});

test('the package ships the command, the built library, the native sources and the docs, not tests, benchmarks or run outputs', async () => {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  for (const must of ['bin/luna', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/bundle/main.js', 'binding.gyp', 'scripts/build-native.mjs', 'README.md', 'docs/language.md']) {
    assert.ok(files.includes(must), `the package holds ${must}`);
  }
  for (const f of files) assert.doesNotMatch(f, /^(test|bench|src|dist\/test|dist\/bench)\/|\.trace\/|^report\.html$|^T\//, `the package leaves out ${f}`);
  // what the quick start writes into a checkout is ignored by git
  const ignored = spawnSync('git', ['check-ignore', 'T/manifest.json', 'report.html', 'run.trace/manifest.json', 'run.trace.tables/fragments.csv'], { cwd: ROOT, encoding: 'utf8' });
  if (ignored.status !== 128) assert.equal(ignored.stdout.trim().split('\n').length, 4, ignored.stdout + ignored.stderr);
});
