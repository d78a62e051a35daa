// The DFs a run held to its end because their req_count was never reached (dfUnspent): how many,
// their bytes, and the largest by name, for the analyses that advise on them.
import type { RecordKind, TraceEvent } from '../schema.js';
import { COL, type RecordBatch } from '../columns.js';
import type { Resolver, TraceModel } from './model.js';

/** One DF held to the end: its name, the node that held it, the requests that never came, its bytes. */
export interface UnspentDf { df: string; node: number; left: number; bytes: number }

/** How many of the largest are kept by name. */
const NAMED = 8;

export class UnspentResolver implements Resolver {
  readonly kinds: readonly RecordKind[] = ['dfUnspent'];
  dfs = 0;
  bytes = 0;
  /** the largest, by bytes then name (at most NAMED) */
  readonly largest: UnspentDf[] = [];

  constructor(private readonly m: TraceModel) {}

  push(e: TraceEvent): void {
    if (e.kind === 'dfUnspent') this.unspent(e.node, e.thread, e.df, e.left, e.bytes);
  }

  row(b: RecordBatch, i: number): void {
    const f = b.f, C = COL.dfUnspent;
    this.unspent(b.node[i]!, b.thread[i]!, f[C.df]![i]!, f[C.left]![i]!, f[C.bytes]![i]!);
  }

  private unspent(node: number, thread: number, df: number, left: number, bytes: number): void {
    const r = this.m.dfs.lookup(node, thread, df);
    if (!r) return;
    this.dfs++;
    this.bytes += bytes;
    const u: UnspentDf = { df: r.name, node, left, bytes };
    const l = this.largest;
    if (l.length === NAMED && !before(u, l[NAMED - 1]!)) return;
    let i = l.length;
    while (i > 0 && before(u, l[i - 1]!)) i--;
    l.splice(i, 0, u);
    if (l.length > NAMED) l.pop();
  }
}

const before = (a: UnspentDf, b: UnspentDf): boolean => a.bytes > b.bytes || (a.bytes === b.bytes && a.df < b.df);
