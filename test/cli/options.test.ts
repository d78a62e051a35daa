// The command line of the real `luna`: every option that takes a value works as `--opt v` and
// `--opt=v` (and its short and legacy spellings), commands without their subcommand and
// misspelt commands are usage errors (exit 2) with help or a suggestion, `-o -` writes to
// standard output, and paths of the wrong kind are named as such.
import { before, after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explain, luna, type Run } from './helpers.js';

const PROG = `import c_show(string, int) as show;
sub main(int n) {
  show($WHO, n);
}
`;
const UCODES = 'export function c_show(who: string, n: number): void { console.log(`${who} ${n}`); }\n';

let dir = '';
/** A traced run every trace-reading case uses. */
const TRACE = 'base.trace';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'luna-cli-options-'));
  writeFileSync(join(dir, 'prog.fa'), PROG);
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  mkdirSync(join(dir, 'alt'));
  writeFileSync(join(dir, 'alt', 'prog.fa'), PROG);
  writeFileSync(join(dir, 'alt', 'other.ts'), UCODES); // not found by default: only through --ucodes
  mkdirSync(join(dir, 'a-directory'));
  const r = await luna(['run', '--threads', '1', '--trace', TRACE, '-D', 'WHO="base"', 'prog.fa', '1'], dir);
  assert.equal(r.status, 0, explain(r));
});

after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** Run the command lines two at a time (2 cores), in order of the list. */
async function all(lines: string[][]): Promise<Run[]> {
  const out: Run[] = new Array(lines.length);
  let next = 0;
  const worker = async (): Promise<void> => { while (next < lines.length) { const i = next++; out[i] = await luna(lines[i]!, dir); } };
  await Promise.all([worker(), worker()]);
  return out;
}

/** `{"programMs":…}` of --timing on stderr. */
function timing(r: Run): { nodes: number; threads: number } {
  const m = /luna: timing: (\{.*\})/.exec(r.stderr);
  assert.ok(m, `--timing line on stderr\n${explain(r)}`);
  return JSON.parse(m[1]!) as { nodes: number; threads: number };
}

