// The code cache of the CLI's CommonJS bundle (src/cli/code-cache.ts): a script compiled with
// the cache of earlier runs behaves as without it, a damaged or foreign cache never fails a run,
// and the file is keyed by the script's content and the flags. Real V8 code caches of a real
// script in a temporary directory; and `bin/luna` itself with NODE_COMPILE_CACHE set.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { cacheDir, CACHE_WRITES, KEPT_KEYS, loadCachedScript, type CachedScriptOptions } from '../../src/cli/code-cache.js';
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

/** Loads the script, checks that it works, writes its cache; returns the cache state. */
async function loadAndUse(file: string, o: CachedScriptOptions): Promise<string> {
  const s = loadCachedScript(file, o);
  const api = s.exports as unknown as Api;
  assert.equal(api.sum(10), 45);
  const detached = api.strict;
  assert.equal(detached(), true, 'the script runs in strict mode');
  assert.equal(typeof (await api.load('node:path')).join, 'function', 'dynamic imports go through the importer');
  assert.deepEqual(api.where(), [file, 'function']);
  s.save();
  return s.state;
}

const caches = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cache')) : []);

test('a cache made after a run is taken by the next runs, which behave the same; only the first CACHE_WRITES runs write it', async () => {
  await inTempDir('luna-code-cache-', async (tmp) => {
    const file = join(tmp, 'main.cjs'), dir = join(tmp, 'cache');
    writeFileSync(file, SOURCE);
    assert.equal(await loadAndUse(file, options(dir)), 'none');
    assert.equal(caches(dir).length, 1);
    const states: string[] = [];
    for (let i = 0; i < CACHE_WRITES + 1; i++) states.push(await loadAndUse(file, options(dir)));
    assert.deepEqual(states, Array(CACHE_WRITES + 1).fill('used'));
    // the write count is in the header: after CACHE_WRITES runs the file is no longer written
    const written = readFileSync(join(dir, caches(dir)[0]!));
    assert.equal(written.readUInt32LE(8 + 32), CACHE_WRITES);
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
    for (const bad of [good.subarray(0, 20), Buffer.alloc(0), Buffer.from('not a cache at all, but long enough to have a header of 44 bytes')]) {
      writeFileSync(cache, bad);
      assert.equal(await loadAndUse(file, options(dir)), 'none');
    }
    // a well-formed file whose data V8 refuses (not a code cache): refused, then replaced. The
    // same content under another path, so that V8's in-memory cache of this process (which
    // compiled the script above) is not consulted instead.
    const junk = Buffer.from(good);
    junk.fill(7, 44);
    const { createHash } = await import('node:crypto');
    createHash('sha256').update(junk.subarray(44)).digest().copy(junk, 8);
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
