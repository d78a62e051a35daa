// Runs every shipped program (examples/*/*.fa) through the CLI, with 1 and 2 worker threads,
// and checks its exit code and output; every example must also pass `luna check` (in this
// process, as the command loads it: the TypeScript checker loads once; the command itself
// once). Each program goes through the CLI once per thread count, with different arguments
// where it has several cases: a process costs ~0.3 s, and what the other arguments change is
// the program's results, which nodes.test.ts checks for every case in process (exact and in
// order on one node and one lane, as with --threads 1; on 2 and 3 nodes with 1 and 2 lanes).
// Several nodes: nodes.test.ts in process, two runs over node processes here.
// Compiled to dist/test/examples/; run from the repository root (npm test).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { hasErrors } from '../../src/lang/diagnostics.js';
import { loadProgram } from '../../src/program/load.js';
import { CASES, exampleFiles, LAYERED, type Case } from './cases.js';

const LUNA = 'bin/luna';
const TIMEOUT_MS = 120_000;

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function luna(args: string[], timeout = TIMEOUT_MS): Run {
  const r = spawnSync(process.execPath, [LUNA, ...args], { encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  if (r.error && (r.error as NodeJS.ErrnoException).code !== 'ETIMEDOUT') throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function lines(s: string): string[] {
  const l = s.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

function describeRun(args: string[], r: Run): string {
  return `luna ${args.join(' ')} -> status ${r.status}${r.signal ? ` (signal ${r.signal})` : ''}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
}


describe('examples: every .fa is run by a test case', () => {
  test('coverage', () => {
    const run = new Set([...CASES.map((c) => c.file), ...LAYERED]);
    assert.deepEqual(exampleFiles().filter((f) => !run.has(f)), []);
  });
});

describe('examples: luna check', () => {
  for (const file of exampleFiles()) {
    test(`check ${file} (loaded, built and type-checked as luna check does)`, async () => {
      const l = await loadProgram(file, { typecheck: true });
      assert.ok(l.program && !hasErrors(l.diagnostics), l.text);
      assert.doesNotMatch(l.text, /\berror\b/i, l.text);
    });
  }

  test('luna check examples/matmul-cpp/matmul.fa (the command: TypeScript and C++ ucodes)', () => {
    const args = ['check', 'examples/matmul-cpp/matmul.fa'];
    const r = luna(args);
    assert.equal(r.status, 0, describeRun(args, r));
    assert.doesNotMatch(r.stdout + r.stderr, /\berror\b/i, describeRun(args, r));
  });
});

/** One case per program, its first with 1 thread and its last with 2 (CASES lists a program's cases together). */
function casesFor(threads: number): Case[] {
  const byFile = new Map<string, Case[]>();
  for (const c of CASES) byFile.set(c.file, [...byFile.get(c.file) ?? [], c]);
  return [...byFile.values()].map((cs) => (threads === 1 ? cs[0]! : cs[cs.length - 1]!));
}

for (const threads of [1, 2]) {
  describe(`examples: luna run --threads ${threads}`, () => {
    for (const c of casesFor(threads)) {
      const args = ['run', '--threads', String(threads), c.file, ...c.args];
      test(`${c.file} ${c.args.join(' ')}`, () => {
        const r = luna(args);
        assert.equal(r.status, 0, describeRun(args, r));
        if (threads === 1) assert.deepEqual(lines(r.stdout), c.out, describeRun(args, r));
        else assert.deepEqual(lines(r.stdout).sort(), [...c.out].sort(), describeRun(args, r));
      });
    }
  });
}

// Several node processes over sockets, end to end (every example on several nodes: nodes.test.ts).
describe('examples: luna run --nodes', () => {
  for (const [nodes, threads, c] of [[3, 2, CASES[0]!], [2, 1, CASES.find((x) => x.file.includes('matmul-cpp'))!]] as const) {
    const args = ['run', '--nodes', String(nodes), '--threads', String(threads), c.file, ...c.args];
    test(args.slice(1).join(' '), () => {
      const r = luna(args);
      assert.equal(r.status, 0, describeRun(args, r));
      assert.deepEqual(lines(r.stdout).sort(), [...c.out].sort(), describeRun(args, r));
    });
  }
});

describe('examples: failures are reported', () => {
  test('matmul with n not a multiple of nb prints FAILED and exits 1', () => {
    const args = ['run', '--threads', '1', 'examples/matmul/matmul.fa', '10', '3'];
    const r = luna(args);
    assert.equal(r.status, 1, describeRun(args, r));
    assert.match(r.stdout, /^matmul: FAILED \(n=10 must be a positive multiple of nb=3\)$/m, describeRun(args, r));
  });

  test('the tutorial with more blocks than points prints FAILED and exits 1', () => {
    const args = ['run', '--threads', '1', 'examples/tutorial/pi.fa', '10', '20'];
    const r = luna(args);
    assert.equal(r.status, 1, describeRun(args, r));
    assert.match(r.stdout, /^tutorial: FAILED \(1 <= blocks <= n is needed, got n=10, blocks=20\)$/m, describeRun(args, r));
  });

  test('a missing command-line argument is a usage error (exit 2) naming main\'s parameters; nothing runs', () => {
    const args = ['run', '--threads', '1', 'examples/matmul/matmul.fa', '64'];
    const r = luna(args);
    assert.equal(r.status, 2, describeRun(args, r));
    assert.match(r.stderr, /too few program arguments: main\(int n, int nb\) needs 2, 1 given/, describeRun(args, r));
    assert.equal(r.stdout, '', describeRun(args, r));
  });
});

describe('examples: original driver form', () => {
  test('luna --worker-threads-count=1 hello.fa', () => {
    const args = ['--worker-threads-count=1', 'examples/hello/hello.fa'];
    const r = luna(args);
    assert.equal(r.status, 0, describeRun(args, r));
    assert.deepEqual(lines(r.stdout), CASES[0].out, describeRun(args, r));
  });

  test('luna -q --worker-threads-count=2 seed004.fa 8 2 3', () => {
    const args = ['-q', '--worker-threads-count=2', 'examples/seed004/seed004.fa', '8', '2', '3'];
    const r = luna(args);
    assert.equal(r.status, 0, describeRun(args, r));
    assert.deepEqual(lines(r.stdout), ['seed004: OK (2x2 fragments of 8x8, repeat 3)'], describeRun(args, r));
  });
});

// tsc's strict check of every TypeScript file under examples/ (those no program imports too),
// in this process: the TypeScript compiler the `luna check` cases above loaded, not a second one
describe('examples: ucodes type-check', () => {
  test('examples/*/*.ts under tsc --noEmit --strict --module nodenext --target es2022', async () => {
    const ucodes = readdirSync('examples', { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => readdirSync(join('examples', d.name)).filter((f) => f.endsWith('.ts')).map((f) => join('examples', d.name, f)));
    assert.ok(ucodes.length > 0);
    const ts = (await import('typescript')).default;
    const program = ts.createProgram(ucodes, {
      noEmit: true, strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: ['node'],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program);
    assert.equal(diagnostics.length, 0, ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' }));
  });
});
