// The profile-based distribution experiments (seed 004 §4), part (d) of `npm run experiments`:
//
//   for test_1 (examples/seed004/seed004.fa: everything on node 0), test_2 (seed004_cyclic.fa:
//   block rows cyclic over the nodes) and test_3 (examples/heat3d: the conveyor sweep, x-slabs):
//   - a traced run on 2 real nodes (2 processes × 1 worker thread), balanced (auto quantum,
//     communication-aware, never worse by prediction); the first application traced and balanced
//     again (merging the first file); the seed's exact algorithm (quantum 0.1 s) beside them;
//     their program times measured interleaved and repeated (medians);
//   - the validity check of Charm++'s +LBSim: the predicted per-node load of the first
//     application against the load measured in its real run;
//   - the simulator with the traced durations for 4, 16 and 64 nodes, every strategy and the
//     lower bound;
//   - the seed's Table 4 (quantum 0.01 … 10 s, test_1, real 2 nodes and predicted 4);
//   - where DFs live across runs: the first file with DFs following their writers against the
//     same file keeping them where the traced run kept them (test_1, test_3);
//   - the quantized load plots before / first / second (the seed's Fig. 10–12).
// Writes docs/balance/*.svg, docs/balance/results.json and the generated part of docs/balance.md.
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { balance, Predictor, type BalanceOptions, type BalanceResult } from '../../src/analysis/balance/balance.js';
import { weightsOf, withDurations } from '../../src/analysis/balance/weights.js';
import { fitHost, fitTransfers } from '../../src/analysis/balance/comm.js';
import { distributionOf } from '../../src/analysis/balance/file.js';
import { checkLoads } from '../../src/analysis/balance/validate.js';
import { readProfile, type Profile } from '../../src/analysis/balance/profile.js';
import { loads, quantize } from '../../src/analysis/balance/quantize.js';
import { mergeDistributions, writeDistribution, type Distribution } from '../../src/runtime/policy/distribution-file.js';
import { commonYMax, loadChartSvg, type LoadPlot } from '../../src/report/load-chart.js';
import { interleavedTimed, ROOT, runCli } from '../common.js';

export interface BalanceExpOptions {
  reps: number;
  docs: boolean;
  traces: string;
  /** 'full': the sizes of docs/balance.md (a quiet machine); 'small': a check that everything runs */
  size: 'full' | 'small';
  log(s: string): void;
}

interface App { key: string; title: string; file: string; args: Record<'full' | 'small', string[]> }

const APPS: App[] = [
  { key: 'test1', title: 'test_1 (all on node 0)', file: 'examples/seed004/seed004.fa', args: { full: ['48', '24', '2500'], small: ['48', '16', '1000'] } },
  { key: 'test2', title: 'test_2 (locator_cyclic)', file: 'examples/seed004/seed004_cyclic.fa', args: { full: ['48', '24', '2500'], small: ['48', '16', '1000'] } },
  { key: 'test3', title: 'test_3 (heat3d, x-slabs)', file: 'examples/heat3d/heat3d.fa', args: { full: ['150', '3', '3', '3', '4', '0.001', '2', '0'], small: ['48', '3', '3', '3', '2', '0.001', '2', '0'] } },
];
const NODES = 2, SIM_NODES = [4, 16, 64];
/** the seed's algorithm exactly: wall-time weights, its quantum, its move rule, no guard */
const SEED_EXACT: BalanceOptions = { strategy: 'seed', quantum: 0.1e9, comm: false, guard: false, search: false, weights: 'wall', typical: false };
/** the seed's quanta (Table 4), seconds */
const SEED_QUANTA = [0.01, 0.1, 1, 10];
const RUN = ['--nodes', String(NODES), '--threads', '1'];

const ms = (ns: number): string => (ns / 1e6).toFixed(1);
const x2 = (v: number): string => v.toFixed(2);

