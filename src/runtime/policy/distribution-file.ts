// Distribution files (`luna balance` writes them, `luna run --distribution FILE` applies them):
// where fragments run and DFs live next time, keyed by identities that are the same in every
// run of the program — CF global ids (core/cfid.ts) and DF keys (core/dfkey.ts: the declaring
// block's global id, the name, the indices). A file holds the moves of every balancing step
// applied so far: each step's file merges the earlier ones (seed 004 §3.5), later moves winning.
//
// A file may be large (a million entries): the header is checked with a schema, the entries
// by one loop (a schema over a million-key record costs seconds).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { isGid } from '../../core/cfid.js';
import { isDfKey } from '../../core/dfkey.js';
import { describeValue, fieldProblem } from '../../core/field-problem.js';

export const DISTRIBUTION_FORMAT = 'luna-ts-distribution';
export const DISTRIBUTION_VERSION = 1;

/** What the balancer predicted for a placement (the simulator's replay of the traced run). */
export interface PredictedLoad {
  /** predicted end of the run, ns */
  makespanNs: number;
  /** busy time per node, ns */
  perNodeNs: number[];
  /** max / mean of perNodeNs */
  maxOverAvg: number;
}

export interface Distribution {
  format: typeof DISTRIBUTION_FORMAT;
  version: number;
  /** the program and arguments of the traced run it was made from (a hint: what matches applies) */
  program: string;
  args: string[];
  /** nodes it places onto: every entry is below this */
  nodes: number;
  /** apply: entries place fragments; keep: the balancer kept the current placement (`reason` says why), entries hold only earlier steps' */
  decision: 'apply' | 'keep';
  reason?: string;
  /** how it was made: strategy, quantum (ns), the traces, the files merged */
  made: { strategy: string; quantumNs?: number; traces: string[]; merged: string[]; at: string };
  /** CF global id → node */
  cfs: Record<string, number>;
  /** DF key → node */
  dfs: Record<string, number>;
  predicted?: { current: PredictedLoad; next: PredictedLoad };
}

/** A distribution file that cannot be used: the message names the file, the entry and the field. */
export class DistributionError extends Error {}

const header = z.object({
  format: z.literal(DISTRIBUTION_FORMAT),
  version: z.literal(DISTRIBUTION_VERSION),
  program: z.string(),
  args: z.array(z.string()),
  nodes: z.number().int().min(1).max(1 << 20),
  decision: z.enum(['apply', 'keep']),
  reason: z.string().optional(),
  made: z.object({ strategy: z.string(), quantumNs: z.number().positive().optional(), traces: z.array(z.string()), merged: z.array(z.string()), at: z.string() }).passthrough(),
  cfs: z.record(z.unknown()),
  dfs: z.record(z.unknown()),
}).passthrough();

/** Read and check `path`. */
export function readDistribution(path: string): Distribution {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new DistributionError(`${path}: ${code === 'ENOENT' ? 'no such file (luna balance TRACE -o FILE writes one)' : code === 'EISDIR' ? 'is a directory, not a distribution file' : (e as Error).message}`);
  }
  let v: unknown;
  try { v = JSON.parse(text); } catch (e) { throw new DistributionError(`${path}: not valid JSON (${(e as Error).message})`); }
  return checkDistribution(v, path);
}

/** `v` as a distribution, or the first problem found (named by file, entry and field). */
export function checkDistribution(v: unknown, path: string): Distribution {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new DistributionError(`${path}: not a luna-ts distribution (expected a JSON object, got ${describeValue(v)})`);
  const o = v as Record<string, unknown>;
  if (o.format !== DISTRIBUTION_FORMAT) throw new DistributionError(`${path}: not a luna-ts distribution (field "format" is ${describeValue(o.format)}, expected "${DISTRIBUTION_FORMAT}")`);
  if (o.version !== DISTRIBUTION_VERSION) throw new DistributionError(`${path}: distribution version ${describeValue(o.version)} is not supported (this luna-ts reads version ${DISTRIBUTION_VERSION})`);
  const r = header.safeParse(v);
  if (!r.success) {
    throw new DistributionError(`${path}: ${fieldProblem(r.error, v)}`);
  }
  const d = r.data as unknown as Distribution;
  checkEntries(path, 'cfs', d.cfs, d.nodes, (k) => isGid(k) && k !== '', 'a CF global id such as 3_5_0');
  checkEntries(path, 'dfs', d.dfs, d.nodes, isDfKey, 'a DF key such as A#3_5.1.2');
  return d;
}

function checkEntries(path: string, field: 'cfs' | 'dfs', entries: Record<string, unknown>, nodes: number, keyOk: (k: string) => boolean, what: string): void {
  for (const k in entries) {
    const n = entries[k];
    if (!keyOk(k)) throw new DistributionError(`${path}: entry ${field}[${JSON.stringify(k)}]: the key is not ${what}`);
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= nodes) {
      throw new DistributionError(`${path}: entry ${field}[${JSON.stringify(k)}]: the node must be a whole number from 0 to ${nodes - 1} (field "nodes" is ${nodes}), got ${describeValue(n)}`);
    }
  }
}

/** Why `d` cannot be applied to a run of `nodes` nodes, or undefined. */
export function unfitFor(d: Distribution, nodes: number, path: string): string | undefined {
  if (d.nodes <= nodes) return undefined;
  let top = -1;
  for (const k in d.cfs) if (d.cfs[k]! > top) top = d.cfs[k]!;
  for (const k in d.dfs) if (d.dfs[k]! > top) top = d.dfs[k]!;
  if (top < nodes) return undefined; // made for more nodes, but places nothing beyond this run's
  return `${path} places fragments on ${d.nodes} nodes (up to node ${top}); this run has ${nodes}: run on ${d.nodes} nodes, or balance for ${nodes} (luna balance TRACE --nodes ${nodes})`;
}

/**
 * The earlier files' entries with `next`'s on top (a fragment moved again goes where the latest
 * step says); the header is `next`'s.
 */
export function mergeDistributions(earlier: readonly { d: Distribution; path: string }[], next: Distribution): Distribution {
  const cfs: Record<string, number> = {}, dfs: Record<string, number> = {};
  for (const { d, path } of earlier) {
    if (d.nodes > next.nodes) throw new DistributionError(`${path}: made for ${d.nodes} nodes, the new distribution for ${next.nodes}: merge files of one node count`);
    Object.assign(cfs, d.cfs);
    Object.assign(dfs, d.dfs);
  }
  Object.assign(cfs, next.cfs);
  Object.assign(dfs, next.dfs);
  return { ...next, cfs, dfs, made: { ...next.made, merged: [...earlier.map((e) => e.path), ...next.made.merged] } };
}

/** Write `d` to `path` (atomically: a reader never sees half a file). */
export function writeDistribution(path: string, d: Distribution): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(d, null, 1) + '\n');
  renameSync(tmp, path);
}
