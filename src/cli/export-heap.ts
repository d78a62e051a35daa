// The young generation of a large export. `luna` starts node with a 2 MiB semi-space (bin/luna:
// right for a runtime node, whose garbage is small and whose pauses must be short), but an export
// resolves a whole trace in one pass: its records live a few thousand CFs, so with 2 MiB nearly
// all of them survive a scavenge or two and are copied, and the collector takes a large share of
// the pass. V8 fixes the young generation's size when the isolate starts, so the command
// re-executes itself once with a larger one, output and progress bar inherited, for a trace large
// enough that the collector outweighs a second start (EXPORT_HEAP_MIN_BYTES). The re-executed
// command sees its own semi-space and runs the export. Opt-in (LUNA_EXPORT_HEAP=1) until a quiet
// measurement shows the gain (EXPORT_HEAP_BY_DEFAULT).
import { spawnSync } from 'node:child_process';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { constants } from 'node:os';

/**
 * Semi-space of an export, MiB. A profile of the model pass at 10^6 fragments: garbage collection
 * 3.5 s with V8's default (16 MiB), 2.2 s with 64 MiB.
 */
export const EXPORT_SEMI_SPACE_MB = 64;
/**
 * Whether a large trace's export re-executes without being asked (LUNA_EXPORT_HEAP unset). Not
 * yet: `luna export perfetto` / `otf2` at 10^6 fragments under load (load 12–20, fresh processes
 * alternated, CPU s of the command) took 15.6 / 15.2 and 22.3 / 20.2 s with 2 MiB against
 * 19.1 / 14.7 and 22.1 / 19.5 s with 64 MiB, RSS 115 → 310 and 408 → 600 MiB: no gain shown
 * beyond the noise. Decided by the quiet bench (cliPerfettoProtoCpuMs against
 * cliPerfettoProtoSmallYoungCpuMs, docs/benchmarks.md "exports").
 */
export const EXPORT_HEAP_BY_DEFAULT = false;
/** Traces smaller than this export in the process as started (a second node start costs ~0.1 s). */
export const EXPORT_HEAP_MIN_BYTES = 16 << 20;
const FLAG = '--max-semi-space-size';
/** LUNA_EXPORT_HEAP=0: never re-execute; 1: whatever the trace's size */
const MARK = 'LUNA_EXPORT_HEAP';

/** Bytes of the trace's record files (0 when unreadable: the export then says what is wrong). */
function traceBytes(dir: string): number {
  try {
    let n = 0;
    for (const f of readdirSync(dir)) if (f.endsWith('.lt')) n += statSync(join(dir, f)).size;
    return n;
  } catch {
    return 0;
  }
}

/** Whether `script` (process.argv[1]) is the `luna` command (not a library caller or a test running cli()). */
function isLunaCommand(script: string | undefined): boolean {
  try {
    const p = realpathSync(script ?? '');
    return basename(p) === 'luna' && basename(dirname(p)) === 'bin';
  } catch {
    return false;
  }
}

/** The semi-space node was started with (MiB; undefined: V8's default). */
function semiSpace(execArgv: readonly string[]): number | undefined {
  let v: number | undefined;
  for (const a of execArgv) if (a.startsWith(`${FLAG}=`)) v = Number(a.slice(FLAG.length + 1));
  return v;
}

/**
 * The node arguments that run the export command again with the export's young generation, or
 * undefined to go on in this process: LUNA_EXPORT_HEAP=0 (or unset, while EXPORT_HEAP_BY_DEFAULT is
 * false), not the `luna` command, already sized (the re-executed command itself), or a trace under
 * EXPORT_HEAP_MIN_BYTES (LUNA_EXPORT_HEAP=1: whatever its size).
 */
export function exportHeapArgs(dir: string, env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv, argv: readonly string[] = process.argv, byDefault = EXPORT_HEAP_BY_DEFAULT): string[] | undefined {
  const want = env[MARK];
  if (want === '0' || (want !== '1' && !byDefault) || !isLunaCommand(argv[1])) return undefined;
  const now = semiSpace(execArgv);
  if (now !== undefined && now >= EXPORT_SEMI_SPACE_MB) return undefined;
  if (want !== '1' && traceBytes(dir) < EXPORT_HEAP_MIN_BYTES) return undefined;
  return [...execArgv.filter((a) => !a.startsWith(`${FLAG}=`)), `${FLAG}=${EXPORT_SEMI_SPACE_MB}`, argv[1]!, ...argv.slice(2)];
}

/**
 * Run this export command again in a node with the export's young generation when that pays
 * (exportHeapArgs): its exit code, or undefined to go on in this process (also when the second
 * node could not start).
 */
export function reexecForExport(dir: string): number | undefined {
  const args = exportHeapArgs(dir);
  if (!args) return undefined;
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (r.error) return undefined;
  if (r.signal) return 128 + (constants.signals[r.signal] ?? 0);
  return r.status ?? 1;
}