function mdTable(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '--:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** A file for `r` (merged over `earlier`), written to `path`. */
function writeStep(p: Profile, r: BalanceResult, trace: string, path: string, earlier: { d: Distribution; path: string }[] = []): Distribution {
  let d = distributionOf(p, r, [trace]);
  if (earlier.length) d = mergeDistributions(earlier, d);
  writeDistribution(path, d);
  return d;
}

/** The first step's cell: its decision, quantum, the best predicted gain and what the guard asked for. */
function stepCell(r: BalanceResult): string {
  const best = (r.best ?? r.predicted.next).makespan;
  return `${r.decision}${r.quantumNs ? `, q ${ms(r.quantumNs)} ms` : ''}; best predicted ${x2(r.predicted.current.makespan / best)}×${r.required !== undefined ? `, asked ≥ ${(100 * r.required).toFixed(1)} %${r.modelError !== undefined ? ` (model error ${(100 * r.modelError).toFixed(1)} %)` : ''}` : ''}`;
}

/** A traced run; its profile. */
async function traced(dir: string, app: App, size: 'full' | 'small', extra: string[] = []): Promise<Profile> {
  rmSync(dir, { recursive: true, force: true });
  await runCli([...RUN, ...extra, '--trace', dir, join(ROOT, app.file), ...app.args[size]], 600_000);
  return readProfile(dir);
}

/**
 * The predicted end of `r`'s placement replayed with one set of durations for every strategy
 * (CPU time when the trace's clock was exact, as the default step weighs): a strategy run with
 * wall-time weights (the seed's exact algorithm) predicts with wall durations of its own, which
 * a comparison must not mix with the others'. On the traced node count, on the traced machine
 * (its nodes sharing its cores, transfers paid by the system threads); on more nodes, a cluster.
 */
function commonMakespan(p: Profile, r: BalanceResult, nodes: number, lanes: number): number {
  const q = withDurations(p, weightsOf(p, p.cpuExact ? 'cpu' : 'wall', true));
  const owners = Int32Array.from(r.dfNext, (o, d) => (o >= 0 ? o : p.dfOwner[d]! % nodes));
  const tm = fitTransfers(q);
  return new Predictor(q, tm, nodes, lanes, !p.cpuExact, nodes === p.nodes ? fitHost(p, tm) : undefined).predict(r.next, owners).makespan;
}

function plotOf(p: Profile, title: string, q: number, tEnd: number): LoadPlot {
  const qt = quantize(p, q, tEnd);
  return { title, quantumNs: q, nodes: p.nodes, loads: loads(qt, p.node, p.nodes) };
}

export async function run(o: BalanceExpOptions): Promise<void> {
  const docDir = join(ROOT, 'docs/balance');
  if (o.docs) mkdirSync(docDir, { recursive: true });
  mkdirSync(o.traces, { recursive: true });
  const results: Record<string, unknown> = {};
  const sections: string[] = [];
  const realRows: string[][] = [], validRows: string[][] = [], stratRows: string[][] = [], dfRows: string[][] = [];
  const t0 = performance.now();
  for (const app of APPS) {
    o.log(`\n(d) ${app.title}: ${app.file} ${app.args[o.size].join(' ')}`);
    const dir = (s: string) => join(o.traces, `balance-${app.key}-${s}`);
    const file = (s: string) => join(o.traces, `balance-${app.key}-${s}.json`);
    // before, and the files of every variant from the same trace
    const p0 = await traced(dir('before'), app, o.size);
    const step = (opt: BalanceOptions) => balance(p0, { nodes: NODES, ...opt });
    const b1 = step({});
    writeStep(p0, b1, dir('before'), file('first'));
    const bSeed = step(SEED_EXACT);
    writeStep(p0, bSeed, dir('before'), file('seed'));
    // where DFs live: the same step with DFs kept where the traced run kept them, against following
    // their writers — both without the guard's error bar, so that a kept first step still compares them
    const bKeep = step({ dfs: 'keep', errorBar: false });
    writeStep(p0, bKeep, dir('before'), file('dfs-keep'));
    const bFollow = b1.decision === 'apply' ? b1 : step({ errorBar: false });
    const followKey = bFollow === b1 ? 'first' : 'dfsFollow';
    if (bFollow !== b1) writeStep(p0, bFollow, dir('before'), file('dfs-follow'));
    // the first application, traced, balanced again on top of the first file
    const p1 = await traced(dir('first'), app, o.size, ['--distribution', file('first')]);
    const d1 = JSON.parse(readFileSync(file('first'), 'utf8')) as Distribution;
    const b2 = balance(p1, { nodes: NODES });
    writeStep(p1, b2, dir('first'), file('second'), [{ d: d1, path: file('first') }]);
    const p2 = await traced(dir('second'), app, o.size, ['--distribution', file('second')]);
    // program times, interleaved and repeated
    const prog = [join(ROOT, app.file), ...app.args[o.size]];
    const runs: Record<string, (string | number)[]> = {
      before: [...RUN, ...prog],
      first: [...RUN, '--distribution', file('first'), ...prog],
      second: [...RUN, '--distribution', file('second'), ...prog],
      seed: [...RUN, '--distribution', file('seed'), ...prog],
    };
    if (app.key !== 'test2') runs.dfsKeep = [...RUN, '--distribution', file('dfs-keep'), ...prog];
    if (app.key !== 'test2' && bFollow !== b1) runs.dfsFollow = [...RUN, '--distribution', file('dfs-follow'), ...prog];
    const timed = await interleavedTimed(o.reps, runs);
    const t = (k: string) => timed[k as keyof typeof timed]!.programMs;
    o.log(`  program ms: ${Object.keys(runs).map((k) => `${k} ${t(k).toFixed(0)}`).join(', ')}`);
    realRows.push([app.title, t('before').toFixed(0), `${t('first').toFixed(0)} (${x2(t('before') / t('first'))}×)`, `${t('second').toFixed(0)} (${x2(t('before') / t('second'))}×)`, `${t('seed').toFixed(0)} (${x2(t('before') / t('seed'))}×)`, stepCell(b1), `${b1.moved} / ${p0.n}`]);
    // +LBSim's check: predicted per-node load of the first application against its real run
    // (the error split into placement — exact — and the drift of the same CFs' durations)
    const chk = checkLoads(p0, b1.expected, b1.next, p1, NODES, b1.weights);
    const predicted = Array.from(b1.predicted.next.busy), measured = chk.measuredNs, err = chk.error;
    const pct = (xs: number[]) => xs.map((e) => `${(100 * e).toFixed(1)} %`).join(' / ');
    validRows.push([app.title, predicted.map(ms).join(' / '), measured.map(ms).join(' / '), pct(err),
      `${chk.predictedCfs.join(' / ')} → ${chk.measuredCfs.join(' / ')} (${chk.misplaced} misplaced, ${chk.unmatched} unmatched)`, pct(chk.placementError), chk.drift.map(x2).join(' / '), pct(chk.shareError), `${ms(b1.predicted.current.makespan)} / ${ms(p0.tEnd)}`, `${ms(b1.predicted.next.makespan)} / ${ms(p1.tEnd)}`]);
    // every strategy on the same profile, 2 nodes (the real ones) and simulated 4, 16, 64
    const strat: Record<string, unknown> = {};
    for (const N of [NODES, ...SIM_NODES]) {
      const cur = balance(p0, { nodes: N, lanes: 1, strategy: 'greedy', guard: false, search: false });
      const base = commonMakespan(p0, { ...cur, next: cur.current, dfNext: new Int32Array(p0.dfs).fill(-1) }, N, 1);
      const variants: [string, BalanceOptions][] = [
        ['seed, q 0.1 s (exact)', SEED_EXACT],
        ['seed (auto q, comm, guard)', { strategy: 'seed', errorBar: false }],
        ['refine (GreedyRefine)', { strategy: 'refine', guard: false, search: false }],
        ['greedy (LPT)', { strategy: 'greedy', guard: false, search: false }],
      ];
      const row = [app.title, String(N), ms(base)];
      for (const [name, opt] of variants) {
        const r = balance(p0, { nodes: N, lanes: 1, ...opt });
        const m = commonMakespan(p0, r, N, 1);
        row.push(`${x2(base / m)}× (${x2(r.after.maxOverAvg)})`);
        strat[`${N}:${name}`] = { makespanNs: m, speedup: base / m, maxOverAvg: r.after.maxOverAvg, moved: r.moved, decision: r.decision };
      }
      row.push(`${ms(cur.bound.bound)} (${x2(base / cur.bound.bound)}×)`);
      stratRows.push(row);
    }
    // where DFs live: following their writers against where the traced run kept them
    if (app.key !== 'test2') dfRows.push([app.title, `${t('dfsKeep').toFixed(0)} → ${t(followKey).toFixed(0)} (${x2(t('dfsKeep') / t(followKey))}×)`, `${ms(bKeep.predicted.next.makespan)} → ${ms(bFollow.predicted.next.makespan)}`, `${(bKeep.predicted.next.bytesMoved / 1e6).toFixed(1)} → ${(bFollow.predicted.next.bytesMoved / 1e6).toFixed(1)}`]);
    // the seed's Fig. 10–12: one quantum and one y range for the three runs
    if (o.docs) {
      const tEnd = Math.max(p0.tEnd, p1.tEnd, p2.tEnd), q = tEnd / 100;
      const plots = [plotOf(p0, `${app.title}: before`, q, tEnd), plotOf(p1, `${app.title}: first application`, q, tEnd), plotOf(p2, `${app.title}: second application`, q, tEnd)];
      const yMax = commonYMax(plots);
      ['before', 'first', 'second'].forEach((s, k) => writeFileSync(join(docDir, `${app.key}-${s}.svg`), loadChartSvg({ ...plots[k]!, yMax })));
    }
    results[app.key] = {
      args: app.args[o.size], programMs: Object.fromEntries(Object.keys(runs).map((k) => [k, t(k)])),
      first: { decision: b1.decision, reason: b1.reason, modelError: b1.modelError, requiredGain: b1.required, bestPredictedNs: b1.best?.makespan, quantumNs: b1.quantumNs, moved: b1.moved, dfsPlaced: b1.dfsPlaced, predicted: { currentNs: b1.predicted.current.makespan, nextNs: b1.predicted.next.makespan }, strategyMs: b1.timeMs.strategy },
      second: { decision: b2.decision, reason: b2.reason, modelError: b2.modelError, moved: b2.moved },
      validity: { predictedNs: predicted, measuredNs: measured, error: err, check: chk },
      strategies: strat,
    };
  }
  // the seed's Table 4: test_1, the seed's exact algorithm at its quanta (real 2 nodes, predicted 4)
  const app = APPS[0]!, p0 = readProfile(join(o.traces, `balance-${app.key}-before`));
  const qRuns: Record<string, (string | number)[]> = { before: [...RUN, join(ROOT, app.file), ...app.args[o.size]] };
  const qPred: string[] = [];
  const keep4 = balance(p0, { nodes: 4, lanes: 1, strategy: 'greedy', guard: false, search: false });
  const base4 = commonMakespan(p0, { ...keep4, next: keep4.current, dfNext: new Int32Array(p0.dfs).fill(-1) }, 4, 1);
  for (const q of SEED_QUANTA) {
    const r = balance(p0, { ...SEED_EXACT, nodes: NODES, quantum: q * 1e9 });
    const path = join(o.traces, `balance-q${q}.json`);
    writeStep(p0, r, join(o.traces, `balance-${app.key}-before`), path);
    qRuns[`q${q}`] = [...RUN, '--distribution', path, join(ROOT, app.file), ...app.args[o.size]];
    const r4 = balance(p0, { ...SEED_EXACT, nodes: 4, lanes: 1, quantum: q * 1e9 });
    qPred.push(`${x2(base4 / commonMakespan(p0, r4, 4, 1))}×`);
  }
  const auto4 = balance(p0, { nodes: 4, lanes: 1 });
  const qt = await interleavedTimed(o.reps, qRuns);
  const qRow = (k: string) => (qt[k as keyof typeof qt]!.programMs);
  const table4 = mdTable(['nodes', 'before', ...SEED_QUANTA.map((q) => `q = ${q} s`), 'auto (ours)'], [
    [`${NODES} (real)`, `${qRow('before').toFixed(0)} ms`, ...SEED_QUANTA.map((q) => `${qRow(`q${q}`).toFixed(0)} ms (${x2(qRow('before') / qRow(`q${q}`))}×)`), '—'],
    ['4 (predicted)', '1.00×', ...qPred, `${x2(base4 / commonMakespan(p0, auto4, 4, 1))}× (q ${ms(auto4.quantumNs ?? 0)} ms)`],
  ]);
  results.table4 = { quantaS: SEED_QUANTA, programMs: Object.fromEntries(Object.keys(qRuns).map((k) => [k, qRow(k)])), predicted4: qPred };
  const seconds = (performance.now() - t0) / 1e3;
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, load average ${loadavg()[0]!.toFixed(1)} at the end, ${o.reps} interleaved repetition(s) per figure (medians), sizes "${o.size}", ${seconds.toFixed(0)} s`;
  sections.push(
    `Generated ${new Date().toISOString()} by \`npm run experiments -- --only d\` on ${machine}.`,
    '### Real runs on 2 nodes (program time, ms; speedup against before)',
    'The first step\'s cell: its decision and quantum, the best candidate\'s predicted gain, and what the guard asked for: 2 %, or the model\'s error on the traced run (the replay of the unchanged placement against the run as traced) where larger. A kept step\'s "first application" is the unchanged placement run again.',
    mdTable(['program', 'before', 'first application', 'second application', 'seed\'s exact algorithm (q 0.1 s)', 'first step', 'moved'], realRows),
    '### Predicted against measured load (the validity check of Charm++\'s +LBSim)',
    'Per-node busy time (CPU time of its fragments) the first step predicted for the next run, and what that run measured (node 0 / node 1, ms), the error split in two: placement (fragments per node predicted → run, and the traced load of the fragments each node ran against the prediction: exact when every fragment ran where it was placed) and drift (the next run\'s CPU time of the same fragments over the weight the step gave them, per node); the error of each node\'s share of the load (what is left when the whole machine ran slower or faster); the predicted and the real end of the run as traced (the step replays the unchanged placement too) and of the run that applied the file.',
    mdTable(['program', 'predicted', 'measured', 'error', 'fragments per node', 'placement error', 'drift', 'share error', 'unchanged: predicted / real end, ms', 'applied: predicted / real end, ms'], validRows),
    '### Strategies on the same profile (simulator: traced durations and transfer costs)',
    'Predicted speedup against the traced placement on N nodes × 1 lane (max/avg of the per-node load in brackets), every placement replayed with the same durations (CPU time; the seed\'s exact algorithm decides on wall time but is replayed like the others); the guard here asks for a 2 % predicted gain only, not for more than the model\'s error on the traced run (it compares strategies by prediction; the first step of the real runs asks for both); the lower bound is max(work / lanes, longest chain).',
    mdTable(['program', 'nodes', 'current, ms', 'seed, q 0.1 s (exact)', 'seed (auto q, comm, guard)', 'refine (GreedyRefine)', 'greedy (LPT)', 'lower bound, ms'], stratRows),
    '### The seed\'s Table 4: test_1 with quanta 0.01–10 s',
    table4,
    '### Where DFs live across runs (the first file — or, where the guard kept the placement, the step without its error bar — with DFs kept where the traced run kept them → following their writers)',
    mdTable(['program', 'real program time, ms', 'predicted end, ms', 'predicted bytes moved, MB'], dfRows),
    '### Quantized load (the seed\'s Fig. 10–12)',
    APPS.map((a) => `${a.title}: ![before](balance/${a.key}-before.svg) ![first](balance/${a.key}-first.svg) ![second](balance/${a.key}-second.svg)`).join('\n\n'),
  );
  o.log(`\n${sections.join('\n\n')}`);
  if (!o.docs) return;
  writeFileSync(join(docDir, 'results.json'), JSON.stringify({ machine, size: o.size, reps: o.reps, results }, null, 2) + '\n');
  const md = join(ROOT, 'docs/balance.md');
  if (existsSync(md)) {
    const text = readFileSync(md, 'utf8');
    const begin = '<!-- experiments: begin (npm run experiments -- --only d) -->', end = '<!-- experiments: end -->';
    const i = text.indexOf(begin), j = text.indexOf(end);
    if (i >= 0 && j > i) writeFileSync(md, `${text.slice(0, i + begin.length)}\n\n${sections.join('\n\n')}\n\n${text.slice(j)}`);
  }
}
