// Front-end size benchmark: generated realistic LuNA programs of ~1 MB and ~20 MB (many subs,
// nested loops, macros, lets, behaviour rules, comments), each preprocessed, parsed,
// let-substituted and checked (compileFrontEnd) in a child process of its own, so that its
// peak RSS is its own. Figures per size: seconds per MB (in a child warmed up on a 1 MB
// program, so that it measures the front end and not the JIT; median of 5 runs for 1 MB), peak RSS per MB of source (in a
// cold child: its peak above its RSS before it read the program), and against a baseline
// measured in the same child: a regex tokenization of the same text (what any front end must at
// least do). Linearity is the 20 MB time per MB over the 1 MB one (≈ 1 when linear).
// The compiler of src/program (compileProgram) runs after it and is timed on its own.
//
// Run: node dist/bench/frontend.js  (or import { run }); BENCH_QUICK=1 uses 0.25 MB and 4 MB.
// The big programs (1 M subs, 50 MB): node dist/bench/frontend.js --big [HEAP_MB].
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileFrontEnd } from '../src/lang/index.js';
import { originOf } from '../src/lang/origin.js';
import { compileProgram } from '../src/program/compile.js';

const MB = 1 << 20;

const IMPORTS = [
  'import c_init(int `v, name `x) as init;',
  'import c_add(value `a, value `b, name `s) as add;',
  'import c_inc(value `a, name `b) as inc;',
  'import c_show(string `what, value `v) as show;',
  'import c_set(int `v, name `x) as set;',
].join('\n');

/** One generated unit (~0.8 KB): a macro, a sub with nested loops, a while, an if, a let, rules. */
function unit(k: number): string {
  return `// ---- unit ${k}: a stencil sweep over an n x n block with a counter and a report
#define CELL_${k}(a, b) cf c${k}[$a][$b]: add(u[$a][$b], t[$a][$b - 1], t[$a][$b])
sub work_${k}(int n, name u, name r) {
  df t, s, flag;
  for i = 0..n-1 {
    init(i * ${k % 13 + 1}, t[i][0]);
    for j = 1..n {
      $CELL_${k}(i, j) @ { locator_cyclic: i + j; };
    }
  } @ { locator_cyclic t[i][j] => i; }
  /* a counter: s[k + 1] = s[k] + 1 until it reaches n */
  while s[k] < n, k = 0..out r {
    inc(s[k], s[k + 1]) @ { req_count s[k + 1] = 1; };
  }
  if n > ${k % 97} {
    let m = n * 2 + ${k}, v = u[0][0] {
      show("unit ${k}: " + m, v);
    }
  }
  set(1, flag) >> (s[0]);
}
`;
}

/** A valid program of about `bytes` characters. */
export function realisticProgram(bytes: number): string {
  const parts = [`// generated front-end benchmark program (${bytes} bytes)\n${IMPORTS}\n`];
  let size = parts[0]!.length;
  const calls: string[] = [];
  for (let k = 0; size < bytes; k++) {
    const u = unit(k);
    parts.push(u);
    calls.push(`  work_${k}(n, u, r[${k}]);`);
    size += u.length + calls[calls.length - 1]!.length + 1;
  }
  parts.push(`sub main(int n) {\n  df u, r;\n  for i = 0..n-1 for j = 0..n set(i + j, u[i][j]);\n${calls.join('\n')}\n}\n`);
  return parts.join('');
}

/** `n` subs of one call each; main calls the first (every sub is compiled all the same). */
export function manySubsProgram(n: number): string {
  const parts = [`${IMPORTS}\n`];
  for (let k = 0; k < n; k++) parts.push(`sub s${k}(name x) { init(${k}, x); }\n`);
  parts.push('sub main() {\n  df x;\n  s0(x);\n}\n');
  return parts.join('');
}

/** About `bytes` characters of call statements in one sub (a chain of adds: 36 bytes each). */
export function denseProgram(bytes: number): string {
  const parts = [`${IMPORTS}\nsub main() {\n  df a;\n  init(1, a[0]);\n`];
  let size = parts[0]!.length;
  for (let k = 1; size < bytes; k++) {
    const s = `  add(a[${k - 1}], a[${k - 1}], a[${k}]);\n`;
    parts.push(s);
    size += s.length;
  }
  parts.push('}\n');
  return parts.join('');
}

/** What `luna check` does without the type check: the load of src/program/load.ts, timed. */
async function loadChild(file: string): Promise<Record<string, unknown>> {
  const { loadProgram } = await import('../src/program/load.js');
  const dir = dirname(file), ucodes = join(dir, 'ucodes.ts');
  writeFileSync(ucodes, ['init', 'add', 'inc', 'show', 'set'].map((n) => `export function c_${n}(..._: unknown[]): void {}\n`).join(''));
  const t0 = performance.now(), c0 = process.cpuUsage();
  const r = await loadProgram(file, { ucodes: [ucodes], cacheDir: join(dir, 'cache') });
  const cpu = process.cpuUsage(c0);
  return {
    // CPU time too: on a shared machine the wall time also counts other work's turns
    seconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssMB: process.resourceUsage().maxRSS / 1024,
    statements: r.program?.sites.length ?? null, codes: [...new Set(r.diagnostics.map((d) => d.code))], first: r.diagnostics.find((d) => d.severity === 'error')?.message,
  };
}

/**
 * The big programs of docs/reliability.md, each loaded in a child of its own with the heap
 * given (MB; default Node's): 1 M subs, and a 50 MB program of 1.34 M call statements.
 */
