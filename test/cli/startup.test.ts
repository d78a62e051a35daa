// What `luna run` loads: a plain run must not pay at start-up for what only other commands or
// options use (analysis, report, exports, the schema validator, the compiler's process). Each
// case runs the real command with a probe (`--import`) that reports every module file the
// process loads (a module.register load hook) and, at exit, Node's built-in modules
// (process.moduleLoadList); the program's output and exit code are checked beside it.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { explain, inTempDir, LUNA, ROOT, runNode, type Run } from './helpers.js';

const HOOKS = `import { writeSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) writeSync(2, 'PROBE-LOADED ' + url + '\\n');
  return next(url, context);
}
`;
const PROBE = `import { createRequire, register } from 'node:module';
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}));
process.on('exit', () => {
  // packages required by a CommonJS bundle (Node 20's, bin/luna) pass no load hook
  for (const f of Object.keys(createRequire(import.meta.url).cache)) writeSync(2, 'PROBE-LOADED ' + pathToFileURL(f).href + '\\n');
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
  writeSync(2, 'PROBE-BUILTINS ' + builtins.join(',') + '\\n');
});
`;

const HELLO = join(ROOT, 'examples', 'hello', 'hello.fa');
const HELLO_OUT = 'Hello from LuNA-ts!\nHello, world!\n2 + 40 = 42\nsquares: 1 4 9\nhello: OK\n';

/** packages a plain run must not load: reports, exports, schemas, progress bars, the TypeScript bundler (the ucodes are cached) */
const NOT_FOR_A_RUN = ['zod', 'protobufjs', 'echarts', 'hyparquet', 'hyparquet-writer', 'fflate', 'cli-progress', 'esbuild'];

interface Probed { run: Run; files: string[]; builtins: string[]; stderr: string }

/** `node --import probe entry args…` in `dir`; the probe's lines taken out of stderr. */
async function probed(dir: string, entry: string, args: string[]): Promise<Probed> {
  const probe = join(dir, 'probe.mjs');
  writeFileSync(probe, PROBE);
  const run = await runNode(['--import', pathToFileURL(probe).href, entry, ...args], dir);
  const lines = run.stderr.split('\n');
  const files = lines.filter((l) => l.startsWith('PROBE-LOADED ')).map((l) => l.slice(13));
  const builtins = lines.find((l) => l.startsWith('PROBE-BUILTINS '))?.slice(15).split(',') ?? [];
  const stderr = lines.filter((l) => !l.startsWith('PROBE-')).join('\n');
  assert.ok(files.length > 0 && builtins.length > 0, `the probe saw the process load: ${explain(run)}`);
  return { run, files, builtins, stderr };
}

const packageOf = (url: string): string | undefined => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];

function assertPlainRun(p: Probed, what: string, bundled: boolean): void {
  assert.equal(p.run.status, 0, explain(p.run));
  assert.equal(p.run.stdout, HELLO_OUT);
  assert.equal(p.stderr.trim(), '', explain(p.run));
  const packages = new Set(p.files.map(packageOf).filter((x) => x !== undefined));
  for (const pkg of NOT_FOR_A_RUN) assert.ok(!packages.has(pkg), `${what} loads ${pkg}: ${[...packages].join(', ')}`);
  // commander's executable subcommands and the C++ compiler need it; a cached run has neither
  // (the bundle loads it into commander on first use; the compiled modules load commander as is)
  if (bundled) assert.ok(!p.builtins.includes('child_process'), `${what} loads child_process`);
}

test('luna run (the bundle) of a cached program loads no report, export or schema package nor child_process, and prints what it did', async () => {
  await inTempDir('luna-startup-bundle-', async (dir) => {
    const first = await probed(dir, LUNA, ['run', HELLO]);
    assert.equal(first.run.status, 0, explain(first.run));
    assert.equal(first.run.stdout, HELLO_OUT);
    assert.ok(first.files.some((f) => packageOf(f) === 'esbuild'), 'the first run bundles the TypeScript ucodes (the probe sees esbuild)');
    const cached = await probed(dir, LUNA, ['run', HELLO]);
    // Node 22+ loads the bundle's ES modules; Node 20 compiles its CommonJS form as a script with a
    // code cache (src/cli/code-cache.ts), which no hook sees, through the module that does that
    const bundle = 'enableCompileCache' in module ? (f: string) => f.includes('/dist/bundle/') : (f: string) => f.endsWith('/dist/src/cli/code-cache.js');
    assert.ok(cached.files.some(bundle), 'bin/luna loads the bundle (built by npm run build)');
    assertPlainRun(cached, 'a cached run', true);
  });
});

test('luna run (the compiled modules) loads no module of the analyses, the report, the exports or the SPMD layer', async () => {
  await inTempDir('luna-startup-modules-', async (dir) => {
    // the same command through dist/src/cli/main.js, one file per module, so names say what loaded
    const entry = join(dir, 'luna-modules.mjs');
    writeFileSync(entry, `import { cli } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', 'cli', 'main.js')).href)};\nprocess.exitCode = await cli(process.argv.slice(2));\n`);
    await probed(dir, entry, ['run', HELLO]);
    const p = await probed(dir, entry, ['run', HELLO]);
    assertPlainRun(p, 'a cached run', false);
    const ours = p.files.map((f) => /\/dist\/src\/(.*)$/.exec(f)?.[1]).filter((x) => x !== undefined);
    assert.ok(ours.includes('cli/run.js') && ours.includes('runtime/run.js'), ours.join(' '));
    const unwanted = ours.filter((f) => /^(analysis|report|spmd|trace\/export|trace\/model)\/|^cli\/(report|analyze|balance|export|trace)/.test(f));
    assert.deepEqual(unwanted, [], 'a run loads none of these');
  });
});
