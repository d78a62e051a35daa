// A large trace's export re-executes `luna` with the export's young generation: when it does
// (the rules, in milliseconds), and that the command run again writes what the command run once
// writes, exits as it does and says its summary once (through the real bin/luna); standard
// output, a non-blocking pipe, gets every byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EXPORT_HEAP_MIN_BYTES, EXPORT_SEMI_SPACE_MB, exportHeapArgs } from '../../src/cli/export-heap.js';
import { generatedTrace, tempDir } from '../trace/helpers.js';

const LUNA = resolve('bin/luna');
const FLAGS = ['--max-semi-space-size=2', '--max-inlined-bytecode-size-cumulative=230'];

test('the export re-executes with its young generation only when asked (or on by default for a large enough trace), for the luna command, and not twice', (t) => {
  const small = generatedTrace(t, 2000, 3);
  const argv = ['node', LUNA, 'export', 'perfetto', small, '-o', 'x.pftrace'];
  const bytes = readdirSync(small).reduce((a, f) => a + statSync(join(small, f)).size, 0);
  assert.ok(bytes < EXPORT_HEAP_MIN_BYTES);
  // unset: only when on by default, and then not for a small trace; LUNA_EXPORT_HEAP=1 forces it, 0 forbids it
  assert.equal(exportHeapArgs(small, {}, FLAGS, argv, false), undefined);
  assert.equal(exportHeapArgs(small, {}, FLAGS, argv, true), undefined);
  assert.equal(exportHeapArgs(small, { LUNA_EXPORT_HEAP: '0' }, FLAGS, argv, true), undefined);
  const again = exportHeapArgs(small, { LUNA_EXPORT_HEAP: '1' }, FLAGS, argv);
  assert.deepEqual(again, ['--max-inlined-bytecode-size-cumulative=230', `--max-semi-space-size=${EXPORT_SEMI_SPACE_MB}`, LUNA, 'export', 'perfetto', small, '-o', 'x.pftrace']);
  assert.equal(exportHeapArgs(small, { LUNA_EXPORT_HEAP: '0' }, FLAGS, argv), undefined);
  // the re-executed command (its semi-space already the export's) goes on
  assert.equal(exportHeapArgs(small, { LUNA_EXPORT_HEAP: '1' }, again!.slice(0, 2), argv), undefined);
  // a library caller or a test running cli() in its own process is never re-executed
  assert.equal(exportHeapArgs(small, { LUNA_EXPORT_HEAP: '1' }, FLAGS, ['node', resolve('dist/test/cli/export-heap.test.js')]), undefined);
});

test('luna export run again in a node with the export\'s young generation writes the same files, exit codes and summary', (t) => {
  const trace = generatedTrace(t, 30_000, 4);
  const out = tempDir(t);
  const run = (heap: string, args: string[]) => spawnSync(LUNA, ['export', ...args], { encoding: 'utf8', env: { ...process.env, LUNA_EXPORT_HEAP: heap } });
  const a = run('1', ['perfetto', trace, '-o', join(out, 'a.pftrace')]);
  const b = run('0', ['perfetto', trace, '-o', join(out, 'b.pftrace')]);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.status, 0, b.stderr);
  assert.ok(readFileSync(join(out, 'a.pftrace')).equals(readFileSync(join(out, 'b.pftrace'))));
  assert.equal(a.stderr.replace('a.pftrace', 'b.pftrace'), b.stderr);
  assert.equal(a.stderr.split('\n').filter((l) => l.startsWith('luna: wrote')).length, 1, a.stderr);
  // standard output, a pipe (made non-blocking): every byte of the file, in one process or two
  for (const heap of ['0', '1']) {
    const piped = spawnSync(LUNA, ['export', 'perfetto', trace, '-o', '-'], { env: { ...process.env, LUNA_EXPORT_HEAP: heap }, maxBuffer: 1 << 28 });
    assert.equal(piped.status, 0);
    assert.equal(piped.stdout.length, statSync(join(out, 'b.pftrace')).size, `LUNA_EXPORT_HEAP=${heap}`);
    assert.ok(piped.stdout.equals(readFileSync(join(out, 'b.pftrace'))));
  }
  const json = spawnSync(LUNA, ['export', 'perfetto', trace, '--format', 'json', '-o', '-'], { env: { ...process.env, LUNA_EXPORT_HEAP: '0' }, maxBuffer: 1 << 28 });
  assert.equal(json.status, 0);
  run('0', ['perfetto', trace, '-o', join(out, 'e.json')]);
  assert.ok(json.stdout.equals(readFileSync(join(out, 'e.json'))), 'the JSON through a pipe is the file');
  // a damaged trace: exit 3 and the damage said, as in one process
  const f = readdirSync(trace).filter((n) => n.endsWith('.lt')).sort()[1]!;
  truncateSync(join(trace, f), statSync(join(trace, f)).size - 5);
  const c = run('1', ['perfetto', trace, '-o', join(out, 'c.pftrace')]);
  const d = run('0', ['perfetto', trace, '-o', join(out, 'd.pftrace')]);
  assert.equal(d.status, 3, d.stderr);
  assert.equal(c.status, 3, c.stderr);
  assert.equal(c.stderr.replace('c.pftrace', 'd.pftrace'), d.stderr);
  // an error of the export itself (OTF2 into a file): said once, exit 1
  writeFileSync(join(out, 'file'), '');
  const e = run('1', ['otf2', trace, '-o', join(out, 'file')]);
  assert.equal(e.status, 1, e.stderr);
  assert.equal(e.stderr.split('\n').filter((l) => l.startsWith('luna: error')).length, 1, e.stderr);
});
