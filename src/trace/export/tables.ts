// Export of a trace as tables for pandas, polars, DuckDB and spreadsheets: one file per table,
// CSV and/or Parquet, written in one streaming pass over the trace model with bounded memory
// (CSV rows go out in ~1 MiB batches, Parquet rows in row groups of ROW_GROUP rows).
//
// Tables (times are ns on the run clock, as in the trace: 0 is the run's origin; the program
// started at `run.t_start`):
//   fragments   one row per CF that ran: identity, where, when, CPU time
//   transfers   one row per DF arrival on another node
//   dfs         one row per DF value computed (on its home node)
//   system      system-thread busy spans
//   counters    ready-queue length and live DF bytes samples
//   migrations  CFs moved to another node
//   waits       one row per wait of a thread for a resource (inside a CF or as an SPMD rank)
//   run         one row: program, arguments, nodes, threads, status, start and end
//
// Parquet goes through hyparquet-writer: pure JavaScript, one small dependency (its reader,
// hyparquet), maintained, and it writes row groups incrementally to a file — where the
// alternatives bring a 15 MB WebAssembly build plus Apache Arrow (parquet-wasm) or ~30
// packages and 40 MB (@dsnp/parquetjs). CSV is written here: quoting one field is a few lines
// (RFC 4180), and the hot loop stays free of a library's per-row objects.
import type { DamageReport } from '../damage.js';
import { closeSync, writeSync } from 'node:fs';
import { createRegular, makeDirectory } from '../../core/files.js';
import { join } from 'node:path';
import { ParquetWriter, fileWriter, type SchemaElement } from 'hyparquet-writer';
import { readModel, type ReadProgress } from '../read.js';
import type { TraceModel } from '../model/model.js';
import type { Fragment } from '../model/records.js';

export type TableFormat = 'csv' | 'parquet';
type ColType = 'str' | 'i32' | 'i64' | 'f64';
type Cell = string | number | null;

interface TableDef { name: string; columns: readonly (readonly [string, ColType])[] }

/** The tables and their columns (the documentation lists them with their meaning). */
export const TABLES = {
  fragments: [['gid', 'str'], ['name', 'str'], ['label', 'str'], ['indices', 'str'], ['code', 'str'], ['node', 'i32'], ['lane', 'i32'],
    ['site', 'str'], ['created', 'i64'], ['ready', 'i64'], ['start', 'i64'], ['finish', 'i64'], ['wall_ns', 'i64'], ['cpu_ns', 'i64'], ['inputs', 'i32']],
  transfers: [['df', 'str'], ['family', 'str'], ['bytes', 'i64'], ['from_node', 'i32'], ['to_node', 'i32'], ['send_start', 'i64'], ['first_send', 'i64'],
    ['arrive', 'i64'], ['latency_ns', 'i64'], ['producer_gid', 'str']],
  dfs: [['df', 'str'], ['family', 'str'], ['node', 'i32'], ['bytes', 'i64'], ['computed', 'i64'], ['producer_gid', 'str'], ['producer', 'str']],
  system: [['node', 'i32'], ['start', 'i64'], ['end', 'i64'], ['dur_ns', 'i64']],
  counters: [['node', 'i32'], ['counter', 'str'], ['t', 'i64'], ['value', 'f64']],
  migrations: [['node', 'i32'], ['to_node', 'i32'], ['t', 'i64'], ['gid', 'str'], ['name', 'str']],
  waits: [['node', 'i32'], ['thread', 'i32'], ['gid', 'str'], ['cf', 'str'], ['rank', 'i32'], ['kind', 'str'], ['resource', 'str'], ['start', 'i64'], ['end', 'i64'],
    ['wait_ns', 'i64'], ['cpu_ns', 'i64']],
  run: [['program', 'str'], ['args', 'str'], ['nodes', 'i32'], ['threads', 'i32'], ['status', 'str'], ['t_start', 'i64'], ['t_end', 'i64'], ['policy', 'str']],
} as const satisfies Record<string, readonly (readonly [string, ColType])[]>;

export type TableName = keyof typeof TABLES;

const ROW_GROUP = 65536;
const CSV_FLUSH = 1 << 20;

/** RFC 4180: a field holding a comma, a quote, CR or LF is quoted, its quotes doubled; null is empty. */
export function csvField(v: Cell): string {
  if (v === null) return '';
  if (typeof v === 'number') return v === v ? String(v) : '';
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

class CsvSink {
  private buf: string[] = [];
  private size = 0;
  private readonly fd: number;
  constructor(path: string, columns: readonly (readonly [string, ColType])[]) {
    this.fd = createRegular(path, 'table');
    this.push(columns.map(([c]) => c));
  }
  push(row: readonly Cell[]): void {
    let s = '';
    for (let i = 0; i < row.length; i++) s += (i ? ',' : '') + csvField(row[i]!);
    s += '\n';
    this.buf.push(s);
    this.size += s.length;
    if (this.size > CSV_FLUSH) this.flush();
  }
  private flush(): void {
    if (this.buf.length) writeSync(this.fd, this.buf.join(''));
    this.buf = [];
    this.size = 0;
  }
  close(): void { this.flush(); closeSync(this.fd); }
}

const SCHEMA: Record<ColType, Omit<SchemaElement, 'name'>> = {
  str: { type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  i32: { type: 'INT32', repetition_type: 'OPTIONAL' },
  i64: { type: 'INT64', repetition_type: 'OPTIONAL' },
  f64: { type: 'DOUBLE', repetition_type: 'OPTIONAL' },
};

class ParquetSink {
  private readonly w: ParquetWriter;
  private cols: Cell[][];
  constructor(path: string, private readonly columns: readonly (readonly [string, ColType])[], meta: Record<string, string>) {
    const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }, ...columns.map(([name, t]) => ({ name, ...SCHEMA[t] }))];
    this.w = new ParquetWriter({
      writer: fileWriter(path), schema, createdBy: 'luna-ts',
      kvMetadata: Object.entries(meta).map(([key, value]) => ({ key, value })),
    });
    this.cols = columns.map(() => []);
  }
  push(row: readonly Cell[]): void {
    for (let i = 0; i < row.length; i++) {
      let v: Cell = row[i] ?? null;
      if (typeof v === 'number' && !(v === v)) v = null;
      this.cols[i]!.push(v);
    }
    if (this.cols[0]!.length >= ROW_GROUP) this.flush();
  }
  private flush(): void {
    if (this.cols[0]!.length === 0) return;
    const columnData = this.columns.map(([name, t], i) => {
      const data = this.cols[i]!;
      return { name, data: t === 'i64' ? data.map((v) => (v === null ? null : BigInt(Math.round(v as number)))) : data };
    });
    // fileWriter writes synchronously, so write() and finish() return nothing to wait for
    void this.w.write({ columnData, rowGroupSize: ROW_GROUP });
    this.cols = this.columns.map(() => []);
  }
  close(): void { this.flush(); void this.w.finish(); }
}

