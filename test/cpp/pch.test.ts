// The precompiled ucenv.h (src/ucode/cpp/pch.ts): noted by the first build that wants it, made
// once by the next, by one of two builds running at once, and taken by a program in another directory as it is; a .gch the compiler refuses or
// cannot read never fails a build; compiler errors keep their file:line:col through it. Each
// test file's .gch lives in its own temporary directory (LUNA_PCH_DIR), so what a case sees
// does not depend on the rest of the suite.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startsWithUcenv } from '../../src/ucode/cpp/pch.js';
import { cleanEnv, fixture, luna, noCompiler, show } from './fixtures.js';

const skip = noCompiler() ?? false;

const PROGRAM = {
  'prog.fa': 'import c_hello(int `n) as hello;\nsub main() { hello(7); }\n',
  'ucodes.cpp': '// a comment first\n#include <cstdio>\n#include "ucenv.h"\nextern "C" void c_hello(int n) { std::printf("hello %d\\n", n); std::fflush(stdout); }\n',
};

/** What the build recorded about the .gch in the program's cache entry. */
function pchState(dir: string): string | undefined {
  const cache = join(dir, '.luna-cache');
  const metas = readdirSync(cache).filter((f) => f.startsWith('cpp-') && f.endsWith('.json'));
  assert.equal(metas.length, 1, metas.join(' '));
  return (JSON.parse(readFileSync(join(cache, metas[0]!), 'utf8')) as { pch?: string }).pch;
}

describe('the precompiled ucenv.h', { skip }, () => {
  let root = '';
  const env = (): NodeJS.ProcessEnv => cleanEnv({ LUNA_PCH_DIR: root });
  const hello = async (): Promise<string> => {
    const dir = fixture('luna-pch-', PROGRAM);
    const r = await luna(['run', 'prog.fa'], dir, env());
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, 'hello 7\n', show(r));
    assert.doesNotMatch(r.stderr, /gch|PCH|warning/, show(r));
    return dir;
  };
  before(() => { root = mkdtempSync(join(tmpdir(), 'luna-pch-root-')); });

  test('which sources may take it: only comments and standard headers before ucenv.h', () => {
    assert.equal(startsWithUcenv('#include "ucenv.h"\nint x;\n', false), true);
    assert.equal(startsWithUcenv('/* c\n */\n// c\n#include <cmath>\n#include <stdio.h>\n  #  include <ucenv.h>\n', false), true);
    assert.equal(startsWithUcenv('#include "ucenv.h"\n', true), false); // its own ucenv.h beside it
    assert.equal(startsWithUcenv('#define ABORT(m) my_abort(m)\n#include "ucenv.h"\n', false), false);
    assert.equal(startsWithUcenv('#include "kernel.h"\n#include "ucenv.h"\n', false), false);
    assert.equal(startsWithUcenv('#include <sys/types.h>\n#include "ucenv.h"\n', false), false);
    assert.equal(startsWithUcenv('extern "C" void f() {}\n', false), false);
  });

  test('noted by a first build; two builds at once then make one; a program in another directory takes it as it is', async () => {
    assert.equal(pchState(await hello()), 'noted');
    const [a, b] = await Promise.all([hello(), hello()]);
    const states = [pchState(a), pchState(b)].sort();
    // the lock lets one make it; the other compiles without it (or takes it, if made already)
    assert.equal(states.filter((s) => s === 'built').length, 1, states.join(' '));
    assert.ok(['busy', 'used'].includes(states.find((s) => s !== 'built')!), states.join(' '));
    const entries = readdirSync(root);
    assert.equal(entries.length, 1, `no lock, temporary or failure left: ${entries.join(' ')}`);
    const gch = join(root, entries[0]!, 'ucenv.h.gch');
    const made = statSync(gch).mtimeMs;
    const c = await hello();
    assert.equal(pchState(c), 'used');
    assert.equal(statSync(gch).mtimeMs, made);
  });

  test('a .gch the compiler refuses or cannot read: the build goes on without it', async () => {
    const [key] = readdirSync(root);
    const dir = join(root, key!);
    const good = join(mkdtempSync(join(tmpdir(), 'luna-pch-keep-')), 'ucenv.h.gch');
    copyFileSync(join(dir, 'ucenv.h.gch'), good);
    const files = Object.fromEntries(['ucenv.h', 'entry.json'].map((f) => [f, readFileSync(join(dir, f))]));
    const restore = (gch: Buffer): void => {
      rmSync(join(root, `${key}.failed`), { force: true });
      fixtureAt(dir, { ...files, 'ucenv.h.gch': gch });
    };
    try {
      // not a .gch at all: GCC warns (-Winvalid-pch) and reads ucenv.h itself
      writeFileSync(join(dir, 'ucenv.h.gch'), Buffer.alloc(100_000, 0x5a));
      assert.equal(pchState(await hello()), 'refused');
      assert.ok(existsSync(join(root, `${key}.failed`)), 'refused: not tried again for a while');
      assert.ok(!existsSync(dir), 'refused: dropped');
      // a .gch cut short: GCC stops with a fatal error, and the unit is compiled again without it
      restore(readFileSync(good).subarray(0, 1 << 20));
      assert.equal(pchState(await hello()), 'refused');
    } finally {
      restore(readFileSync(good));
      rmSync(join(good, '..'), { recursive: true, force: true });
    }
  });

  test('compiler errors keep their file:line:col through it, as without it', async () => {
    const [key] = readdirSync(root);
    const files = {
      'prog.fa': 'import c_bad(int `n) as bad;\nsub main() { bad(1); }\n',
      'ucodes.cpp': '#include "ucenv.h"\n#include <string>\nextern "C" void c_bad(int n) {\n  std::string s = n + undefined_name;\n}\n',
    };
    const errors = async (e: NodeJS.ProcessEnv): Promise<string[]> => {
      const r = await luna(['run', 'prog.fa'], fixture('luna-pch-err-', files), e);
      assert.equal(r.code, 1, show(r));
      return r.stderr.split('\n').filter((l) => /error\[/.test(l));
    };
    const through = await errors(env());
    // taken, not refused: a refusal would drop the entry and leave a mark
    assert.ok(existsSync(join(root, key!, 'ucenv.h.gch')) && !existsSync(join(root, `${key}.failed`)));
    assert.deepEqual(through, await errors(cleanEnv({ LUNA_PCH_DIR: '' })));
    assert.equal(through.length, 1, through.join('\n'));
    assert.match(through[0]!, /^ucodes\.cpp:4:23: error\[LUNA-U002\]: .*undefined_name/);
  });
});

/** `dir` holding exactly `files`. */
function fixtureAt(dir: string, files: Record<string, Buffer>): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
}
