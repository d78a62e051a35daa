// The code cache of the CLI's CommonJS bundle (src/cli/code-cache.ts): a script compiled with
// the cache of earlier runs behaves as without it, a damaged or foreign cache never fails a run,
// and the file is keyed by the script's content and the flags. Real V8 code caches of a real
// script in a temporary directory; and `bin/luna` itself with NODE_COMPILE_CACHE set.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { cacheDir, CACHE_WRITES, KEPT_KEYS, loadCachedScript, MIN_REWRITE_WORK, MORE_WORK, rewrites, type CachedScriptOptions } from '../../src/cli/code-cache.js';
import { explain, inTempDir, luna, ROOT } from './helpers.js';

/** A CommonJS file with a lazily compiled function, strict-mode behaviour and a dynamic import. */
const SOURCE = `
exports.sum = function sum(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; };
exports.strict = function () { return this === undefined; };
exports.load = (s) => __lunaImport(s);
exports.where = () => [__filename, typeof require('node:path').join];
`;

const options = (dir: string, o: Partial<CachedScriptOptions> = {}): CachedScriptOptions => ({ dir, tag: 'run', flags: '--x', importer: (s) => import(s), ...o });

interface Api { sum(n: number): number; strict(): boolean; load(s: string): Promise<{ join: unknown }>; where(): [string, string] }

/** Loads the script, checks that it works, writes its cache (a run that did `work`); returns the cache state. */
async function loadAndUse(file: string, o: CachedScriptOptions, work?: number): Promise<string> {
  const s = loadCachedScript(file, o);
  const api = s.exports as unknown as Api;
  assert.equal(api.sum(10), 45);
  const detached = api.strict;
  assert.equal(detached(), true, 'the script runs in strict mode');
  assert.equal(typeof (await api.load('node:path')).join, 'function', 'dynamic imports go through the importer');
  assert.deepEqual(api.where(), [file, 'function']);
  s.save(work);
  return s.state;
}

const caches = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cache')) : []);

/** The header's write count and its last writer's work. */
const header = (file: string): { writes: number; work: number } => {
  const b = readFileSync(file);
  return { writes: b.readUInt32LE(8 + 32), work: b.readUInt32LE(8 + 36) };
};

test('a cache made after a run is taken by the next runs, which behave the same; a later run writes it again only after far more work, at most CACHE_WRITES times', async () => {
  await inTempDir('luna-code-cache-', async (tmp) => {
    const file = join(tmp, 'main.cjs'), dir = join(tmp, 'cache');
    writeFileSync(file, SOURCE);
    // the first run writes it, whatever it did (the empty program: one fragment)
    assert.equal(await loadAndUse(file, options(dir), 1), 'none');
    assert.equal(caches(dir).length, 1);
    const cache = join(dir, caches(dir)[0]!);
    assert.deepEqual(header(cache), { writes: 1, work: 1 });
    // runs that did little more are not written: below MIN_REWRITE_WORK, or less than MORE_WORK times the writer's
    for (const work of [0, MORE_WORK * 10, MIN_REWRITE_WORK - 1]) {
      assert.equal(await loadAndUse(file, options(dir), work), 'used');
      assert.deepEqual(header(cache), { writes: 1, work: 1 }, `a run of ${work} fragment(s) leaves it`);
    }
    // far more work: written again, with that run's work
    let work = MIN_REWRITE_WORK;
    assert.equal(await loadAndUse(file, options(dir), work), 'used');
    assert.deepEqual(header(cache), { writes: 2, work });
    assert.equal(await loadAndUse(file, options(dir), MORE_WORK * work - 1), 'used');
    assert.deepEqual(header(cache), { writes: 2, work }, 'not MORE_WORK times the last writer');
    // each further write needs MORE_WORK times the last; after CACHE_WRITES none
    for (let w = 3; w <= CACHE_WRITES + 1; w++) {
      work *= MORE_WORK;
      assert.equal(await loadAndUse(file, options(dir), work), 'used');
      assert.equal(header(cache).writes, Math.min(w, CACHE_WRITES));
    }
    assert.equal(await loadAndUse(file, options(dir), 2 ** 31), 'used');
    assert.equal(header(cache).writes, CACHE_WRITES);
    // the rule alone
    assert.equal(rewrites({ writes: 1, work: 1 }, MIN_REWRITE_WORK), true);
    assert.equal(rewrites({ writes: 1, work: 1 }, MIN_REWRITE_WORK - 1), false);
    assert.equal(rewrites({ writes: 1, work: 5000 }, 19_999), false);
    assert.equal(rewrites({ writes: 1, work: 5000 }, 20_000), true);
    assert.equal(rewrites({ writes: CACHE_WRITES, work: 0 }, 1e9), false);
  });
});

