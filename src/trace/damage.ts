// What a reader of a trace dropped or corrected, by kind, with the first offending records: the
// trace reader (files cut short, records that cannot be valid) and the trace model (records that
// contradict each other or the run) report here, and every command that reads a trace prints the
// summary before its result and exits 3 (docs/reliability.md, Traces).

export type DamageKind =
  /** a file ends inside a record (a killed run): the cut record is dropped */
  | 'truncated'
  /** a record that cannot be valid (unknown kind byte, impossible field values): the rest of its file is dropped */
  | 'corrupted'
  /** a file the manifest lists is not there */
  | 'missing-file'
  /** a node of the manifest recorded nothing (killed before it wrote a record): left out of the totals */
  | 'missing-node'
  /** a CF's CPU time above its wall time, or negative: taken as the wall time, or 0 */
  | 'cpu-time'
  /** a CF finishing before it started, or starting long before the run: duration taken as 0 */
  | 'time-order'
  /** a record far outside the run's time span: dropped */
  | 'outside-run'
  /** a record naming a node, lane or CF the trace does not know: dropped */
  | 'unknown-id';

export interface DamageExample {
  kind: DamageKind;
  /** the trace file (node<N>.thread<T>.lt), when known */
  file?: string;
  /** byte offset of the record in its file, when known */
  offset?: number;
  detail: string;
}

export interface DamageReport {
  /** damaged or dropped items in all */
  total: number;
  counts: Partial<Record<DamageKind, number>>;
  /** the first few, in the order found */
  examples: DamageExample[];
}

const EXAMPLES = 8;

export class TraceDamage {
  total = 0;
  readonly counts: Partial<Record<DamageKind, number>> = {};
  readonly examples: DamageExample[] = [];

  add(kind: DamageKind, detail: string, file?: string, offset?: number): void {
    this.total++;
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
    if (this.examples.length < EXAMPLES) this.examples.push({ kind, ...(file !== undefined ? { file } : {}), ...(offset !== undefined ? { offset } : {}), detail });
  }

  report(): DamageReport {
    return { total: this.total, counts: { ...this.counts }, examples: [...this.examples] };
  }
}

/** The trace file of (node, thread), as named in damage reports. */
export const fileOf = (node: number, thread: number): string => `node${node}.thread${thread}.lt`;

/** The summary printed on stderr before a command's result (empty when nothing was damaged). */
export function formatDamage(d: DamageReport, dir: string): string {
  if (d.total === 0) return '';
  const counts = Object.entries(d.counts).map(([k, n]) => `${k} ${n}`).join(', ');
  const lines = [`luna: trace damage in ${dir}: ${d.total} item(s) dropped or corrected (${counts}); the results below leave them out`];
  for (const e of d.examples) lines.push(`  ${e.kind}: ${e.file ?? ''}${e.offset !== undefined ? ` at byte ${e.offset}` : ''}${e.file !== undefined || e.offset !== undefined ? ': ' : ''}${e.detail}`);
  if (d.total > d.examples.length) lines.push(`  … and ${d.total - d.examples.length} more`);
  return lines.join('\n') + '\n';
}

/** Exit code of a command whose result is complete but whose trace was damaged. */
export const EXIT_TRACE_DAMAGED = 3;
