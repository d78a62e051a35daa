// The compiled-program cache (src/program/front-cache.ts): a second front end of the same
// sources and options is read back, equal to the compiled one, warnings included; an edited
// include, an include that now resolves elsewhere, another -D or other ucode names compile
// afresh; a damaged entry is compiled and written again; a program with errors is never kept.
// And `luna run` with it: the second run reads it and prints the same; --no-cache and
// LUNA_PROGRAM_CACHE=off neither read nor write it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { originOf, renderDiagnostics, type FrontEndOptions } from '../../src/lang/index.js';
import { cachedFrontEnd, KEPT_PROGRAMS, prune } from '../../src/program/front-cache.js';
import { compileProgram } from '../../src/program/compile.js';
import { explain, inTempDir, luna, ROOT } from '../cli/helpers.js';

const MAIN = `#include "defs.fah"
import c_init(int \`v, name \`x) as init;
import c_show(value \`x) as show;
sub main()
{
    df a, b, a;
    init($K, a);
    for i = 1..$N
        cf b[i]: init(i * $K, b[i]);
    show(a);
}
`;

/** The include: K, and N unless -D sets it. */
const defs = (n: number): string => `#define K 7\n#ifndef N\n#define N ${n}\n#endif\n`;

/** The program (MAIN, or `main`) and its include in `tmp`; the cache's directory beside them. */
function program(tmp: string, main = MAIN): { dir: string; file: string } {
  const file = join(tmp, 'main.fa');
  writeFileSync(file, main);
  writeFileSync(join(tmp, 'defs.fah'), defs(3));
  return { dir: join(tmp, 'cache'), file };
}

const entries = (dir: string): string[] => { try { return readdirSync(dir).filter((f) => f.endsWith('.fe')); } catch { return []; } };

/** The front end twice: compiled (no cache) and through the cache; both must agree. */
function both(file: string, o: FrontEndOptions, dir: string) {
  const plain = cachedFrontEnd(file, o, undefined);
  const cached = cachedFrontEnd(file, o, dir);
  assert.equal(plain.cache, 'off');
  assert.deepEqual(cached.fe.program, plain.fe.program);
  assert.deepEqual(cached.fe.diagnostics, plain.fe.diagnostics);
  assert.equal(renderDiagnostics(cached.fe.diagnostics, cached.fe.pre), renderDiagnostics(plain.fe.diagnostics, plain.fe.pre));
  return { plain: plain.fe, cached: cached.fe, cache: cached.cache };
}

test('a second front end is read from the cache: the same tree, diagnostics, origins and sites', async () => {
  await inTempDir('luna-fe-cache-', async (tmp) => {
    const { dir, file } = program(tmp);
    const o = { defines: { X: '1' } };
    assert.equal(both(file, o, dir).cache, 'miss');
    assert.equal(entries(dir).length, 1);
    const { plain, cached, cache } = both(file, o, dir);
    assert.equal(cache, 'hit');
    // the duplicate df's warning is replayed, at its place
    assert.deepEqual(cached.diagnostics.map((d) => [d.code, d.origin?.line, d.origin?.col]), [['LUNA-W002', 6, 14]]);
    assert.equal(cached.pre.text, plain.pre.text);
    assert.deepEqual(cached.pre.files, plain.pre.files);
    // every position of the preprocessed text maps to the same origin
    for (let pos = 0; pos <= plain.pre.text.length; pos++) assert.deepEqual(originOf(cached.pre, pos), originOf(plain.pre, pos));
    const sites = (fe: typeof plain) => compileProgram(fe.program!, (p) => originOf(fe.pre, p)).sites.map((s) => [s.kind, s.label, s.origin]);
    assert.deepEqual(sites(cached), sites(plain));
  });
});

test('a valid entry says whether its program marks a CF heavy, before its tree is read back; a miss leaves that to the caller', async () => {
  await inTempDir('luna-fe-cache-', async (tmp) => {
    const heavy = MAIN.replace('cf b[i]: init(i * $K, b[i]);', 'cf b[i]: init(i * $K, b[i]) @ { heavy; };');
    assert.notEqual(heavy, MAIN);
    const { dir, file } = program(tmp, heavy);
    let said = 0;
    assert.equal(cachedFrontEnd(file, {}, dir, () => said++).cache, 'miss');
    assert.equal(said, 0);
    assert.equal(cachedFrontEnd(file, {}, dir, () => said++).cache, 'hit');
    assert.equal(said, 1);
    writeFileSync(file, MAIN);
    assert.equal(cachedFrontEnd(file, {}, dir, () => said++).cache, 'stale');
    assert.equal(cachedFrontEnd(file, {}, dir, () => said++).cache, 'hit');
    assert.equal(said, 1, 'the unmarked program says nothing');
  });
});