describe('options with a value: --opt v and --opt=v', () => {
  test('run: threads (-t, --threads, legacy --worker-threads-count) and defines (-D, --define)', async () => {
    const forms: [string[], string][] = [
      [['run', '-t', '2', '-D', 'WHO="a"'], 'a'],
      [['run', '--threads', '2', '--define', 'WHO="b"'], 'b'],
      [['run', '--threads=2', '--define=WHO="c"'], 'c'],
      [['--worker-threads-count', '2', '-D', 'WHO="e"'], 'e'],
      [['--worker-threads-count=2', '-q', '-D', 'WHO="f"'], 'f'],
    ];
    const runs = await all(forms.map(([opts]) => [...opts, '--timing', 'prog.fa', '7']));
    runs.forEach((r, i) => {
      assert.equal(r.status, 0, explain(r));
      assert.equal(r.stdout, `${forms[i]![1]} 7\n`, explain(r));
      assert.equal(timing(r).threads, 2, explain(r));
    });
  });

  test('run: --warm-start waits for the workers before the program starts, on one node and two', async () => {
    const runs = await all([
      ['run', '-t', '2', '--warm-start', '--timing', '-D', 'WHO="w"', 'prog.fa', '3'],
      ['run', '-n', '2', '-t', '1', '--warm-start', '--timing', '-D', 'WHO="w"', 'prog.fa', '3'],
      ['run', '-t', '2', '--timing', '-D', 'WHO="w"', 'prog.fa', '3'],
    ]);
    runs.forEach((r, i) => {
      assert.equal(r.status, 0, explain(r));
      assert.equal(r.stdout, 'w 3\n', explain(r));
      const t = timing(r) as { bootWaitMs?: number };
      // a worker thread takes milliseconds to boot: the wait is real, and only asked for with the option
      if (i < 2) assert.ok((t.bootWaitMs ?? 0) > 0, `bootWaitMs > 0\n${explain(r)}`);
      else assert.equal(t.bootWaitMs, undefined, explain(r));
    });
  });

  test('run: nodes (-n, --nodes) and --bind', async () => {
    const runs = await all([
      ['run', '-n', '2', '--bind', '127.0.0.1', '-t', '1', '--timing', '-D', 'WHO="n"', 'prog.fa', '1'],
      ['run', '--nodes=2', '--bind=127.0.0.1', '-t', '1', '--timing', '-D', 'WHO="n"', 'prog.fa', '1'],
    ]);
    for (const r of runs) {
      assert.equal(r.status, 0, explain(r));
      assert.equal(r.stdout, 'n 1\n', explain(r));
      assert.equal(timing(r).nodes, 2, explain(r));
    }
  });

  test('run: --ucodes, --trace, --record, --replay, --priorities-from', async () => {
    const runs = await all([
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--trace', 't1', '--record', 'r1', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes=alt/other.ts', '--trace=t2', '--record=r2', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
    ]);
    for (const [i, r] of runs.entries()) {
      assert.equal(r.status, 0, explain(r));
      assert.equal(r.stdout, 'u 2\n', explain(r));
      assert.ok(existsSync(join(dir, `t${i + 1}`, 'manifest.json')), `--trace wrote t${i + 1}\n${explain(r)}`);
      assert.ok(readdirSync(join(dir, `r${i + 1}`)).length > 0, `--record wrote r${i + 1}\n${explain(r)}`);
    }
    const replays = await all([
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--replay', 'r1', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--replay=r2', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--priorities-from', 't1', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--priorities-from=t2', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
    ]);
    for (const r of replays) {
      assert.equal(r.status, 0, explain(r));
      assert.equal(r.stdout, 'u 2\n', explain(r));
    }
    // and a value that names nothing is reported with the name, whichever spelling carried it
    const missing = await all([
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--replay', 'no-such-schedule', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--replay=no-such-schedule', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--priorities-from', 'no-such.trace', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
      ['run', '-t', '1', '--ucodes', 'alt/other.ts', '--priorities-from=no-such.trace', '-D', 'WHO="u"', 'alt/prog.fa', '2'],
    ]);
    for (const [i, r] of missing.entries()) {
      assert.equal(r.status, 1, explain(r));
      assert.match(r.stderr, i < 2 ? /no-such-schedule/ : /no trace directory \S*no-such\.trace/, explain(r));
      assert.equal(r.stdout, '', explain(r));
    }
  });

  test('run: --heartbeat (a malformed or too short value is a usage error naming the option, before anything starts, on one node too)', async () => {
    const runs = await all([
      ['run', '--heartbeat', 'soon', '-D', 'WHO="h"', 'prog.fa', '1'],
      ['run', '--heartbeat=soon', '-D', 'WHO="h"', 'prog.fa', '1'],
      ['run', '--heartbeat', '1ms', '-D', 'WHO="h"', 'prog.fa', '1'],
      ['run', '--nodes', '2', '--heartbeat', '99ms', '-D', 'WHO="h"', 'prog.fa', '1'],
      ['run', '-t', '1', '--heartbeat', '30s', '-D', 'WHO="h"', 'prog.fa', '1'],
      ['run', '-t', '1', '--heartbeat=off', '-D', 'WHO="h"', 'prog.fa', '1'],
    ]);
    for (const r of runs.slice(0, 4)) {
      assert.equal(r.status, 2, explain(r));
      assert.match(r.stderr, /^luna: error: --heartbeat: /m, explain(r));
      assert.equal(r.stdout, '', 'nothing ran');
    }
    assert.match(runs[2]!.stderr, /--heartbeat: 1ms is shorter than 100ms, the shortest timeout a node can keep \(or off\)/);
    const env = await luna(['run', '-D', 'WHO="h"', 'prog.fa', '1'], dir, undefined, { ...process.env, LUNA_HEARTBEAT_MS: '5' });
    assert.equal(env.status, 2, explain(env));
    assert.match(env.stderr, /^luna: error: LUNA_HEARTBEAT_MS=5: expected a timeout in milliseconds of at least 100/m, explain(env));
    for (const r of runs.slice(4)) {
      assert.equal(r.status, 0, explain(r));
      assert.equal(r.stdout, 'h 1\n', explain(r));
    }
  });

  test('check: -D/--define, --ucodes and --cxxflags', async () => {
    const runs = await all([
      ['check', 'alt/prog.fa'],
      ['check', '-D', 'WHO="x"', '--ucodes', 'alt/other.ts', '--cxxflags', '-O1', 'alt/prog.fa'],
      ['check', '--define=WHO="x"', '--ucodes=alt/other.ts', '--cxxflags=-O1', 'alt/prog.fa'],
    ]);
    assert.equal(runs[0]!.status, 1, explain(runs[0]!)); // neither WHO nor the ucode module
    for (const r of runs.slice(1)) assert.equal(r.status, 0, explain(r));
  });

  test('export perfetto: -o, --output, --output=, and -o - for standard output; export tables refuses -o -', async () => {
    const runs = await all([
      ['export', 'perfetto', TRACE, '-o', 'p1.json'],
      ['export', 'perfetto', TRACE, '--output', 'p2.json'],
      ['export', 'perfetto', TRACE, '--output=p3.json'],
      ['export', 'perfetto', TRACE, '--format', 'json', '-o', '-'],
      ['export', 'tables', TRACE, '-o', '-'],
    ]);
    const files = ['p1.json', 'p2.json', 'p3.json'].map((f) => readFileSync(join(dir, f), 'utf8'));
    for (const r of runs.slice(0, 4)) assert.equal(r.status, 0, explain(r));
    assert.equal(files[1], files[0]);
    assert.equal(files[2], files[0]);
    const stdout = runs[3]!;
    assert.equal(stdout.stdout, files[0], 'the same JSON on standard output');
    assert.ok(Array.isArray((JSON.parse(stdout.stdout) as { traceEvents?: unknown[] }).traceEvents));
    assert.equal(existsSync(join(dir, '-')), false, 'no file named -');
    assert.match(stdout.stderr, /to standard output/);
    // tables are several files: -o - is refused rather than creating a directory named -
    const tables = runs[4]!;
    assert.equal(tables.status, 2, explain(tables));
    assert.match(tables.stderr, /-o takes a directory, not -/, explain(tables));
    assert.equal(existsSync(join(dir, '-')), false, 'no directory named -');
  });

  test('analyze slow: --model and --window', async () => {
    const runs = await all([
      ['analyze', 'slow', TRACE, '--json', '--model', 'litvinov2017', '--window', '2ms'],
      ['analyze', 'slow', TRACE, '--json', '--model=litvinov2017', '--window=2ms'],
    ]);
    for (const r of runs) {
      assert.equal(r.status, 0, explain(r));
      const j = JSON.parse(r.stdout) as { model: string; series: { windowNs: number } };
      assert.equal(j.model, 'litvinov2017', explain(r));
      assert.equal(j.series.windowNs, 2e6, explain(r));
    }
  });
});

