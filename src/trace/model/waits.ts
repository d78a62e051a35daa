// The waits of the trace model: each wait record resolved to the fragment it happened in (or the
// SPMD rank that waited) and the lane slot of the thread that waited, then handed to listeners.
import { WAIT_KINDS, type RecordKind, type TraceEvent } from '../schema.js';
import { fileOf } from '../damage.js';
import type { Resolver, TraceModel } from './model.js';
import type { Wait } from './records.js';
import { fmtT } from './time.js';

export class WaitResolver implements Resolver {
  readonly kinds: readonly RecordKind[] = ['wait'];

  constructor(private readonly m: TraceModel) {}

  push(e: TraceEvent): void {
    if (e.kind !== 'wait') return;
    const m = this.m, node = e.node;
    if (!(e.end >= e.t)) {
      m.warn('wait ending before it began (dropped)');
      m.damage.add('time-order', `a wait for ${e.resource} ends ${fmtT(e.t - e.end)} before it begins`, fileOf(node, e.thread));
      return;
    }
    const f = e.cf >= 0 ? m.fragmentOf(node, e.cf) ?? null : null;
    if (e.cf >= 0 && f === null) m.warn('wait inside a CF the trace does not know (counted for its thread)');
    // the thread that waited: the lane of the CF it waited in, else the worker thread that wrote it
    const slot = f !== null && f.slot >= 0 ? f.slot : e.thread >= 1 && e.thread <= m.T ? node * m.T + e.thread - 1 : -1;
    const w: Wait = {
      node, thread: e.thread, slot, fragment: f, rank: e.rank, kind: WAIT_KINDS[e.waitKind] ?? `kind#${e.waitKind}`,
      resource: e.resource, start: e.t, end: e.end, cpu: e.cpu,
    };
    for (const l of m.audience) l.wait?.(w);
  }
}