test('an edited include, an include found elsewhere now, another -D or other ucode names compile afresh', async () => {
  await inTempDir('luna-fe-cache-stale-', async (tmp) => {
    const { dir, file } = program(tmp);
    const first = join(tmp, 'first');
    mkdirSync(first);
    // the include path is searched before the including file's directory
    const o: FrontEndOptions = { includePath: [first] };
    const loops = (fe: ReturnType<typeof both>['cached']): string => JSON.stringify(fe.program!.items.filter((it) => it.kind === 'sub'));
    assert.equal(both(file, o, dir).cache, 'miss');
    assert.equal(both(file, o, dir).cache, 'hit');
    writeFileSync(join(tmp, 'defs.fah'), defs(4));
    const edited = both(file, o, dir);
    assert.equal(edited.cache, 'stale');
    assert.match(loops(edited.cached), /"value":4/);
    assert.equal(both(file, o, dir).cache, 'hit');
    // a directory where the include was looked for first and not found: the preprocessor refuses it
    mkdirSync(join(first, 'defs.fah'));
    const refused = both(file, o, dir);
    assert.equal(refused.cache, 'stale');
    assert.ok(refused.cached.diagnostics.some((x) => x.code === 'LUNA-P010'));
    rmSync(join(first, 'defs.fah'), { recursive: true });
    // the same name, now in a directory searched first
    writeFileSync(join(first, 'defs.fah'), defs(5));
    const shadowed = both(file, o, dir);
    assert.equal(shadowed.cache, 'stale');
    assert.match(loops(shadowed.cached), /"value":5/);
    // another -D: another entry, which the first does not answer
    const d = both(file, { ...o, defines: { N: '9' } }, dir);
    assert.equal(d.cache, 'miss');
    assert.match(loops(d.cached), /"value":9/);
    assert.equal(both(file, { ...o, defines: { N: '9' } }, dir).cache, 'hit');
    // other ucode names decide which missing-implementation diagnostics there are
    const missing = both(file, { ...o, ucodeExports: new Set(['c_init']) }, dir);
    assert.equal(missing.cache, 'miss');
    assert.ok(missing.cached.diagnostics.some((x) => x.code === 'LUNA-E015'));
    const named = both(file, { ...o, ucodeExports: new Set(['c_init', 'c_show']) }, dir);
    assert.equal(named.cache, 'miss');
    assert.equal(both(file, o, dir).cache, 'hit');
    assert.equal(entries(dir).length, 3);
  });
});

test('a damaged entry is compiled and written again, never an error', async () => {
  await inTempDir('luna-fe-cache-corrupt-', async (tmp) => {
    const { dir, file } = program(tmp);
    both(file, {}, dir);
    const entry = join(dir, entries(dir)[0]!);
    const good = readFileSync(entry);
    const damaged: [string, Buffer][] = [
      ['a flipped byte in the tree', Buffer.from(good.map((x, i) => (i === good.length - 100 ? x ^ 0xff : x)))],
      ['cut short', good.subarray(0, good.length >> 1)],
      ['empty', Buffer.alloc(0)],
      ['another format', Buffer.concat([Buffer.from('LUNAFE99'), good.subarray(8)])],
      ['a header that is not JSON', Buffer.concat([good.subarray(0, 12), Buffer.from('{{{{'), good.subarray(16)])],
      ['a path changed in the header', Buffer.from(good.toString('latin1').replace('defs.fah', 'defs.fax'), 'latin1')],
    ];
    for (const [what, bytes] of damaged) {
      writeFileSync(entry, bytes);
      assert.equal(both(file, {}, dir).cache, 'corrupt', what);
      assert.deepEqual(readFileSync(entry), good, `${what}: written again`);
      assert.equal(both(file, {}, dir).cache, 'hit', what);
    }
  });
});

test('a program with errors is never kept; its diagnostics are the same every time', async () => {
  await inTempDir('luna-fe-cache-errors-', async (tmp) => {
    const { dir, file } = program(tmp, MAIN.replace('show(a);', 'show(a, zz);'));
    for (let i = 0; i < 2; i++) {
      const r = both(file, {}, dir);
      assert.equal(r.cache, 'miss');
      assert.equal(r.cached.program, null);
      assert.ok(r.cached.diagnostics.some((d) => d.severity === 'error'));
      assert.deepEqual(entries(dir), []);
    }
  });
});

