// The manifest as readers accept it: every field a reader uses is checked here, once, so a
// damaged manifest is one message naming the field (`manifest.json: field "codes": expected
// array, got null`) instead of a TypeError deep in an analysis. Fields only some writers record
// are optional; unknown fields are kept (newer writers may add some).
import { z } from 'zod';
import { STATUS } from './schema.js';
import type { TraceManifest } from './manifest.js';

const int = z.number().int();
const count = int.min(1).max(1 << 20);

const site = z.object({
  label: z.string(),
  code: int.min(-1),
  kind: z.enum(['call', 'subcall', 'for', 'while', 'if']),
  file: z.string(),
  line: int.min(0),
  col: int.min(0),
  spawnNo: int.min(0),
}).passthrough();

const fileEntry = z.object({ node: int.min(0), thread: int.min(0), path: z.string().regex(/^[^/\\]+$/, 'a file name inside the trace directory') }).passthrough();

export const manifestSchema = z.object({
  format: z.literal('luna-ts-trace'),
  version: int,
  program: z.string(),
  args: z.array(z.string()),
  nodes: count,
  threads: count,
  cores: count.optional(),
  machines: z.array(z.object({ host: z.string(), cores: count, nodes: z.array(int.min(0)), cpus: count.optional(), nodeCpus: z.array(count).optional() }).passthrough()).optional(),
  launcher: z.string().optional(),
  codes: z.array(z.string()),
  sites: z.array(site).optional(),
  policy: z.string().optional(),
  clock: z.object({ cpuExact: z.boolean(), offsets: z.array(z.number().finite()) }).passthrough(),
  startedAt: z.string(),
  status: z.enum(STATUS).optional(),
  message: z.string().optional(),
  versions: z.object({ lunaTs: z.string(), node: z.string() }).passthrough(),
  files: z.array(fileEntry),
}).passthrough();

/** What is wrong with `m` as a manifest (one problem: the first field in document order), or undefined. */
export function manifestProblem(m: unknown): string | undefined {
  const r = manifestSchema.safeParse(m);
  if (r.success) {
    const mf = r.data as unknown as TraceManifest;
    const bad = mf.files.find((f) => f.node >= mf.nodes);
    if (bad) return `field "files": ${bad.path} is a file of node ${bad.node}, but field "nodes" says ${mf.nodes} node(s)`;
    const where = new Map<number, number>();
    for (const [i, mc] of (mf.machines ?? []).entries()) {
      for (const n of mc.nodes) {
        if (n >= mf.nodes) return `field "machines[${i}].nodes": node ${n}, but field "nodes" says ${mf.nodes} node(s)`;
        if (where.has(n)) return `field "machines[${i}].nodes": node ${n} is also on machines[${where.get(n)}]`;
        where.set(n, i);
      }
    }
    const code = mf.sites?.findIndex((s) => s.code >= mf.codes.length) ?? -1;
    if (code >= 0) return `field "sites[${code}].code": ${mf.sites![code]!.code} names no entry of "codes" (${mf.codes.length} entries)`;
    return undefined;
  }
  const issue = r.error.issues[0]!;
  const field = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(top level)';
  return `field "${field}": ${describeIssue(issue, valueAt(m, issue.path))}`;
}

function valueAt(m: unknown, path: readonly (string | number)[]): unknown {
  let v = m;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[p] : undefined;
  return v;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v === undefined) return 'nothing (the field is missing)';
  if (typeof v === 'number') return Number.isInteger(v) ? `${v}` : `the number ${v}`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  return typeof v;
}

function describeIssue(issue: z.ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type': return `expected ${issue.expected}, got ${kindOf(value)}`;
    case 'invalid_literal': return `expected ${JSON.stringify(issue.expected)}, got ${kindOf(value)}`;
    case 'invalid_enum_value': return `expected one of ${issue.options.map((o) => JSON.stringify(o)).join(', ')}, got ${kindOf(value)}`;
    case 'too_small': return `expected ${issue.type === 'array' ? `at least ${issue.minimum} element(s)` : `at least ${issue.minimum}`}, got ${kindOf(value)}`;
    case 'too_big': return `expected at most ${issue.maximum}, got ${kindOf(value)}`;
    case 'invalid_string': return `expected ${issue.message}, got ${kindOf(value)}`;
    default: return `${issue.message}, got ${kindOf(value)}`;
  }
}
