// Schedule files of trace playback (`luna run --record DIR`, `--replay DIR`): DIR/schedule.json
// says what ran (program, arguments, nodes, lanes); DIR/node<N>.json holds node N's atomic CFs
// in the order they ran, each with its lane and whether the system thread ran it. Every node writes its own file, so recording
// needs no gathering at the end of the run.
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { FileError, makeDirectory, readRegular, reason } from '../core/files.js';
import { join } from 'node:path';
import type { Schedule, ScheduleEntry } from './policy/playback.js';

const FORMAT = 'luna-ts-schedule';
/** 2: entries say whether the system thread ran the CF */
const VERSION = 2;

export class ScheduleError extends Error {}

function writeJson(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value));
  renameSync(tmp, path);
}

/** Node `rank` writes its part; rank 0 also writes the index. */
export function writeSchedule(dir: string, rank: number, meta: Omit<Schedule, 'order'>, order: ScheduleEntry[]): void {
  makeDirectory(dir, 'schedule directory');
  writeJson(join(dir, `node${rank}.json`), { format: FORMAT, version: VERSION, node: rank, order });
  if (rank === 0) writeJson(join(dir, 'schedule.json'), { format: FORMAT, version: VERSION, ...meta });
}

function readJson(path: string): Record<string, unknown> {
  let v: unknown;
  try { v = JSON.parse(readRegular(path, 'schedule file')); } catch (e) {
    const why = e instanceof FileError ? e.problem : (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : (e as NodeJS.ErrnoException).code !== undefined ? reason(e) : `not valid JSON (${(e as Error).message})`;
    throw new ScheduleError(`${path}: ${why}`);
  }
  if (!v || typeof v !== 'object' || (v as { format?: unknown }).format !== FORMAT) throw new ScheduleError(`${path}: not a luna-ts schedule`);
  if ((v as { version?: unknown }).version !== VERSION) throw new ScheduleError(`${path}: schedule version ${String((v as { version?: unknown }).version)} is not supported (this luna-ts reads version ${VERSION})`);
  return v as Record<string, unknown>;
}

export function readSchedule(dir: string): Schedule {
  if (!existsSync(dir)) throw new ScheduleError(`${dir}: no such schedule directory (record one with luna run --record ${dir})`);
  const meta = readJson(join(dir, 'schedule.json'));
  const nodes = meta.nodes;
  if (!Number.isInteger(nodes) || (nodes as number) < 1) throw new ScheduleError(`${join(dir, 'schedule.json')}: field "nodes" must be a positive integer`);
  const order: ScheduleEntry[][] = [];
  for (let n = 0; n < (nodes as number); n++) {
    const path = join(dir, `node${n}.json`);
    const part = readJson(path);
    const list = part.order;
    if (!Array.isArray(list)) throw new ScheduleError(`${path}: field "order" must be a list of [global id, lane, inline]`);
    const bad = list.findIndex((x) => !Array.isArray(x) || typeof x[0] !== 'string' || !Number.isInteger(x[1]) || x[1] < 0 || (x[2] !== 0 && x[2] !== 1));
    if (bad >= 0) throw new ScheduleError(`${path}: order[${bad}] is ${JSON.stringify(list[bad])}, expected [global id, lane ≥ 0, inline 0 or 1]`);
    order.push(list as ScheduleEntry[]);
  }
  return {
    program: String(meta.program ?? '?'), args: Array.isArray(meta.args) ? meta.args.map(String) : [],
    nodes: nodes as number, threads: Number(meta.threads ?? 1), order,
  };
}