function big(heapMb: number | undefined): void {
  const dir = mkdtempSync(join(tmpdir(), 'luna-frontend-big-'));
  try {
    for (const [name, text] of [['1M subs', manySubsProgram(1_000_000)], ['50 MB', denseProgram(50 * MB)]] as const) {
      const file = join(dir, 'big.fa');
      writeFileSync(file, text);
      const flags = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
      const r = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), '--load', file], { encoding: 'utf8', timeout: 1_800_000 });
      console.log(`${name} (${(text.length / MB).toFixed(1)} MB, heap ${heapMb ?? 'default'}): ${r.status === 0 ? r.stdout.trim() : `status ${r.status} signal ${r.signal} ${r.stderr.slice(-500)}`}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface TimeResult {
  bytes: number;
  frontEndSeconds: number;
  compileSeconds: number;
  scanSeconds: number;
}

interface MemoryResult {
  baseRssMB: number;
  peakRssMB: number;
}

/** Time child: warm up (JIT) on a 1 MB program, then time the front end, the compiler, the baseline scan. */
function timeChild(file: string): TimeResult {
  const warm = compileFrontEnd('warm.fa', { source: realisticProgram(MB) });
  compileProgram(warm.program!, (p) => originOf(warm.pre, p));
  // a small program is timed several times (median): one run is too short for a shared machine
  const reps = statSync(file).size <= 2 * MB ? 5 : 1;
  const feTimes: number[] = [], compileTimes: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const fe = compileFrontEnd(file, {});
    const t1 = performance.now();
    if (!fe.program) throw new Error(`the generated program has errors:\n${fe.diagnostics.slice(0, 5).map((d) => d.message).join('\n')}`);
    compileProgram(fe.program, (p) => originOf(fe.pre, p));
    feTimes.push(t1 - t0);
    compileTimes.push(performance.now() - t1);
  }
  const t2 = performance.now();
  // baseline: read the text and split it into word/number/string/symbol tokens with one regex
  const text = readFileSync(file, 'utf8');
  let tokens = 0;
  const re = /[A-Za-z_]\w*|\d+(?:\.\d+)?|"[^"]*"|\S/g;
  while (re.exec(text)) tokens++;
  const t3 = performance.now();
  if (tokens === 0) throw new Error('empty program');
  return { bytes: text.length, frontEndSeconds: median(feTimes) / 1000, compileSeconds: median(compileTimes) / 1000, scanSeconds: (t3 - t2) / 1000 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** Memory child: the front end alone, cold; peak RSS against the RSS before it read the program. */
function memoryChild(file: string): MemoryResult {
  const baseRssMB = process.resourceUsage().maxRSS / 1024;
  const fe = compileFrontEnd(file, {});
  const peakRssMB = process.resourceUsage().maxRSS / 1024;
  if (!fe.program) throw new Error('the generated program has errors');
  return { baseRssMB, peakRssMB };
}

function spawnChild<T>(mode: string, file: string): T {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, [self, mode, file], { encoding: 'utf8', timeout: 600_000, maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`front-end child ${mode} ${file} failed (status ${r.status}, signal ${r.signal}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout) as T;
}

function measure(dir: string, bytes: number): TimeResult & MemoryResult {
  const file = join(dir, `gen-${bytes}.fa`);
  writeFileSync(file, realisticProgram(bytes));
  return { ...spawnChild<TimeResult>('--time', file), ...spawnChild<MemoryResult>('--memory', file) };
}

export async function run(): Promise<Record<string, number>> {
  const quick = process.env.BENCH_QUICK === '1';
  const small = quick ? MB / 4 : MB, large = quick ? 4 * MB : 20 * MB;
  const dir = mkdtempSync(join(tmpdir(), 'luna-frontend-bench-'));
  try {
    const a = measure(dir, small);
    const b = measure(dir, large);
    const mbA = a.bytes / MB, mbB = b.bytes / MB;
    const perMB = (r: TimeResult & MemoryResult, mb: number) => ({
      s: r.frontEndSeconds / mb, rss: (r.peakRssMB - r.baseRssMB) / mb, scan: r.scanSeconds / mb, compile: r.compileSeconds / mb,
    });
    const x = perMB(a, mbA), y = perMB(b, mbB);
    return {
      smallMB: mbA,
      largeMB: mbB,
      secondsPerMB_small: x.s,
      secondsPerMB_large: y.s,
      peakRssMBperMB_small: x.rss,
      peakRssMBperMB_large: y.rss,
      peakRssMB_large: b.peakRssMB,
      linearityLargeVsSmall: y.s / x.s,
      frontEndVsRegexScan_small: x.s / x.scan,
      frontEndVsRegexScan_large: y.s / y.scan,
      compileSecondsPerMB_small: x.compile,
      compileSecondsPerMB_large: y.compile,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--time') {
    process.stdout.write(JSON.stringify(timeChild(process.argv[3]!)));
  } else if (process.argv[2] === '--memory') {
    process.stdout.write(JSON.stringify(memoryChild(process.argv[3]!)));
  } else if (process.argv[2] === '--load') {
    process.stdout.write(JSON.stringify(await loadChild(process.argv[3]!)));
  } else if (process.argv[2] === '--big') {
    big(process.argv[3] ? Number(process.argv[3]) : undefined);
  } else {
    const r = await run();
    const fmt = (v: number): string => (Math.abs(v) >= 1e5 ? v.toExponential(2) : v.toFixed(3));
    for (const [k, v] of Object.entries(r)) console.log(`${k.padEnd(28)} ${fmt(v)}`);
  }
}
