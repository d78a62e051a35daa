// The C++ compiler's default flags: a C++ ucode is there for its numeric kernel, so without
// --cxxflags or LUNA_CXXFLAGS the inner loop of a kernel whose trip count is known only at run
// time (matmul-cpp's block_mul) is vectorised; the option and the variable still win.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cxxFlags, findCompiler } from '../../src/ucode/cpp/compiler.js';
import { noCompiler } from './fixtures.js';

const skip = noCompiler();

/** z += x * y over bs × bs blocks, i-k-j: the inner loop's trip count is bs. */
const KERNEL = `extern "C" void block_mul(int bs, const double *__restrict x, const double *__restrict y, double *__restrict z) {
  for (int i = 0; i < bs; i++)
    for (int k = 0; k < bs; k++) {
      const double xik = x[(long)i * bs + k];
      for (int j = 0; j < bs; j++) z[(long)i * bs + j] += xik * y[(long)k * bs + j];
    }
}
`;

/** Whether `flags` vectorise KERNEL's inner loop: a packed double multiply in its assembly. */
function vectorised(flags: string[]): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'luna-cxxflags-'));
  try {
    writeFileSync(join(dir, 'k.cpp'), KERNEL);
    const c = findCompiler();
    const r = spawnSync(c.argv[0]!, [...c.argv.slice(1), '-std=gnu++17', '-fPIC', ...flags, '-S', '-o', '-', join(dir, 'k.cpp')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return /\b(v?mulpd|vfmadd\d+pd)\b/.test(r.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('without --cxxflags or LUNA_CXXFLAGS, a C++ kernel\'s inner loop is vectorised', { skip }, () => {
  const saved = process.env.LUNA_CXXFLAGS;
  delete process.env.LUNA_CXXFLAGS;
  try {
    assert.ok(vectorised(cxxFlags()), `the default flags ${cxxFlags().join(' ')} leave block_mul's inner loop scalar`);
    // the option wins over the variable, the variable over the default
    process.env.LUNA_CXXFLAGS = '-O1 -DX';
    assert.deepEqual(cxxFlags(), ['-O1', '-DX']);
    assert.deepEqual(cxxFlags('-O0'), ['-O0']);
    assert.ok(!vectorised(cxxFlags()), 'at -O1 the loop stays scalar (the check can tell)');
  } finally {
    if (saved === undefined) delete process.env.LUNA_CXXFLAGS;
    else process.env.LUNA_CXXFLAGS = saved;
  }
});
