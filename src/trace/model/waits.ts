// The waits of the trace model: each wait record resolved to the fragment it happened in (or the
// SPMD rank that waited) and the lane slot of the thread that waited, then handed to listeners.
import { WAIT_KINDS, type RecordKind, type TraceEvent } from '../schema.js';
import { fileOf } from '../damage.js';
import type { Resolver, TraceModel } from './model.js';
import type { Wait } from './records.js';
import { fmtT } from './time.js';
import { COL, type RecordBatch } from '../columns.js';

export class WaitResolver implements Resolver {
  readonly kinds: readonly RecordKind[] = ['wait'];

  constructor(private readonly m: TraceModel) {}

  push(e: TraceEvent): void {
    if (e.kind === 'wait') this.wait(e.node, e.thread, e.t, e.end, e.cpu, e.cf, e.rank, e.waitKind, e.resource);
  }

  row(b: RecordBatch, i: number): void {
    const f = b.f, C = COL.wait;
    this.wait(b.node[i]!, b.thread[i]!, b.t[i]!, f[C.end]![i]!, f[C.cpu]![i]!, f[C.cf]![i]!, f[C.rank]![i]!, f[C.waitKind]![i]!, b.s[i]!);
  }

  private wait(node: number, thread: number, t: number, end: number, cpu: number, cf: number, rank: number, waitKind: number, resource: string): void {
    const m = this.m;
    if (!(end >= t)) {
      m.warn('wait ending before it began (dropped)');
      m.damage.add('time-order', `a wait for ${resource} ends ${fmtT(t - end)} before it begins`, fileOf(node, thread));
      return;
    }
    const f = cf >= 0 ? m.fragmentOf(node, cf) ?? null : null;
    if (cf >= 0 && f === null) m.warn('wait inside a CF the trace does not know (counted for its thread)');
    // the thread that waited: the lane of the CF it waited in, else the worker thread that wrote it
    const slot = f !== null && f.slot >= 0 ? f.slot : thread >= 1 && thread <= m.T ? node * m.T + thread - 1 : -1;
    const w: Wait = {
      node, thread, slot, fragment: f, rank, kind: WAIT_KINDS[waitKind] ?? `kind#${waitKind}`,
      resource, start: t, end, cpu,
    };
    for (const l of m.audience) l.wait?.(w);
  }
}
