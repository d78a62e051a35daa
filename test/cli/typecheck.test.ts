// `luna check` type-checks the TypeScript ucodes against the program's imports (real CLI, real
// TypeScript compiler): a ucode whose parameters do not fit its import is an error at the
// import, a type error in a ucode module is an error at its own line; correct modules pass,
// whichever copy of the DF type they use; nothing is written beside the program; `luna run`
// never loads the compiler; a missing ucode module is one message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { explain, inTempDir, luna, ROOT, runNode, type Run } from './helpers.js';

/** Write the files into a fresh directory and run `luna …args` there. */
async function lunaWith(files: Record<string, string>, args: string[]): Promise<Run & { files: string[] }> {
  return inTempDir('luna-typecheck-', async (dir) => {
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    const r = await luna(args, dir);
    return { ...r, files: readdirSync(dir).sort() };
  });
}

const errors = (r: Run): string[] => r.stderr.split('\n').filter((l) => /error\[LUNA-/.test(l));

// the DF type of this checkout's sources: another declaration than the one luna check uses
const SRC_DF = JSON.stringify(join(ROOT, 'src', 'ucode', 'df.js'));

test('correct ucodes pass: the DF of luna-ts/ucode, its DfReader and DfWriter, the DF of another copy of the sources, and structural types', async () => {
  // three modules, one per way of typing DFs; each implements the same three ucodes under its own prefix
  const variants: Record<string, string> = {
    a: `import type { DF } from 'luna-ts/ucode';\ntype In = DF; type Out = DF;`,
    b: `import type { DF } from ${SRC_DF};\ntype In = DF; type Out = DF;`,
    c: `type In = { getInt(): number }; type Out = { setInt(n: number): void; getInt(): number };`,
    // type aliases only (the compiled df.js has none: the checker must read its declarations)
    d: `import type { DfReader, DfWriter } from 'luna-ts/ucode';\ntype In = DfReader; type Out = DfWriter;`,
  };
  const files: Record<string, string> = {};
  let fa = '';
  let body = '';
  for (const [v, prelude] of Object.entries(variants)) {
    files[`${v}.ts`] = `${prelude}
export function ${v}_init(n: number, x: number, s: string, out: Out): void { out.setInt(n + x + s.length); }
export function ${v}_use(a: In, b: Out): void { b.setInt(a.getInt() * 2); }
export function ${v}_show(v: In): void { console.log(v.getInt()); }
`;
    fa += `import ${v}_init(int, real, string, name) as ${v}_init;\nimport ${v}_use(value, name) as ${v}_use;\nimport ${v}_show(value) as ${v}_show;\n`;
    body += `  ${v}_init(3, 0.5, "s", ${v}1);\n  ${v}_use(${v}1, ${v}2);\n  ${v}_show(${v}2);\n`;
  }
  files['prog.fa'] = `${fa}sub main() {\n  df a1, a2, b1, b2, c1, c2, d1, d2;\n${body}}\n`;
  const r = await lunaWith(files, ['check', '--ucodes', 'a.ts,b.ts,c.ts,d.ts', 'prog.fa']);
  assert.equal(r.status, 0, explain(r));
  assert.equal(r.stderr, '', explain(r));
});

// one check (each loads the TypeScript compiler: ~5 s of CPU) for the mismatches and the type error
test('mismatches are errors at the import naming the parameter and the ucode: a DF read where an int comes, an input set, a number for a string, too few parameters; a type error inside a ucode module is reported at its own file:line:col', async () => {
  const r = await lunaWith({
    'prog.fa': `import c_twice(int) as twice;
import c_set_in(value) as set_in;
import c_num(string) as num;
import c_three(int, int) as three;
import c_f(int) as f;
sub main() {
  df x;
  twice(5);
  set_in(x);
  num("a");
  three(1, 2);
  f(1);
}
`,
    'ucodes.ts': `import type { DF } from 'luna-ts/ucode';

export function c_twice(v: DF): void {
  console.log(2 * v.getInt());
}
export function c_set_in(x: { setInt(n: number): void }): void { x.setInt(1); }
export function c_num(n: number): void { console.log(n + 1); }
export function c_three(a: number, b: number, c: number): void { console.log(a + b + c); }
export function c_f(n: number): void {
  const s: string = n;
  console.log(s);
}
`,
  }, ['check', 'prog.fa']);
  assert.equal(r.status, 1, explain(r));
  assert.equal(errors(r).length, 5, explain(r));
  assert.match(r.stderr, /^prog\.fa:1:8: error\[LUNA-U008\]: ucode c_twice at ucodes\.ts:3:17, \(v: DF\) => void, does not fit `import c_twice\(int\) as twice`: Types of parameters 'v' and parameter 1 \(int\) of the import are incompatible: Type 'number' is not assignable to type 'DF'$/m, explain(r));
  assert.match(r.stderr, /^ 1 \| import c_twice\(int\) as twice;$/m, 'the import line is shown');
  assert.match(r.stderr, /^prog\.fa:2:8: error\[LUNA-U008\]: ucode c_set_in .*'setInt' is missing in type 'DfReader'.*\(a value parameter is an input: it can be read, not set\)$/m, explain(r));
  assert.match(r.stderr, /^prog\.fa:3:8: error\[LUNA-U008\]: ucode c_num .*Type 'string' is not assignable to type 'number'$/m, explain(r));
  assert.match(r.stderr, /^prog\.fa:4:8: error\[LUNA-U008\]: ucode c_three .*does not fit `import c_three\(int, int\) as three`/m, explain(r));
  assert.match(r.stderr, /^ucodes\.ts:10:9: error\[LUNA-U009\]: Type 'number' is not assignable to type 'string'\.$/m, explain(r));
});

test('Node\'s types: ucodes that use Node\'s modules, globals or a console method beyond the common ones pass; a type error in a ucode that uses none is still reported once', async () => {
  // the check reads only the ES library and a console first (Node's declarations are large); these
  // pass only if that first pass never decides alone when it finds something or Node is named
  const ok = await lunaWith({
    'prog.fa': 'import c_env(name) as env;\nimport c_table(int) as table;\nimport c_cwd(int) as cwd;\nsub main() {\n  df x;\n  env(x);\n  table(1);\n  cwd(2);\n}\n',
    'ucodes.ts': `import type { DF } from 'luna-ts/ucode';
import { table } from './table.js';
export { table as c_table };
export function c_env(x: DF): void { x.setInt(process.env.HOME === undefined ? 0 : 1); }
export function c_cwd(n: number): void { console.log(n, process.cwd()); }
`,
    'table.ts': `import { join } from 'node:path';\nexport function table(n: number): void { console.table([{ n, at: join('a', 'b') }]); }\n`,
  }, ['check', 'prog.fa']);
  assert.equal(ok.status, 0, explain(ok));
  assert.equal(ok.stderr, '', explain(ok));
  // no Node in sight: the first pass's finding, reported once, at its place
  const bad = await lunaWith({
    'prog.fa': 'import c_f(int) as f;\nsub main() {\n  f(1);\n}\n',
    'ucodes.ts': 'export function c_f(n: number): void {\n  const s: string = n;\n  console.table(s);\n}\n',
  }, ['check', 'prog.fa']);
  assert.equal(bad.status, 1, explain(bad));
  assert.deepEqual(errors(bad), ["ucodes.ts:2:9: error[LUNA-U009]: Type 'number' is not assignable to type 'string'."], explain(bad));
});

test('--json carries the mismatch with its position; nothing is written beside the program', async () => {
  const r = await lunaWith({
    'prog.fa': 'import c_f(int) as f;\nsub main() {\n  f(1);\n}\n',
    'ucodes.ts': 'export function c_f(n: string): void { console.log(n); }\n',
  }, ['check', '--json', 'prog.fa']);
  assert.equal(r.status, 1, explain(r));
  const report = JSON.parse(r.stdout) as { ok: boolean; diagnostics: { code: string; origin?: { file: string; line: number; col: number } }[] };
  assert.equal(report.ok, false);
  assert.deepEqual(report.diagnostics.map((d) => [d.code, d.origin?.file, d.origin?.line, d.origin?.col]), [['LUNA-U008', 'prog.fa', 1, 8]]);
  assert.deepEqual(r.files, ['prog.fa', 'ucodes.ts']); // the bundle cache is $LUNA_CACHE_DIR
});

test('a program without its ucode module: one message however many imports', async () => {
  const r = await lunaWith({
    'prog.fa': 'import c_a(int) as a;\nimport c_b(int) as b;\nimport c_c(int) as c;\nsub main() {\n  a(1);\n  b(2);\n  c(3);\n}\n',
  }, ['check', 'prog.fa']);
  assert.equal(r.status, 1, explain(r));
  assert.equal(errors(r).length, 1, explain(r));
  assert.match(r.stderr, /^prog\.fa:1:8: error\[LUNA-E026\]: no ucode module: the program needs c_a, c_b, c_c, but \S*ucodes\.ts does not exist/m, explain(r));
});

test('luna run never loads the TypeScript compiler (luna check does)', async () => {
  await inTempDir('luna-typecheck-lazy-', async (dir) => {
    writeFileSync(join(dir, 'prog.fa'), 'import c_f(int) as f;\nsub main() {\n  f(7);\n}\n');
    writeFileSync(join(dir, 'ucodes.ts'), 'export function c_f(n: number): void { console.log(`f ${n}`); }\n');
    // a module hook that refuses to resolve `typescript`
    writeFileSync(join(dir, 'refuse-ts.mjs'), `export async function resolve(specifier, context, next) {
  if (specifier === 'typescript') throw new Error('typescript was loaded');
  return next(specifier, context);
}
`);
    writeFileSync(join(dir, 'hook.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'refuse-ts.mjs')).href)});\n`);
    const luna = join(ROOT, 'bin', 'luna');
    const run = await runNode(['--import', './hook.mjs', luna, 'run', '--threads', '1', 'prog.fa'], dir);
    assert.equal(run.status, 0, explain(run));
    assert.equal(run.stdout, 'f 7\n', explain(run));
    const check = await runNode(['--import', './hook.mjs', luna, 'check', 'prog.fa'], dir);
    assert.notEqual(check.status, 0, `the hook works: check needs the compiler\n${explain(check)}`);
    assert.match(check.stderr, /typescript was loaded/, explain(check));
  });
});