describe('usage errors exit 2', () => {
  test('export and analyze without a subcommand print their help on stderr', async () => {
    const [exp, an, help] = await all([['export'], ['analyze'], ['help']]);
    assert.equal(exp!.status, 2, explain(exp!));
    assert.match(exp!.stderr, /^Usage: luna export /m, explain(exp!));
    assert.match(exp!.stderr, /perfetto/, explain(exp!));
    assert.equal(exp!.stdout, '');
    assert.equal(an!.status, 2, explain(an!));
    assert.match(an!.stderr, /^Usage: luna analyze /m, explain(an!));
    assert.match(an!.stderr, /slow/, explain(an!));
    assert.equal(an!.stdout, '');
    assert.equal(help!.status, 0, explain(help!)); // asking for help is not an error
    assert.match(help!.stdout, /^Usage: luna /m, explain(help!));
  });

  test('a misspelt command is suggested; a far word is taken as a program file', async () => {
    const [analyse, chek, far] = await all([['analyse', 'slow', TRACE], ['chek', 'prog.fa'], ['xyzzy', '1']]);
    assert.equal(analyse!.status, 2, explain(analyse!));
    assert.match(analyse!.stderr, /did you mean `luna analyze`\?/, explain(analyse!));
    assert.doesNotMatch(analyse!.stderr, /program file not found/, explain(analyse!));
    assert.equal(chek!.status, 2, explain(chek!));
    assert.match(chek!.stderr, /did you mean `luna check`\?/, explain(chek!));
    assert.equal(far!.status, 1, explain(far!));
    assert.match(far!.stderr, /program file not found: xyzzy/, explain(far!));
    assert.doesNotMatch(far!.stderr, /did you mean/, explain(far!));
  });

  test('unknown options, missing values and out-of-range numbers', async () => {
    const runs = await all([
      ['run', '--frobnicate', 'prog.fa'],
      ['run', '--threads'],
      ['run', '--threads', '0', 'prog.fa'],
      ['run', '--threads=two', 'prog.fa'],
      ['check'],
      ['export', 'perfetto', TRACE],
      ['analyze', 'slow', TRACE, '--model', 'nobody2000'],
    ]);
    for (const r of runs) {
      assert.equal(r.status, 2, explain(r));
      assert.ok(r.stderr.length > 0, explain(r));
      assert.doesNotMatch(r.stderr, /\n\s+at /, `no stack trace\n${explain(r)}`);
    }
    assert.match(runs[2]!.stderr, /--threads must be a positive integer, got "0"/);
    assert.match(runs[3]!.stderr, /--threads must be a positive integer, got "two"/);
  });

  test('--threads above 256 and --nodes above 64 are refused before anything starts', async () => {
    const runs = await all([
      ['run', '--threads', '300', 'prog.fa', '1'],
      ['--worker-threads-count=257', 'prog.fa', '1'],
      ['run', '--nodes', '65', 'prog.fa', '1'],
      ['run', '--nodes=1000', '--threads=1', 'prog.fa', '1'],
    ]);
    for (const r of runs.slice(0, 2)) {
      assert.equal(r.status, 2, explain(r));
      assert.match(r.stderr, /^luna: error: --(threads 300|worker-threads-count 257): at most 256 \(/m, explain(r));
    }
    for (const r of runs.slice(2)) {
      assert.equal(r.status, 2, explain(r));
      assert.match(r.stderr, /^luna: error: --nodes (65|1000): at most 64 \(/m, explain(r));
    }
    for (const r of runs) assert.equal(r.stdout, '', explain(r));
  });
});

describe('what the command line says', () => {
  test('-- after the program ends the options and is not an argument of main', async () => {
    const r = await luna(['run', '-q', '-D', 'WHO="sep"', 'prog.fa', '--', '7'], dir);
    assert.equal(r.status, 0, explain(r));
    assert.match(r.stdout, /^sep 7$/m);
  });
  test('--trace says where the trace went; -q does not', async () => {
    const r = await luna(['run', '--trace', 'said.trace', '-D', 'WHO="t"', 'prog.fa', '1'], dir);
    assert.equal(r.status, 0, explain(r));
    assert.match(r.stderr, /^luna: trace written to said\.trace \(luna analyze slow said\.trace; luna report said\.trace\)$/m);
    const q = await luna(['run', '-q', '--trace', 'quiet.trace', '-D', 'WHO="t"', 'prog.fa', '1'], dir);
    assert.doesNotMatch(q.stderr, /trace written/);
  });
  test('the driver\'s --worker-threads-count is named as given in its errors', async () => {
    for (const form of [['--worker-threads-count=0'], ['--worker-threads-count', 'x']]) {
      const r = await luna([...form, 'prog.fa', '1'], dir);
      assert.equal(r.status, 2, explain(r));
      assert.match(r.stderr, /^luna: error: --worker-threads-count must be a positive integer/m);
      assert.doesNotMatch(r.stderr, /--threads/);
    }
  });
  test('a closed pipe (-o - | head) ends the output quietly', async () => {
    const { spawnSync } = await import('node:child_process');
    const bin = join(process.cwd(), 'bin', 'luna');
    for (const cmd of [`export perfetto ${TRACE} -o -`, `report ${TRACE} -o -`, `analyze slow --json ${TRACE}`]) {
      const sh = spawnSync('bash', ['-c', `"${process.execPath}" "${bin}" ${cmd} | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`], { cwd: dir, encoding: 'utf8' });
      assert.doesNotMatch(sh.stderr, /error|EPIPE|\n\s+at /, `${cmd}: no error on stderr`);
      assert.equal(sh.stdout.trim(), '0', `${cmd}: exit 0`);
    }
  });
});

describe('paths of the wrong kind', () => {
  test('a directory given as the program', async () => {
    const runs = await all([['run', 'a-directory'], ['a-directory'], ['check', 'a-directory']]);
    for (const r of runs) {
      assert.equal(r.status, 1, explain(r));
      assert.match(r.stderr, /a-directory is a directory, not a program file/, explain(r));
      assert.doesNotMatch(r.stderr, /not found/, explain(r));
    }
  });

  test('a file or a missing path given as a trace directory', async () => {
    const runs = await all([
      ['analyze', 'slow', 'prog.fa'],
      ['export', 'perfetto', 'prog.fa', '-o', 'x.json'],
      ['analyze', 'slow', 'no-such.trace'],
    ]);
    for (const r of runs.slice(0, 2)) {
      assert.equal(r.status, 1, explain(r));
      assert.match(r.stderr, /^luna: error: prog\.fa is a file; a trace is a directory/m, explain(r));
      assert.doesNotMatch(r.stderr, /ENOTDIR/, explain(r));
    }
    assert.equal(runs[2]!.status, 1, explain(runs[2]!));
    assert.match(runs[2]!.stderr, /^luna: error: no trace directory no-such\.trace/m, explain(runs[2]!));
    assert.equal(existsSync(join(dir, 'x.json')), false);
  });
});
