// A worker's trace buffer lent to the system thread (writer.ts lend / reclaim, spillSharedTrace):
// what the system thread spills between a worker's records lands in order with the worker's own
// flushes; a buffer salvaged for good (the run ended while its worker was in a ucode) keeps
// what was recorded before, drops what comes after, and its writer lets its file go.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readThreadFile } from '../../src/trace/reader.js';
import { sharedTraceBuffer, spillSharedTrace, ThreadTraceWriter } from '../../src/trace/writer.js';
import { traceFileName } from '../../src/trace/index.js';
import { tempDir } from './helpers.js';

/** A worker's writer as the pool makes it: the file prepared (its header), then appended to. */
function lentWriter(dir: string): { w: ThreadTraceWriter; buf: SharedArrayBuffer; path: string } {
  ThreadTraceWriter.prepare(dir, 0, 1);
  const buf = sharedTraceBuffer(8192);
  const w = ThreadTraceWriter.open(dir, 0, 1, { prepared: true, shared: buf });
  return { w, buf, path: join(dir, traceFileName(0, 1)) };
}

const starts = (path: string): number[] => [...readThreadFile(path).events].filter((e) => e.kind === 'cfStart').map((e) => (e as { cf: number }).cf);
const openFds = (): number => readdirSync('/proc/self/fd').length;

test('records spilled by the system thread while lent and those the writer flushes itself read back in order', (t) => {
  const { w, buf, path } = lentWriter(tempDir(t));
  let cf = 0;
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 20; i++, cf++) w.cfStart(1000 + cf, 0, cf, 1); // past the 8 KiB: the writer flushes itself too
    w.lend();
    if (round % 3 !== 2) assert.ok(spillSharedTrace(buf, path) > 0, 'a lent buffer with records is spilled');
    assert.equal(w.reclaim(), true);
  }
  w.close();
  assert.deepEqual(starts(path), Array.from({ length: cf }, (_, i) => i));
});

test('a buffer salvaged for good keeps what came before, drops what comes after, and its writer closes its file', (t) => {
  const before = openFds();
  const { w, buf, path } = lentWriter(tempDir(t));
  assert.equal(openFds(), before + 1, 'the writer holds its file');
  for (let cf = 0; cf < 5; cf++) w.cfStart(1000 + cf, 0, cf, 1);
  w.lend(); // into a ucode that never returns
  assert.ok(spillSharedTrace(buf, path, true) > 0, 'the final salvage writes what was lent');
  assert.equal(spillSharedTrace(buf, path), 0, 'nothing is spilled after it');
  assert.equal(w.reclaim(), false, 'the writer learns it was salvaged');
  assert.equal(openFds(), before, 'and lets its file go');
  w.cfStart(2000, 0, 99, 1);
  w.close();
  assert.deepEqual(starts(path), [0, 1, 2, 3, 4]);
});
