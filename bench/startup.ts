// Where a short program's fixed cost goes: the chain of the side-by-side (bench/original, C++
// ucodes, 1 thread) at 1 000, 20 000 and 200 000 fragments, the system thread's CPU per
// fragment over each (`luna run --timing`), and the fixed cost of a short run over a long run's
// rate; the same with V8's own tiering budget (LUNA_V8_BUDGET=default, bin/luna) beside
// luna's; the empty program's start-up (spawn to its first ucode) and what its memory is made of.
//
//   node dist/bench/run.js startup [--reps N] [--no-save]
//
// CPU figures are per run of the system thread (thread CPU clock), the medians of runs
// alternated A B A B; they hold under moderate load but the tiering comparison does not: V8
// optimises on a background thread, which a loaded machine starves (docs/benchmarks.md).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fmt, LUNA, LUNA_NODE_ENV, LUNA_NODE_FLAGS, median, retry, ROOT, section, sig, table, type Ctx, type SuiteOutput } from './common.js';
import { writeProgram } from './original/programs.js';
import { CXXFLAGS } from './original/runner.js';
import { SPAN_TAG } from './original/spans.js';

/** The chain lengths whose CPU per fragment is compared: warm-up, the side-by-side's short row, its long row. */
const LENGTHS = [1_000, 20_000, 200_000] as const;
/** The tiering budgets compared: luna's (bin/luna) and V8's own. */
const BUDGETS = { luna: {}, v8: { LUNA_V8_BUDGET: 'default' } } as const;
type Budget = keyof typeof BUDGETS;

/** Prints, as the process exits, its peak and resident memory by kind and its V8 heap (a `--import` probe). */
const MEMORY_PROBE = `import { readFileSync, writeSync } from 'node:fs';
import v8 from 'node:v8';
process.on('exit', () => {
  const kb = (k) => Number(/^\\S+:\\s+(\\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8').split('\\n').find((l) => l.startsWith(k + ':')) ?? '')?.[1] ?? NaN);
  const h = v8.getHeapStatistics();
  writeSync(2, 'luna-memory ' + JSON.stringify({ hwmKB: kb('VmHWM'), anonKB: kb('RssAnon'), fileKB: kb('RssFile'), heapKB: Math.round(h.total_physical_size / 1024), codeKB: Math.round((v8.getHeapCodeStatistics().code_and_metadata_size + v8.getHeapCodeStatistics().bytecode_and_metadata_size) / 1024) }) + '\\n');
});
`;

interface Run { cpuMs: number; firstMs: number; memory?: Record<string, number> }

/** One `luna run --timing` of a program with the C++ ucodes beside it, as bench/original runs it. */
function runOnce(fa: string, args: number[], env: Record<string, string>, probe?: string): Promise<Run> {
  return new Promise((res, rej) => {
    const argv = [...LUNA_NODE_FLAGS, ...(probe ? ['--import', pathToFileURL(probe).href] : []), LUNA, 'run', '--timing', '--quiet', '--threads', '1', '--ucodes', join(dirname(fa), 'ucodes.cpp'), fa, ...args.map(String)];
    const t0 = process.hrtime.bigint(); // CLOCK_MONOTONIC, the clock the ucodes' timestamps read
    const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...LUNA_NODE_ENV, LUNA_CXXFLAGS: CXXFLAGS, ...env } });
    let out = '';
    const keep = (d: Buffer): void => { if (out.length < 1 << 16) out += d.toString(); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', rej);
    child.on('close', (code) => {
      const timing = /luna: timing: (\{.*\})/.exec(out);
      const begin = new RegExp(`^${SPAN_TAG} begin (\\d+)`, 'm').exec(out);
      if (code !== 0 || !timing || !begin) { rej(new Error(`luna run ${args.join(' ')}: exit ${code}: ${out.trim().split('\n').slice(-4).join(' | ')}`)); return; }
      const memory = /^luna-memory (\{.*\})/m.exec(out);
      res({
        cpuMs: (JSON.parse(timing[1]!) as { systemCpuMs: number }).systemCpuMs,
        firstMs: Number(BigInt(begin[1]!) - t0) / 1e6,
        ...(memory ? { memory: JSON.parse(memory[1]!) as Record<string, number> } : {}),
      });
    });
  });
}