class Table {
  rows = 0;
  private readonly sinks: (CsvSink | ParquetSink)[] = [];
  readonly files: string[] = [];
  constructor(def: TableDef, dir: string, formats: readonly TableFormat[], meta: Record<string, string>) {
    for (const f of formats) {
      const path = join(dir, `${def.name}.${f}`);
      this.sinks.push(f === 'csv' ? new CsvSink(path, def.columns) : new ParquetSink(path, def.columns, meta));
      this.files.push(path);
    }
  }
  push(row: readonly Cell[]): void {
    this.rows++;
    for (const s of this.sinks) s.push(row);
  }
  close(): void { for (const s of this.sinks) s.close(); }
}

export interface TablesResult {
  /** rows written per table */
  rows: Record<TableName, number>;
  files: string[];
  warnings: string[];
  damage: DamageReport;
}

const num = (x: number): number | null => (x === x ? x : null);

/** A row of the fragments table. */
function fragmentRow(model: TraceModel, f: Fragment, inputs: number): Cell[] {
  const s = model.sites[f.site];
  return [f.gid, f.name, f.label, f.labelIdx ? JSON.stringify(f.labelIdx) : null, model.codeName(f.code), f.node, f.lane || null,
    s ? `${s.file}:${s.line}:${s.col}` : null, num(f.created), num(f.ready), num(f.start), num(f.finish), num(f.finish - f.start), num(f.cpu), inputs];
}

/** Write the tables of the trace in `traceDir` into `outDir` (created if missing). */
export function exportTables(traceDir: string, outDir: string, formats: readonly TableFormat[] = ['csv'], progress?: ReadProgress): TablesResult {
  let tables: Record<TableName, Table> | undefined;
  let read;
  try {
    read = readModel(traceDir, (model) => {
      const m = model.manifest;
      makeDirectory(outDir, 'tables directory');
      const meta = { 'luna-ts.program': m.program, 'luna-ts.args': JSON.stringify(m.args), 'luna-ts.time-unit': 'ns' };
      const t = tables = Object.fromEntries(Object.entries(TABLES).map(([name, columns]) => [name, new Table({ name, columns }, outDir, formats, meta)])) as Record<TableName, Table>;
      model.listen({
        finish(f, inputs) { t.fragments.push(fragmentRow(model, f, inputs.length)); },
        transfer(x) {
          t.transfers.push([x.df.name, x.df.family, x.bytes, x.from, x.to, x.sendStart, x.firstSend, x.arrive, x.arrive - x.sendStart, x.df.producer?.gid ?? null]);
        },
        sysBusy(node, t0, t1) { t.system.push([node, t0, t1, t1 - t0]); },
        counter(node, name, at, value) { t.counters.push([node, name, at, value]); },
        migrate(node, f, cf, toNode, at) { t.migrations.push([node, toNode, at, f?.gid ?? null, f?.name ?? `CF ${cf}`]); },
        wait(w) { t.waits.push([w.node, w.thread, w.fragment?.gid ?? null, w.fragment?.name ?? null, w.rank >= 0 ? w.rank : null, w.kind, w.resource, w.start, w.end, w.end - w.start, num(w.cpu)]); },
        eventKinds: ['dfComputed'],
        event(e) {
          // the model links a DF to its producer while handling dfComputed: read the record after it
          if (e.kind !== 'dfComputed') return;
          const r = model.dfOf(e.node, e.thread, e.df);
          if (r) t.dfs.push([r.name, r.family, e.node, e.bytes, e.t, r.producer?.gid ?? null, r.producer?.name ?? null]);
        },
      });
    }, progress);
    const model = read.model, m = read.manifest, t = tables!;
    // CFs still running when the trace ended: they ran, without a finish
    for (const f of model.stillRunning()) t.fragments.push(fragmentRow(model, f, f.inputs?.length ?? 0));
    t.run.push([m.program, JSON.stringify(m.args), m.nodes, m.threads, m.status ?? 'running', num(model.tStart), num(model.tEnd), m.policy ?? null]);
  } finally {
    if (tables) for (const t of Object.values(tables)) t.close();
  }
  const all = tables!;
  const warnings = read.warnings();
  return {
    rows: Object.fromEntries(Object.entries(all).map(([k, t]) => [k, t.rows])) as Record<TableName, number>,
    files: Object.values(all).flatMap((t) => t.files),
    warnings,
    damage: read.damage(),
  };
}