test('a corrupt, truncated or foreign cache file is ignored and replaced; the script runs all the same', async () => {
  await inTempDir('luna-code-cache-bad-', async (tmp) => {
    const file = join(tmp, 'main.cjs'), dir = join(tmp, 'cache');
    writeFileSync(file, SOURCE);
    await loadAndUse(file, options(dir));
    const cache = join(dir, caches(dir)[0]!);
    const good = readFileSync(cache);
    // one payload byte flipped: the file's own hash no longer matches
    const flipped = Buffer.from(good);
    flipped[flipped.length - 7]! ^= 0xff;
    writeFileSync(cache, flipped);
    assert.equal(await loadAndUse(file, options(dir)), 'none');
    assert.notDeepEqual(readFileSync(cache), flipped, 'rewritten');
    assert.equal(await loadAndUse(file, options(dir)), 'used', 'the rewritten cache is taken');
    for (const bad of [good.subarray(0, 20), Buffer.alloc(0), Buffer.from('not a cache at all, but long enough to have a header of 48 bytes')]) {
      writeFileSync(cache, bad);
      assert.equal(await loadAndUse(file, options(dir)), 'none');
    }
    // a well-formed file whose data V8 refuses (not a code cache): refused, then replaced. The
    // same content under another path, so that V8's in-memory cache of this process (which
    // compiled the script above) is not consulted instead.
    const junk = Buffer.from(good);
    junk.fill(7, 48);
    const { createHash } = await import('node:crypto');
    createHash('sha256').update(junk.subarray(48)).digest().copy(junk, 8);
    writeFileSync(cache, junk);
    mkdirSync(join(tmp, 'elsewhere'));
    const other = join(tmp, 'elsewhere', 'main.cjs');
    writeFileSync(other, SOURCE);
    assert.equal(await loadAndUse(other, options(dir)), 'rejected');
    assert.equal(await loadAndUse(other, options(dir)), 'used');
  });
});

test("the cache's file is keyed by the script's content and the flags; the newest few builds' caches are kept", async () => {
  await inTempDir('luna-code-cache-key-', async (tmp) => {
    const file = join(tmp, 'main.cjs'), dir = join(tmp, 'cache');
    writeFileSync(file, SOURCE);
    await loadAndUse(file, options(dir));
    const first = caches(dir);
    await loadAndUse(file, options(dir, { flags: '--y' }));
    assert.equal(caches(dir).length, 2, 'other flags: another key, beside the first');
    assert.ok(caches(dir).includes(first[0]!));
    // the same length, other content: V8 alone would take the old cache (it checks the length)
    writeFileSync(file, SOURCE.replace('s += i', 's -= i'));
    const s = loadCachedScript(file, options(dir, { flags: '--y' }));
    assert.equal(s.state, 'none');
    assert.equal((s.exports as unknown as Api).sum(10), -45);
    assert.equal(caches(dir).length, 2, 'not yet written');
    s.save();
    assert.equal(caches(dir).length, 3);
    // the newest KEPT_KEYS stay: older builds' files go
    for (let i = 0; i < KEPT_KEYS; i++) {
      writeFileSync(file, `${SOURCE}// build ${i}\n`);
      await new Promise((r) => setTimeout(r, 20));
      await loadAndUse(file, options(dir));
    }
    assert.equal(caches(dir).length, KEPT_KEYS);
    assert.ok(!caches(dir).includes(first[0]!), 'the oldest went');
    // another command: a file of its own beside
    writeFileSync(file, SOURCE);
    await loadAndUse(file, options(dir, { tag: 'check' }));
    assert.equal(caches(dir).filter((f) => f.includes('-check-')).length, 1);
    assert.equal(caches(dir).filter((f) => f.includes('-run-')).length, KEPT_KEYS);
  });
});

test('no directory: no cache; a directory that cannot be written fails nothing', async () => {
  await inTempDir('luna-code-cache-off-', async (tmp) => {
    const file = join(tmp, 'main.cjs');
    writeFileSync(file, SOURCE);
    assert.equal(await loadAndUse(file, options(tmp, { dir: undefined })), 'off');
    assert.deepEqual(caches(tmp), []);
    // a plain file where the directory should be
    writeFileSync(join(tmp, 'blocked'), '');
    assert.equal(await loadAndUse(file, options(join(tmp, 'blocked', 'cache'))), 'none');
    assert.equal(cacheDir({ NODE_DISABLE_COMPILE_CACHE: '1' }), undefined);
    assert.equal(cacheDir({ NODE_COMPILE_CACHE: tmp }), join(tmp, 'luna'));
  });
});

test('bin/luna on Node 20 keeps a code cache of `run` where NODE_COMPILE_CACHE says; its runs print the same', async () => {
  await inTempDir('luna-code-cache-cli-', async (tmp) => {
    const hello = join(ROOT, 'examples', 'hello', 'hello.fa');
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: join(tmp, 'ncc') };
    delete env.NODE_DISABLE_COMPILE_CACHE;
    mkdirSync(join(tmp, 'work'));
    const runs = [];
    for (let i = 0; i < 2; i++) runs.push(await luna(['run', hello], join(tmp, 'work'), 60_000, env));
    for (const r of runs) assert.equal(r.status, 0, explain(r));
    assert.equal(runs[1]!.stdout, runs[0]!.stdout);
    assert.match(runs[0]!.stdout, /Hello, world!/);
    const files = caches(join(tmp, 'ncc', 'luna'));
    // Node 22+ caches the ES modules itself: luna's own cache is for Node versions without that
    if ('enableCompileCache' in module) assert.deepEqual(files, []);
    else assert.deepEqual(files.map((f) => f.replace(/-[0-9a-f]+\.cache$/, '')), ['main.cjs-run']);
  });
});
