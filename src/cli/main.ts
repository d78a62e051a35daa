// The `luna` command line: subcommands, plus the original LuNA driver form
// `luna [-q] [-D k=v] [--worker-threads-count=N] prog.fa [args…]`.
// A spawned node's secret leaves the environment before anything can start a child process.
import '../runtime/transport/secret.js';
import { Command, CommanderError, Option } from 'commander';
import { version } from './version.js';
export { fragmentsRun } from './work.js';
import { exitClosedStdio } from '../core/exit.js';
import type { RunCliOptions } from './run.js';
import { boundedInt, misspeltCommand, normalizeArgv as normalizeArgs } from './argv.js';
import { MAX_LOCAL_NODES, MAX_THREADS, NODES_WHY, THREADS_WHY } from '../runtime/limits.js';

const SUBCOMMANDS = new Set(['run', 'spmd', 'check', 'export', 'analyze', 'report', 'balance', 'help', 'node']);


function collectDefine(v: string, acc: Record<string, string>): Record<string, string> {
  const i = v.indexOf('=');
  if (i < 0) acc[v] = ''; else acc[v.slice(0, i)] = v.slice(i + 1);
  return acc;
}

/** Original driver form → `run` with our option names. */
export function normalizeArgv(argv: string[]): string[] {
  return normalizeArgs(argv, SUBCOMMANDS);
}

