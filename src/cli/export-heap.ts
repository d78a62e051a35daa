// The young generation of a large export. `luna` starts node with a 2 MiB semi-space (bin/luna:
// right for a runtime node, whose garbage is small and whose pauses must be short), but an export
// resolves a whole trace in one pass: its records live a few thousand CFs, so with 2 MiB nearly
// all of them survive a scavenge or two and are copied, and the collector takes a large share of
// the pass. V8 fixes the young generation's size when the isolate starts, so the command
// re-executes itself once with a larger one, output and progress bar inherited, for a trace large
// enough that the collector outweighs a second start (EXPORT_HEAP_MIN_BYTES).
import { spawnSync } from 'node:child_process';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { constants } from 'node:os';

/**
 * Semi-space of an export, MiB. Chosen by CPU time of `luna export perfetto` and `otf2` at 10^6
 * fragments in fresh processes (bench/exports.ts runs both through the command): see
 * docs/benchmarks.md, "Exports".
 */
export const EXPORT_SEMI_SPACE_MB = 64;
/** Traces smaller than this export in the process as started (a second node start costs ~0.1 s). */
export const EXPORT_HEAP_MIN_BYTES = 16 << 20;
const FLAG = '--max-semi-space-size';
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

/** Whether this process is the `luna` command (not a library caller or a test running cli()). */
function isLunaCommand(): boolean {
  try {
    const p = realpathSync(process.argv[1] ?? '');
    return basename(p) === 'luna' && basename(dirname(p)) === 'bin';
  } catch {
    return false;
  }
}

/** The semi-space this process was started with (MiB; undefined: V8's default). */
function semiSpace(): number | undefined {
  let v: number | undefined;
  for (const a of process.execArgv) if (a.startsWith(`${FLAG}=`)) v = Number(a.slice(FLAG.length + 1));
  return v;
}

/**
 * Run this export command again in a node with the export's young generation, when that pays:
 * its exit code, or undefined to go on in this process (small trace, already sized, not the
 * `luna` command, LUNA_EXPORT_HEAP=0, or the re-execution could not start).
 */
export function reexecForExport(dir: string): number | undefined {
  if (process.env[MARK] !== undefined || !isLunaCommand()) return undefined;
  const now = semiSpace();
  if (now !== undefined && now >= EXPORT_SEMI_SPACE_MB) return undefined;
  if (traceBytes(dir) < EXPORT_HEAP_MIN_BYTES) return undefined;
  const flags = process.execArgv.filter((a) => !a.startsWith(`${FLAG}=`));
  const r = spawnSync(process.execPath, [...flags, `${FLAG}=${EXPORT_SEMI_SPACE_MB}`, process.argv[1]!, ...process.argv.slice(2)], {
    stdio: 'inherit', env: { ...process.env, [MARK]: '1' },
  });
  if (r.error) return undefined;
  if (r.signal) return 128 + (constants.signals[r.signal] ?? 0);
  return r.status ?? 1;
}
