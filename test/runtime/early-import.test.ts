// Workers booted before their pool exists (a program marked heavy boots them while it compiles)
// import the program's ucode module on their own, before any lane is given them: real threads,
// no pool, so only the early import can have loaded it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootEarly } from '../../src/runtime/exec/pool.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('workers booted early import the ucode module they are given without waiting for their lane', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-early-'));
  try {
    const mod = join(dir, 'ucodes.mjs');
    // each thread that evaluates the module leaves a file named by its thread id
    writeFileSync(mod, `import { writeFileSync } from 'node:fs';\nimport { threadId } from 'node:worker_threads';\nwriteFileSync(${JSON.stringify(join(dir, 'imported-'))} + threadId, '');\nexport function c_work() {}\n`);
    const imported = (): string[] => readdirSync(dir).filter((f) => f.startsWith('imported-'));
    bootEarly(2, 2, 2, mod);
    for (const t0 = Date.now(); imported().length < 2 && Date.now() - t0 < 60_000;) await sleep(10);
    assert.equal(imported().length, 2, `both workers evaluated the module: ${imported().join(', ')}`);
    assert.ok(!imported().includes('imported-0'), 'not this thread');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