export async function cli(argv: string[]): Promise<number> {
  // `luna analyze slow … | head`: a closed pipe ends the output quietly, not with a stack trace.
  for (const s of [process.stdout, process.stderr]) {
    s.on('error', (e: NodeJS.ErrnoException) => { if (e.code === 'EPIPE') exitClosedStdio(Number(process.exitCode ?? 0)); throw e; });
  }
  let code = 0;
  const program = new Command('luna')
    .description('luna-ts: run, check, trace and analyse LuNA fragmented programs')
    .version(version(), '-V, --version')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  program.command('run')
    .description('run a LuNA program (also: luna [options] prog.fa [args…])')
    .argument('<program>', 'the .fa file')
    .argument('[args...]', "main's int/real/string arguments")
    .option('-t, --threads <T>', 'worker threads per node (default: the machine\'s cores shared by its nodes)', boundedInt('--threads', MAX_THREADS, THREADS_WHY))
    // the original driver's spelling of --threads, parsed under its own name so its errors name it
    .addOption(new Option('--worker-threads-count <T>').hideHelp().argParser(boundedInt('--worker-threads-count', MAX_THREADS, THREADS_WHY)))
    .option('-n, --nodes <N>', 'node processes on this machine (under mpirun/srun: taken from the launcher)', boundedInt('--nodes', MAX_LOCAL_NODES, NODES_WHY))
    .option('-D, --define <key[=value]>', 'predefine a macro (repeatable)', collectDefine, {})
    .option('--ucodes <files>', 'ucode files, comma-separated: TypeScript modules and C++ sources (default: ucodes.ts and ucodes.cpp beside the program)')
    .option('--cxxflags <flags>', 'flags for compiling C++ ucodes (default: $LUNA_CXXFLAGS or -O3)')
    .option('--trace <dir>', 'record a trace of the run into DIR')
    .option('-q, --quiet', 'print nothing but the program output and errors')
    .addOption(new Option('--bind <host>', 'address to listen on for other nodes (default 127.0.0.1)'))
    .option('--priorities-from <trace>', 'run ready fragments in critical-path order measured in an earlier run\'s trace')
    .option('--record <dir>', 'record where and in which order every fragment ran (trace playback)')
    .option('--replay <dir>', 'replay a schedule recorded with --record')
    .option('--distribution <file>', 'place the fragments a distribution file names (written by luna balance) where it says')
    .option('--heartbeat <duration>', 'declare a silent node lost after this long (default 5s; off to disable)')
    .option('--warm-start', 'start the program once the worker threads have booted and loaded the ucodes (its span then measures the program alone); meanwhile the system thread rehearses the program without running ucodes, to warm its code, and two or more workers that feed each other rehearse their per-fragment path together')
    .option('--cf-timeout <duration>', 'fail the run when a fragment runs longer than this (e.g. 30s); fragments then run on worker threads only')
    .option('--timing', 'print the program time (from its start, after loading, to its end), its compile and where its fragments ran, as JSON on stderr')
    .option('--no-cache', 'compile the program afresh, neither reading nor writing the compiled-program cache (also LUNA_PROGRAM_CACHE=off)')
    .passThroughOptions()
    .action(async (file: string, args: string[], o: RunCliOptions & { workerThreadsCount?: number }) => {
      // `luna run prog.fa -- 5`: the separator ends the options, it is not an argument of main
      const mainArgs = args[0] === '--' ? args.slice(1) : args;
      const { workerThreadsCount, ...opts } = o;
      code = misspeltCommand(file, program.commands.map((c) => c.name())) ?? await (await import('./run.js')).runCommand(file, mainArgs, { ...opts, threads: opts.threads ?? workerThreadsCount });
    });

  program.command('spmd')
    .description('run an SPMD/PGAS program (TypeScript): THREADS ranks over worker threads and node processes')
    .argument('<program>', 'the .ts or .js file (its default export, if a function, runs on every rank)')
    .argument('[args...]', 'arguments handed to the program')
    .option('-t, --threads <T>', 'ranks in the whole run, dealt to the nodes in equal blocks (default: the machine\'s cores)', boundedInt('--threads', MAX_THREADS, THREADS_WHY))
    .option('-n, --nodes <N>', 'node processes on this machine (under mpirun/srun: taken from the launcher)', boundedInt('--nodes', MAX_LOCAL_NODES, NODES_WHY))
    .option('--trace <dir>', 'record a trace of the run into DIR')
    .addOption(new Option('--bind <host>', 'address to listen on for other nodes (default 127.0.0.1)'))
    .option('-q, --quiet', 'print nothing but the program output and errors')
    .passThroughOptions()
    .action(async (file: string, args: string[], o: import('./spmd.js').SpmdCliOptions) => { code = await (await import('./spmd.js')).spmdCommand(file, args, o); });

  program.command('check')
    .description('check a LuNA program and print every diagnostic')
    .argument('<program>', 'the .fa file')
    .option('-D, --define <key[=value]>', 'predefine a macro (repeatable)', collectDefine, {})
    .option('--ucodes <files>', 'ucode files, comma-separated: TypeScript modules and C++ sources (default: ucodes.ts and ucodes.cpp beside the program)')
    .option('--cxxflags <flags>', 'flags for compiling C++ ucodes (default: $LUNA_CXXFLAGS or -O3)')
    .option('--json', 'diagnostics as JSON')
    .option('--no-cache', 'compile the program afresh, neither reading nor writing the compiled-program cache (also LUNA_PROGRAM_CACHE=off)')
    .action(async (file: string, o: { define: Record<string, string>; ucodes?: string; cxxflags?: string; json?: boolean; cache: boolean }) => { code = await (await import('./check.js')).checkCommand(file, o); });

  const exp = program.command('export').description('convert a trace to other formats');
  exp.command('perfetto')
    .description('Perfetto protobuf (TrackEvent; default) or Chrome trace event JSON, for ui.perfetto.dev and trace_processor')
    .argument('<trace>', 'trace directory written by luna run --trace')
    .requiredOption('-o, --output <file>', 'output file (.pftrace; .json picks JSON; - : standard output)')
    .option('--format <format>', 'proto (default) or json')
    .action(async (dir: string, o: { output: string; format?: string }) => { code = await (await import('./export.js')).exportPerfettoCommand(dir, o.output, o.format); });
  exp.command('tables')
    .description('the trace as tables (fragments, transfers, dfs, system, counters, migrations, run) for pandas, polars, DuckDB')
    .argument('<trace>', 'trace directory written by luna run --trace')
    .option('-o, --output <dir>', 'output directory (default: TRACE.tables beside the trace)')
    .option('--format <formats>', 'csv, parquet, or csv,parquet', 'csv')
    .action(async (dir: string, o: { output?: string; format: string }) => { code = await (await import('./export.js')).exportTablesCommand(dir, o); });

  exp.command('otf2')
    .description('an OTF2 archive (traces.otf2, traces.def, traces/) for Vampir, Scalasca, Cube and otf2-print')
    .argument('<trace>', 'trace directory written by luna run --trace')
    .option('-o, --output <dir>', 'output directory (default: TRACE.otf2 beside the trace)')
    .action(async (dir: string, o: { output?: string }) => { code = await (await import('./export.js')).exportOtf2Command(dir, o); });

  const an = program.command('analyze').description('performance analyses of a trace');
  an.command('slow')
    .description('SLOW: where the time went (Starvation, Latency, Overhead, Waiting, Useful work)')
    .argument('<trace>', 'trace directory')
    .option('--json', 'machine-readable report')
    .option('--model <model>', 'kireev2024 (default) or litvinov2017', 'kireev2024')
    .option('--compare', 'report both models side by side')
    .option('--window <duration>', 'also a time series with this window, e.g. 10ms')
    .action(async (dir: string, o: { json?: boolean; model: string; window?: string; compare?: boolean }) => { code = await (await import('./analyze.js')).analyzeSlowCommand(dir, o); });

  an.command('patterns')
    .description('patterns of inefficient behaviour (seed 001): waits at barriers, collectives and locks of SPMD ranks, late producers, slow transfers and imbalance of fragmented programs; per pattern, call site and rank, worst first')
    .argument('<trace>', 'trace directory')
    .option('--json', 'machine-readable report')
    .option('--compare', 'also Scalasca\'s formulas for the patterns it shares, on the same collectives')
    .option('--quantum <duration>', 'time quantum of the imbalance pattern, e.g. 10ms (default: the run in 32 quanta)')
    .action(async (dir: string, o: { json?: boolean; compare?: boolean; quantum?: string }) => { code = await (await import('./analyze.js')).analyzePatternsCommand(dir, o); });

  program.command('report')
    .description('one self-contained HTML page of a traced run (SLOW, timeline, critical path, blame, advice); two traces: compared side by side')
    .argument('<trace...>', 'trace directory (two: A before, B after)')
    .option('-o, --output <file>', 'output .html file (- : standard output)', 'report.html')
    .option('--distribution <file>', 'also show the load per node with the fragments placed as this distribution file says')
    .action(async (dirs: string[], o: { output?: string; distribution?: string }) => { code = await (await import('./report.js')).reportCommand(dirs, o); });

  program.command('balance')
    .description('profile-based distribution (seed 004): from a traced run, where each fragment should run next time (a file for luna run --distribution)')
    .argument('<trace>', 'trace directory of the run to balance')
    .option('--quantum <duration|auto>', 'time quantum of the load analysis, e.g. 100ms; auto: the best predicted of a sweep', 'auto')
    .option('-s, --strategy <name>', 'seed (the seed\'s algorithm, formula 6), refine (GreedyRefine), greedy (LPT)', 'seed')
    .option('-o, --output <file>', 'distribution file to write', 'distribution.json')
    .option('--merge <file>', 'an earlier step\'s distribution file, whose placements the new file keeps (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('-n, --nodes <N>', 'nodes to balance over (default: the traced run\'s)', boundedInt('--nodes', 1 << 20, 'the distribution file\'s limit'))
    .option('--lanes <T>', 'worker threads per node the predictions assume (default: the traced run\'s)', boundedInt('--lanes', MAX_THREADS, THREADS_WHY))
    .option('--no-comm', 'ignore the transfers a move adds (the seed\'s rule)')
    .option('--no-guard', 'apply the strategy\'s placement even when the simulator predicts no gain')
    .option('--no-error-bar', 'the guard asks for a 2 % predicted gain only, not more than the model\'s error on the traced run')
    .option('--no-search', 'no local search on the predicted makespan after the strategy')
    .option('--no-groups', 'no moves of whole affinity groups (fragments joined by bulk data, moved with it)')
    .option('--no-host', 'predict each node on cores of its own, a transfer only a delay (default: the traced machine, its nodes sharing its cores, the system threads paying for transfers)')
    .option('--contention <f>', 'on the traced machine: CPU time of work with all its cores busy over its time alone (default 1.316, measured on the 2-vCPU development machine; 1: cores that do not slow each other)')
    .option('--calibrate', 'on the traced machine: each node\'s threads get the share of a core its workers got in the traced run (over the replay\'s share), not a whole core')
    .option('--dfs <follow|keep>', 'DFs live with their writers (follow), or where the traced run kept them', 'follow')
    .option('--tolerance <x>', 'GreedyRefine\'s tolerance (≥ 1)')
    .option('--weights <wall|cpu>', 'a fragment\'s weight: its wall time (the seed\'s) or its thread CPU time (default when the trace\'s CPU clock is exact)')
    .option('--no-typical', 'a fragment weighs its own measurement (the seed\'s), not the median of its class (same code, same bytes read and written)')
    .option('--plot <dir>', 'write the quantized load plots (before.svg, after.svg) into DIR')
    .option('--json', 'machine-readable summary')
    .action(async (trace: string, o: import('./balance.js').BalanceCliOptions) => { code = await (await import('./balance.js')).balanceCommand(trace, o); });

  if (argv.length === 0) {
    process.stderr.write(program.helpInformation());
    return 2;
  }
  try {
    await program.parseAsync(normalizeArgv(argv), { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return 0;
      // `luna help`: exit 0; `luna export` without its subcommand: the help on stderr, exit 2
      if (e.code === 'commander.help') return e.exitCode === 0 ? 0 : 2;
      if (e.code === 'luna.badArg') process.stderr.write(`luna: ${e.message}\n`);
      return e.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`luna: internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
    return 1;
  }
  return code;
}
