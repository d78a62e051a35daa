// The end of a run: the program's span ends when the run is over, not after its tear-down (the
// listeners removed, the turn that waits for a late rejection); the end's path run before the
// program starts ends nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Control } from '../../src/runtime/cluster/control.js';
import type { Participant } from '../../src/runtime/cluster/layer.js';
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { Router } from '../../src/runtime/transport/router.js';
import { wallNs } from '../../src/trace/clock.js';
import { loadProgram, runSingleNode } from '../../src/index.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..', '..', '..');

/** A participant with nothing to do and nothing live: the node is done as soon as it wakes the protocol. */
const done: Participant = { name: 'done', idle: () => true, live: () => 0, waits: () => [], hangSummary: (n) => `${n}` };

test("warming the end's path calls the node's idle call and ends nothing; the real wake then ends the run", async () => {
  const control = new Control(new Router(new MemoryMesh(1).endpoints[0]!), wallNs);
  control.register(done);
  let settled = false;
  void control.done.then(() => { settled = true; });
  let calls = 0;
  control.warmEnd(() => { calls++; control.wake(); });
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, 1);
  assert.equal(control.finished, false, 'the warm-up ended the run');
  assert.equal(settled, false, 'the warm-up settled the run');
  control.wake();
  assert.deepEqual(await control.done, { ok: true });
});

test("the program's span ends before the run's tear-down", async () => {
  const cache = mkdtempSync(join(tmpdir(), 'luna-run-end-'));
  const loaded = await loadProgram(join(ROOT, 'examples', 'hello', 'hello.fa'), { cacheDir: cache });
  assert.ok(loaded.program, loaded.text);
  // the run listens for an interrupt from its start and stops listening in its tear-down: the
  // removal here takes STALL_MS, which a span ending after the tear-down would count
  const STALL_MS = 50;
  const signal = new AbortController().signal;
  let listened = -1, removed = -1;
  const add = signal.addEventListener.bind(signal), remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...a: Parameters<typeof add>) => { listened = wallNs(); add(...a); }) as typeof add;
  signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
    const until = performance.now() + STALL_MS;
    while (performance.now() < until);
    removed = wallNs();
    remove(...a);
  }) as typeof remove;
  const r = await runSingleNode({ program: loaded.program, bundle: loaded.bundle, args: [], threads: 1, interrupt: signal }).finally(() => rmSync(cache, { recursive: true, force: true }));
  assert.equal(r.ok, true, r.message);
  assert.ok(listened >= 0 && removed >= 0, 'the run listened for an interrupt and stopped');
  // (the span starts just after the run listens, and ends before the stalled removal)
  assert.ok(r.wallNs < removed - listened, `span ${r.wallNs / 1e6} ms, listened → tear-down done ${(removed - listened) / 1e6} ms`);
});
