// Shared helpers of the trace tests: temp directories, manifests, and a sequence that drives
// every TraceSink method and returns the events a reader must give back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TraceEvent, TraceSink, RecordDef } from '../../src/trace/schema.js';
import { NAMING_KINDS, RECORDS, type NamingKind } from '../../src/trace/schema.js';
import type { TraceManifest } from '../../src/trace/manifest.js';
import { VERSION } from '../../src/trace/format.js';
import { syntheticEvents, syntheticManifest } from '../../src/analysis/sim/synthetic.js';
import { writeSimTrace } from '../../src/analysis/sim/write.js';

export function tempDir(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'luna-trace-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A generated trace of `events` events (2 nodes × 2 threads) written by the real trace writer into a temp directory. */
export function generatedTrace(t: { after(fn: () => void): void }, events: number, seed: number): string {
  const dir = join(tempDir(t), 'gen.trace');
  const o = { events, nodes: 2, threads: 2, seed };
  writeSimTrace(dir, syntheticManifest(o), syntheticEvents(o));
  return dir;
}

export function manifest(nodes: number, threads: number, over: Partial<TraceManifest> = {}): TraceManifest {
  return {
    format: 'luna-ts-trace', version: VERSION, program: 'test.fa', args: [], nodes, threads,
    codes: ['main', 'init', 'mul', 'sum'], clock: { cpuExact: true, offsets: [] },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: '0.0.0', node: process.version }, files: [],
    ...over,
  };
}

/**
 * Call every writer method once, in schema order, with values of every field type (non-ASCII
 * strings, negative ints, large floats), times from t0 upwards; returns the events a reader must
 * give back. Driven by the schema: a new record kind is covered without touching this.
 */
export function everyKind(s: TraceSink, node: number, thread: number, t0: number, cfBase = 0): TraceEvent[] {
  const ev: TraceEvent[] = [];
  let t = t0;
  const name = `a#${cfBase}.1.2`;
  let df = -1;
  let k = 0;
  // the numbers naming records give (DF keys, call sites), by the field that holds them
  const named = new Map<string, number>();
  const namer = new Map<string, NamingKind>(NAMING_KINDS.map((nk) => [(RECORDS[nk] as RecordDef).names!, nk]));
  for (const [kind, def] of Object.entries(RECORDS) as [keyof typeof RECORDS, RecordDef][]) {
    k++;
    const fields = def.names !== undefined ? [def.names] : def.fields.map(([f]) => f).filter((f) => namer.has(f));
    for (const f of fields) {
      if (named.has(f)) continue; // interned already: the sink writes nothing again
      // the first record that uses a name interns it: its naming record comes first
      const nk = namer.get(f)!;
      const str = nk === 'dfName' ? name : `prog.ts:${cfBase + 3}:7`;
      const id = (s[nk] as (n: string) => number)(str);
      if ((s[nk] as (n: string) => number)(str) !== id) throw new Error(`${nk} not idempotent`);
      named.set(f, id);
      if (f === 'df') df = id;
      ev.push({ kind: nk, node, thread, t, [f]: id, name: str } as unknown as TraceEvent);
    }
    if (def.names !== undefined) continue;
    const values: unknown[] = [];
    const e: Record<string, unknown> = { kind, node, thread, t };
    for (const [f, type] of def.fields) {
      let v: unknown;
      switch (type) {
        case 'time': t += f === 't' ? 10 : 5.25; v = t; break;
        case 'f64': v = f === 'bytes' ? 5e9 : 12345.5 + k; break;
        case 'u8': v = 1; break;
        case 'u16': v = 2 + (k % 3); break;
        case 'u32': v = named.has(f) ? named.get(f) : cfBase + 7 + k; break;
        case 'i32': v = k % 2 === 0 ? -1 : cfBase + k; break;
        case 'str': v = k % 2 === 0 ? `${cfBase}_${k}_2` : 'сумма ∑ λ'; break;
        case 'ints': v = [k, -2, 30000]; break;
      }
      values.push(v);
      e[f] = v;
    }
    (s as unknown as Record<string, (...a: unknown[]) => void>)[kind]!(...values);
    if (!def.fields.some(([f]) => f === 't')) e.t = t; // untimed records take the last time
    ev.push(e as unknown as TraceEvent);
  }
  return ev;
}

/** Deterministic PRNG (mulberry32) so that "random" cuts are reproducible. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export function collect(it: Iterable<TraceEvent>): TraceEvent[] {
  return [...it];
}