/** The median of one figure over a configuration's runs. */
const med = (runs: Run[], f: (r: Run) => number): number => median(runs.map(f));

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const reps = ctx.quick ? 1 : ctx.reps;
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const notes: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'luna-startup-'));
  try {
    const chain = writeProgram(dir, 'chain');
    const empty = writeProgram(dir, 'empty');
    const probe = join(dir, 'memory-probe.mjs');
    writeFileSync(probe, MEMORY_PROBE);
    const timed = (fa: string, args: number[], env: Record<string, string>, p?: string): Promise<Run> => {
      let r: Run | undefined;
      return retry(`luna run ${args.join(' ')}`, async () => { r = await runOnce(fa, args, env, p); return r.cpuMs; }).then(() => r!);
    };
    // the C++ ucodes compiled once, outside the measured runs
    await timed(chain, [10, 0], {});
    await timed(empty, [], {});

    await section(ctx, notes, 'chain warm-up', async () => {
      const runs: Record<string, Run[]> = {};
      const configs = LENGTHS.flatMap((n) => (Object.keys(BUDGETS) as Budget[]).map((b) => ({ n, b, key: `${b}.${n}` })));
      for (let r = 0; r < reps; r++) {
        // rotate the order each round, so a slow phase of the machine hits every configuration
        const k = r % configs.length;
        for (const c of [...configs.slice(k), ...configs.slice(0, k)]) (runs[c.key] ??= []).push(await timed(chain, [c.n, 0], BUDGETS[c.b]));
      }
      const rows: string[][] = [];
      for (const b of Object.keys(BUDGETS) as Budget[]) {
        const cpu = (n: number): number => med(runs[`${b}.${n}`]!, (x) => x.cpuMs);
        // a long run's rate: what a fragment costs once the runtime is warm
        const rate = (cpu(200_000) - cpu(20_000)) / 180_000;
        const fixed = cpu(20_000) - 20_000 * rate;
        for (const n of LENGTHS) { f[`${b}.chain${n / 1000}k.cpuUsPerCf`] = sig((cpu(n) * 1000) / n); units[`${b}.chain${n / 1000}k.cpuUsPerCf`] = 'µs'; }
        f[`${b}.warmUsPerCf`] = sig(rate * 1000); units[`${b}.warmUsPerCf`] = 'µs';
        f[`${b}.chain20k.fixedMs`] = sig(fixed); units[`${b}.chain20k.fixedMs`] = 'ms';
        rows.push([b === 'luna' ? "luna's tiering budget" : "V8's default budget", ...LENGTHS.map((n) => fmt((cpu(n) * 1000) / n)), fmt(rate * 1000), fmt(fixed)]);
      }
      notes.push('chain, C++ ucodes, 1 thread: system-thread CPU per fragment (µs) over the whole run; warm = (CPU at 200 000 − at 20 000) / 180 000; fixed = CPU at 20 000 − 20 000 × warm (ms)');
      notes.push(table(rows, ['budget', ...LENGTHS.map((n) => `${n}`), 'warm', 'fixed ms']));
    });

    await section(ctx, notes, 'empty program', async () => {
      const runs: Run[] = [];
      for (let r = 0; r < reps; r++) runs.push(await timed(empty, [], {}, probe));
      const mem = (k: string): number => sig(med(runs, (x) => x.memory?.[k] ?? NaN) / 1024);
      f['empty.firstFragmentMs'] = sig(med(runs, (x) => x.firstMs)); units['empty.firstFragmentMs'] = 'ms';
      for (const [k, label] of [['hwmKB', 'peakMB'], ['anonKB', 'anonMB'], ['fileKB', 'fileMB'], ['heapKB', 'heapMB'], ['codeKB', 'codeMB']] as const) { f[`empty.${label}`] = mem(k); units[`empty.${label}`] = 'MB'; }
      notes.push(`empty program: spawn to its first ucode ${fmt(f['empty.firstFragmentMs'])} ms; peak ${fmt(f['empty.peakMB'])} MB = file-backed ${fmt(f['empty.fileMB'])} (mostly the node binary's pages) + anonymous ${fmt(f['empty.anonMB'])} (of which V8's heap ${fmt(f['empty.heapMB'])}, code and bytecode ${fmt(f['empty.codeMB'])})`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { status: 'ok', figures: f, units, notes };
}
