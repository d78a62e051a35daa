// Bundled ucode modules keep their top-level `const` (V8 folds them into optimized code), and
// nothing changes where restoring one would change the program.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { bundleUcodes } from '../../src/ucode/bundle.js';
import { restoreConsts, topLevelConsts } from '../../src/ucode/constants.js';

test('a bundle keeps the top-level const of its sources, across imported modules', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-const-'));
  try {
    writeFileSync(join(dir, 'kernel.ts'), 'const TABLE = new Float64Array(64);\nlet counter = 0;\nexport function k(n: number): number { counter++; return TABLE.length * n + counter; }\n');
    writeFileSync(join(dir, 'ucodes.ts'), "import { k } from './kernel.js';\nexport const SCALE: number = 2;\nexport function c_run(n: number): number { return k(n) * SCALE; }\n");
    const b = await bundleUcodes([join(dir, 'ucodes.ts')], join(dir, 'cache'));
    const code = readFileSync(b.file!, 'utf8');
    assert.match(code, /^const TABLE = new Float64Array\(64\);$/m);
    assert.match(code, /^const SCALE = 2;$/m);
    assert.match(code, /^var counter = 0;$/m, 'a let stays as esbuild wrote it');
    const mod = (await import(b.file!)) as { c_run(n: number): number };
    assert.equal(mod.c_run(3), (64 * 3 + 1) * 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a restored name that the bundle assigns stays var; a syntax problem leaves the bundle unchanged', async () => {
  const code = 'var A = 1;\nvar B = 2;\nfunction f() { B = 3; }\nexport { A, f };\n';
  const out = await restoreConsts(code, new Set(['A', 'B']));
  assert.equal(out, 'const A = 1;\nvar B = 2;\nfunction f() { B = 3; }\nexport { A, f };\n');
  const twice = 'var A = 1;\nvar A = 2;\nexport { A };\n';
  assert.equal(await restoreConsts(twice, new Set(['A'])), twice);
});

test('top-level const names are read from the sources, typed or exported, not from inner scopes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-const-'));
  try {
    const f = join(dir, 'm.ts');
    writeFileSync(f, 'export const A: number[] = [];\nconst B = 1;\nfunction g() {\n  const C = 2;\n  return C;\n}\nlet D = 0;\n');
    assert.deepEqual([...topLevelConsts([f, join(dir, 'missing.ts')])].sort(), ['A', 'B']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
