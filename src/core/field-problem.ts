// One wording for what is wrong with a field of a file checked against a schema (a trace
// manifest, a distribution file): `field "sites[3].code": expected number, got "x"`.
import type { z } from 'zod';

/** The value at `path` inside `v` (undefined where the path leads nowhere). */
export function valueAt(v: unknown, path: readonly (string | number)[]): unknown {
  let x = v;
  for (const p of path) x = x !== null && typeof x === 'object' ? (x as Record<string | number, unknown>)[p] : undefined;
  return x;
}

/** A value as a message shows it: `null`, `array`, `3`, `the number 1.5`, `"text"`. */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v === undefined) return 'nothing (the field is missing)';
  if (typeof v === 'number') return Number.isInteger(v) ? `${v}` : `the number ${v}`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  return typeof v;
}

function describeIssue(issue: z.ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type': return `expected ${issue.expected}, got ${describeValue(value)}`;
    case 'invalid_literal': return `expected ${JSON.stringify(issue.expected)}, got ${describeValue(value)}`;
    case 'invalid_enum_value': return `expected one of ${issue.options.map((o) => JSON.stringify(o)).join(', ')}, got ${describeValue(value)}`;
    case 'too_small': return `expected ${issue.type === 'array' ? `at least ${issue.minimum} element(s)` : `at least ${issue.minimum}`}, got ${describeValue(value)}`;
    case 'too_big': return `expected at most ${issue.maximum}, got ${describeValue(value)}`;
    case 'invalid_string': return `expected ${issue.message}, got ${describeValue(value)}`;
    default: return `${issue.message}, got ${describeValue(value)}`;
  }
}

/** The first problem of a failed check of `value` (document order), naming its field. */
export function fieldProblem(error: z.ZodError, value: unknown): string {
  const issue = error.issues[0]!;
  const field = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(top level)';
  return `field "${field}": ${describeIssue(issue, valueAt(value, issue.path))}`;
}
