// The front end's fixes seen through the real `luna` CLI (real runtime, real processes):
// loop variables in the rules after a loop's body, expressions nested to the limit and flat
// chains evaluated at run time, one diagnostic for a program without its ucode module.
// Programs are written to a temporary directory, which is also the working directory (the
// ucode bundle cache goes there, not into the source tree).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_NESTING } from '../../src/lang/index.js';

const LUNA = fileURLToPath(new URL('../../../bin/luna', import.meta.url));

const UCODES = `
export function c_show(what: string, v: number): void {
  console.log(\`\${what} \${v}\`);
}
export function c_set(v: number, x: { setInt(v: number): void }): void {
  x.setInt(v);
}
export function c_show_df(what: string, x: { getInt(): number }): void {
  console.log(\`\${what} \${x.getInt()}\`);
}
`;

interface Run { status: number | null; stdout: string; stderr: string }

/** Write `program` (and, unless told otherwise, the ucodes) to a fresh directory and run luna there. */
function luna(args: string[], program: string, withUcodes = true): Run {
  const dir = mkdtempSync(join(tmpdir(), 'luna-lang-run-'));
  try {
    writeFileSync(join(dir, 'prog.fa'), program);
    if (withUcodes) writeFileSync(join(dir, 'ucodes.ts'), UCODES);
    const r = spawnSync(process.execPath, [LUNA, ...args.map((a) => (a === 'PROG' ? 'prog.fa' : a))], {
      cwd: dir, encoding: 'utf8', timeout: 120_000,
    });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lines = (s: string): string[] => s.split('\n').filter((l) => l !== '').sort();
const explain = (r: Run): string => `status ${r.status}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;

const LOOP_RULES = `import c_show(string, int) as show;
import c_set(int, name) as set;
import c_show_df(string, value) as show_df;
sub main(int n) {
  df w, x;
  for i = 0..n-1 {
    show("for", i);
  } @ { locator_cyclic: i; priority: n - i; }
  while j < n, j = 0..out w {
    set(j * 10, x[j]);
  } @ { locator_cyclic: j + 1; }
  for i = 0..n-1 show_df("x", x[i]);
  show_df("w", w);
}
`;
const LOOP_OUT = ['for 0', 'for 1', 'for 2', 'w 3', 'x 0', 'x 10', 'x 20'];

test('the loop variable in the rules after a for/while body: the program runs (1 node)', () => {
  const r = luna(['run', '--threads', '1', 'PROG', '3'], LOOP_RULES);
  assert.equal(r.status, 0, explain(r));
  assert.deepEqual(lines(r.stdout), LOOP_OUT, explain(r));
});

test('the loop variable in the rules after a for/while body: the program runs on 2 nodes, its iterations spread by it', () => {
  const r = luna(['run', '--nodes', '2', '--threads', '1', 'PROG', '3'], LOOP_RULES);
  assert.equal(r.status, 0, explain(r));
  assert.deepEqual(lines(r.stdout), LOOP_OUT, explain(r));
});

test('expressions nested to the limit, and flat chains of any length, evaluate at run time', () => {
  const deep = Math.floor(MAX_NESTING / 2) - 4; // `n+(` costs two levels
  const program = `import c_show(string, int) as show;
sub main(int n) {
  show("deep", ${'n+('.repeat(deep)}n${')'.repeat(deep)});
  show("casts", ${'int('.repeat(MAX_NESTING - 4)}n${')'.repeat(MAX_NESTING - 4)});
  show("sum", 0${' + 1'.repeat(30_000)});
  show("minus", ${'- '.repeat(30_001)}n);
  show("cond", n${' ? n + 1 : 0'.repeat(20_000)});
}
`;
  const r = luna(['run', '--threads', '1', 'PROG', '3'], program);
  assert.equal(r.status, 0, explain(r));
  assert.deepEqual(lines(r.stdout), ['casts 3', 'cond 4', `deep ${3 * (deep + 1)}`, 'minus -3', 'sum 30000'], explain(r));
});

test('nesting past the limit: luna check prints one positioned error and exits 1', () => {
  const program = `import c_show(string, int) as show;\nsub main(int n)\n  show("deep", ${'('.repeat(5000)}n${')'.repeat(5000)});\n`;
  const r = luna(['check', 'PROG'], program);
  assert.equal(r.status, 1, explain(r));
  assert.match(r.stderr, /^prog\.fa:3:\d+: error\[LUNA-S007\]: nesting too deep: more than 256 levels/m, explain(r));
  assert.doesNotMatch(r.stderr, /RangeError|at .*\.js:\d+/, explain(r));
  assert.ok(r.stderr.length < 2000, `bounded report: ${r.stderr.length} characters`);
});

test('a program without its ucode module: one diagnostic, not one per import', () => {
  const program = `import c_show(string, int) as show;
import c_set(int, name) as set;
import c_show_df(string, value) as show_df;
sub main() {
  df x;
  set(1, x);
  show_df("x", x);
  show("done", 1);
}
`;
  const r = luna(['check', 'PROG'], program, false);
  assert.equal(r.status, 1, explain(r));
  const errors = r.stderr.split('\n').filter((l) => /error\[/.test(l));
  assert.deepEqual(errors, [
    'prog.fa:1:8: error[LUNA-E026]: no ucode module: the program needs c_show, c_set, c_show_df, but ucodes.ts does not exist (write it, or give the modules with --ucodes)',
  ], explain(r));
});

test('a map rule that needs the owner of its own DFs is a diagnostic at the rule, not a stack overflow', () => {
  const direct = `import c_set(int, name) as set;
sub main() {
  df x;
  for i = 0..3 set(i, x[i]);
} @ {
  locator_cyclic x[i] => x[i];
}
`;
  const r = luna(['check', 'PROG'], direct);
  assert.equal(r.status, 1, explain(r));
  assert.match(r.stderr, /^prog\.fa:6:3: error\[LUNA-C001\]: the locator_cyclic rule for x needs the owner of x itself/m, explain(r));
  assert.doesNotMatch(r.stderr, /RangeError|at .*\.js:\d+/, explain(r));
  // through another rule
  const cycle = direct.replace('locator_cyclic x[i] => x[i];', 'locator_cyclic x[i] => y[i];\n  locator_cyclic y[i] => x[i];').replace('df x;', 'df x, y;');
  const c = luna(['check', 'PROG'], cycle);
  assert.equal(c.status, 1, explain(c));
  assert.match(c.stderr, /error\[LUNA-C001\]: the locator_cyclic rule for [xy] needs the owner of [xy] itself/, explain(c));
  assert.doesNotMatch(c.stderr, /RangeError|at .*\.js:\d+/, explain(c));
});