test('a tree deeper than the serializer recurses, or with a number JSON does not keep, is not kept, and compiles as without the cache', async () => {
  await inTempDir('luna-fe-cache-deep-', async (tmp) => {
    const dir = join(tmp, 'cache');
    const file = join(tmp, 'main.fa');
    // a flat chain is a left-deep tree: the parser and the compiler take any length
    const chain = `import c_show(string, int) as show;\nsub main(int n) {\n  show("sum", 0${' + 1'.repeat(30_000)});\n}\n`;
    // a real literal past the largest double is Infinity, which JSON would turn into null
    const infinite = `import c_show(real) as show;\nsub main() {\n  show(1${'0'.repeat(400)}.0);\n}\n`;
    for (let i = 0; i < 4; i++) {
      writeFileSync(file, i < 2 ? chain : infinite);
      const r = cachedFrontEnd(file, {}, dir);
      assert.equal(r.cache, 'miss');
      assert.ok(r.fe.program);
      assert.deepEqual(r.fe.diagnostics, []);
      assert.deepEqual(entries(dir), []);
    }
  });
});

test('the cache keeps the most recently used entries', async () => {
  await inTempDir('luna-fe-cache-prune-', async (tmp) => {
    const dir = join(tmp, 'cache');
    mkdirSync(dir);
    for (let i = 0; i < KEPT_PROGRAMS + 3; i++) {
      writeFileSync(join(dir, `${i}.fe`), 'x');
      utimesSync(join(dir, `${i}.fe`), i + 1000, i + 1000);
    }
    prune(dir);
    assert.deepEqual(entries(dir).map((f) => Number.parseInt(f)).sort((a, b) => a - b), Array.from({ length: KEPT_PROGRAMS }, (_, i) => i + 3));
  });
});

test('luna run: the second run reads the cache and prints the same; --no-cache and LUNA_PROGRAM_CACHE=off keep none', async () => {
  await inTempDir('luna-fe-cache-cli-', async (tmp) => {
    const work = join(tmp, 'work');
    mkdirSync(work);
    const hello = readFileSync(join(ROOT, 'examples', 'hello', 'hello.fa'), 'utf8');
    writeFileSync(join(work, 'hello.fa'), hello.replace('df a, b, s, g, sq;', 'df a, b, s, g, sq, a;'));
    writeFileSync(join(work, 'ucodes.ts'), readFileSync(join(ROOT, 'examples', 'hello', 'ucodes.ts')));
    const env = (more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
      const e: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: join(tmp, 'ncc') };
      delete e.LUNA_PROGRAM_CACHE;
      return { ...e, ...more };
    };
    const programs = join(tmp, 'ncc', 'luna', 'programs');
    const state = (r: { stderr: string }): string | undefined => /"programCache":"(\w+)"/.exec(r.stderr)?.[1];
    const runs = [];
    for (let i = 0; i < 2; i++) runs.push(await luna(['run', '--timing', 'hello.fa'], work, 60_000, env()));
    for (const r of runs) assert.equal(r.status, 0, explain(r));
    assert.deepEqual(runs.map(state), ['miss', 'hit']);
    assert.equal(runs[1]!.stdout, runs[0]!.stdout);
    assert.match(runs[0]!.stdout, /hello: OK/);
    // the warning, as compiled and as read back
    const warning = (r: { stderr: string }): string => r.stderr.replace(/luna: timing: .*\n?/, '');
    assert.match(warning(runs[0]!), /warning\[LUNA-W002\]: duplicate declaration of df 'a'/);
    assert.equal(warning(runs[1]!), warning(runs[0]!));
    assert.equal(entries(programs).length, 1);
    const off = join(tmp, 'off');
    for (const [args, more] of [[['--no-cache'], {}], [[], { LUNA_PROGRAM_CACHE: 'off' }]] as const) {
      const r = await luna(['run', '--timing', ...args, 'hello.fa'], work, 60_000, env({ NODE_COMPILE_CACHE: off, ...more }));
      assert.equal(r.status, 0, explain(r));
      assert.equal(state(r), 'off');
      assert.equal(r.stdout, runs[0]!.stdout);
      assert.deepEqual(entries(join(off, 'luna', 'programs')), []);
    }
    const bad = await luna(['run', 'hello.fa'], work, 60_000, env({ LUNA_PROGRAM_CACHE: 'sometimes' }));
    assert.equal(bad.status, 2, explain(bad));
    assert.match(bad.stderr, /LUNA_PROGRAM_CACHE must be on or off, got "sometimes"/);
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
  });
});
