// Exports of a real traced run (2 nodes, DFs crossing between them): the trace tables as CSV and
// Parquet read back with independent readers and compared with the analysis, and Perfetto
// slices named as the program names its CFs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { csvField, TABLES, type TableName } from '../../src/trace/export/tables.js';
import type { SlowReport } from '../../src/analysis/slow/index.js';

function luna(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/luna', ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

let shared: { dir: string; trace: string; report: SlowReport } | null = null;

/** One traced run for all tests of this file: matmul spread over 2 nodes by its locators. */
before(() => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-exports-'));
  const trace = join(dir, 'run.trace');
  const r = luna(['run', '--nodes', '2', '--threads', '1', '--trace', trace, 'examples/matmul/matmul_cyclic.fa', '64', '4']);
  assert.equal(r.status, 0, r.stderr);
  const a = luna(['analyze', 'slow', '--json', trace]);
  assert.equal(a.status, 0, a.stderr);
  shared = { dir, trace, report: JSON.parse(a.stdout) as SlowReport };
});
after(() => { if (shared) rmSync(shared.dir, { recursive: true, force: true }); });

const run = (): { dir: string; trace: string; report: SlowReport } => shared!;

function readCsv(file: string): Record<string, string>[] {
  return parse(readFileSync(file, 'utf8'), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

async function readParquet(file: string): Promise<{ rows: Record<string, unknown>[]; columns: string[]; numRows: number }> {
  const b = readFileSync(file);
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  const md = parquetMetadata(ab);
  return { rows: await parquetReadObjects({ file: ab }), columns: md.schema.slice(1).map((s) => s.name), numRows: Number(md.num_rows) };
}

test('csvField quotes what CSV needs quoted, and a real parser reads it back', () => {
  const cells = ['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', '', 'λ ∑ сумма', '[1,2]'];
  assert.deepEqual(cells.map(csvField).slice(0, 4), ['plain', '"a,b"', '"say ""hi"""', '"two\nlines"']);
  assert.equal(csvField(null), '');
  assert.equal(csvField(NaN), '');
  assert.equal(csvField(12.5), '12.5');
  const text = `${cells.map(csvField).join(',')}\n`;
  assert.deepEqual(parse(text, { relax_column_count: false }), [cells]);
});

test('luna export tables: CSV and Parquet tables of a real run agree with each other and with the analysis', async () => {
  const { dir, trace, report } = run();
  const out = join(dir, 'tables');
  const r = luna(['export', 'tables', trace, '-o', out, '--format', 'csv,parquet']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /wrote csv and parquet tables to .*tables \(rows: fragments \d+/);
  const csv = Object.fromEntries(Object.keys(TABLES).map((k) => [k, readCsv(join(out, `${k}.csv`))])) as Record<TableName, Record<string, string>[]>;

  // fragments: one row per CF the analysis counted, per code fragment too, and the same CPU time
  const frags = csv.fragments;
  assert.equal(frags.length, report.cfs);
  const byCode = new Map<string, number>();
  for (const f of frags) byCode.set(f.code!, (byCode.get(f.code!) ?? 0) + 1);
  assert.deepEqual(Object.fromEntries(byCode), Object.fromEntries(report.perCode.map((c) => [c.name, c.cfs])));
  const cpu = frags.reduce((a, f) => a + Number(f.cpu_ns), 0);
  assert.ok(Math.abs(cpu - report.t.U) <= 1e-9 * report.t.U + 1, `Σ cpu_ns ${cpu} vs T_U ${report.t.U}`);
  assert.equal(new Set(frags.map((f) => f.gid)).size, frags.length, 'one row per CF');
  const perNode = [0, 0];
  for (const f of frags) perNode[Number(f.node)]!++;
  assert.deepEqual(perNode, report.placement.perNode);
  // named as the program names them, indices as a JSON array, site as file:line:col
  const p = frags.find((f) => f.name === 'prod[1][2][3]');
  assert.ok(p, 'the product CF of block (1, 2), k = 3');
  assert.deepEqual([p.label, JSON.parse(p.indices!), p.code, p.node], ['prod', [1, 2, 3], 'mul', '1']);
  assert.match(p.site!, /^examples\/matmul\/matmul_cyclic\.fa:\d+:\d+$/);
  for (const f of frags) {
    assert.ok(Number(f.start) <= Number(f.finish), 'start ≤ finish');
    assert.equal(Number(f.wall_ns), Number(f.finish) - Number(f.start));
    assert.ok(Number(f.cpu_ns) <= Number(f.wall_ns));
  }
  // transfers: the B blocks node 0 → 1 and the C blocks node 1 → 0, each with its producer
  assert.ok(csv.transfers.length > 0);
  for (const x of csv.transfers) {
    assert.notEqual(x.from_node, x.to_node);
    assert.ok(Number(x.arrive) >= Number(x.send_start));
    assert.ok(Number(x.bytes) > 0);
  }
  assert.ok(csv.transfers.some((x) => x.family === 'B' && x.from_node === '0' && x.to_node === '1'));
  assert.ok(csv.transfers.some((x) => x.family === 'S' && x.from_node === '1' && x.to_node === '0'));
  // dfs: every computed DF, with its producer's id when a CF produced it
  const gids = new Set(frags.map((f) => f.gid));
  assert.ok(csv.dfs.length >= frags.length - 1, 'nearly every CF computes a DF');
  for (const d of csv.dfs) if (d.producer_gid) assert.ok(gids.has(d.producer_gid), `producer ${d.producer_gid} of ${d.df} is a fragment`);
  assert.equal(csv.run.length, 1);
  assert.deepEqual([csv.run[0]!.program, JSON.parse(csv.run[0]!.args!), csv.run[0]!.nodes, csv.run[0]!.status], ['examples/matmul/matmul_cyclic.fa', ['64', '4'], '2', 'completed']);
  assert.equal(Number(csv.run[0]!.t_start), report.tStart);
  assert.ok(csv.migrations.length > 0, 'block rows 1 and 3 migrated to node 1');
  assert.ok(csv.system.length > 0);

  // Parquet: the same rows and columns
  for (const name of Object.keys(TABLES) as TableName[]) {
    const pq = await readParquet(join(out, `${name}.parquet`));
    assert.deepEqual(pq.columns, TABLES[name].map(([c]) => c), `${name}.parquet columns`);
    assert.equal(pq.numRows, csv[name].length, `${name}.parquet rows`);
    assert.equal(pq.rows.length, csv[name].length);
    pq.rows.forEach((row, i) => {
      for (const [c, type] of TABLES[name]) {
        const v = row[c], s = csv[name][i]![c];
        const text = v === null || v === undefined ? '' : type === 'i64' ? (v as bigint).toString() : String(v);
        assert.equal(text, s, `${name}[${i}].${c}`);
      }
    });
  }
});

test('luna export tables: CSV by default, beside the trace; bad format and missing trace are clear errors', () => {
  const { trace } = run();
  const r = luna(['export', 'tables', trace]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(`${trace}.tables/fragments.csv`));
  assert.ok(!existsSync(`${trace}.tables/fragments.parquet`));
  const bad = luna(['export', 'tables', trace, '--format', 'xlsx']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--format must be csv, parquet or csv,parquet, got "xlsx"/);
  const missing = luna(['export', 'tables', join(trace, 'nope')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^luna: error: /);
  assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');
});

test('Perfetto: CF slices of a real run are named label[indices], with indices and gid in their arguments', () => {
  const { dir, trace } = run();
  const out = join(dir, 'run.json');
  const r = luna(['export', 'perfetto', trace, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: { ph: string; cat?: string; name: string; pid: number; args?: Record<string, unknown> }[] };
  const slices = doc.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'cf');
  const p = slices.find((e) => e.name === 'prod[1][2][3]');
  assert.ok(p, slices.slice(0, 5).map((e) => e.name).join());
  assert.equal(p.pid, 1, 'block row 1 ran on node 1');
  assert.deepEqual(p.args?.indices, [1, 2, 3]);
  assert.equal(p.args?.code, 'mul');
  assert.match(String(p.args?.gid), /^\d+(_\d+)+$/);
  // every CF slice: its name is its label with its indices, and the gid is there
  for (const s of slices) {
    const idx = (s.args?.indices as number[] | undefined) ?? [];
    assert.equal(s.name.replace(/\[-?\d+\]/g, ''), s.name.split('[')[0]);
    assert.equal(s.name, `${s.name.split('[')[0]}${idx.map((i) => `[${i}]`).join('')}`);
    assert.equal(typeof s.args?.gid, 'string');
  }
});

test('Perfetto protobuf (the default): TrackEvent packets that decode, a slice per fragment named as the program names it, smaller than the trace', async () => {
  const { dir, trace, report } = run();
  const out = join(dir, 'run.pftrace');
  const r = luna(['export', 'perfetto', trace, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Perfetto packets \(protobuf/);
  // decoded as a `Trace` (repeated TracePacket packet = 1) with protobufjs' reader
  const { TracePacket } = await import('../../src/trace/export/perfetto-proto.js');
  const protobuf = (await import('protobufjs')).default;
  const buf = readFileSync(out);
  const rd = protobuf.Reader.create(buf);
  const names = new Map<number, string>();
  const open = new Map<number, number>();
  let begins = 0, ends = 0, tracks = 0, cfSlices = 0;
  const seen = new Set<string>();
  while (rd.pos < rd.len) {
    const tag = rd.uint32();
    assert.equal(tag, 0x0a, 'field 1, length-delimited');
    const p = TracePacket.decode(rd.bytes()) as unknown as { trackDescriptor?: unknown; internedData?: { eventNames?: { iid: number; name: string }[] }; trackEvent?: { type: number; trackUuid: number; nameIid?: number; name?: string } };
    for (const n of p.internedData?.eventNames ?? []) names.set(Number(n.iid), n.name);
    if (p.trackDescriptor) tracks++;
    const e = p.trackEvent;
    if (e?.type === 1) {
      begins++;
      open.set(Number(e.trackUuid), (open.get(Number(e.trackUuid)) ?? 0) + 1);
      // a name that repeats is interned, an instance's name (prod[1][2][3]) is inline
      const name = e.name || names.get(Number(e.nameIid));
      assert.ok(name, 'every slice has a name');
      if (e.name) assert.ok(/\[-?\d+\]/.test(e.name), `only instance names are inline: ${e.name}`);
      if (name !== 'system busy') { cfSlices++; seen.add(name); }
    } else if (e?.type === 2) {
      ends++;
      open.set(Number(e.trackUuid), open.get(Number(e.trackUuid))! - 1);
    }
  }
  assert.equal(begins, ends);
  for (const v of open.values()) assert.equal(v, 0, 'every slice ends on its track');
  assert.ok(tracks >= report.nodes * (report.threads + 1));
  assert.equal(cfSlices, report.cfs, 'a slice per fragment');
  assert.ok(seen.has('prod[1][2][3]'), [...seen].slice(0, 5).join());
  let traceBytes = 0;
  for (const f of readdirSync(trace)) if (f.endsWith('.lt')) traceBytes += statSync(join(trace, f)).size;
  assert.ok(buf.length <= 1.5 * traceBytes, `${buf.length} bytes of protobuf for ${traceBytes} of trace`);
});
