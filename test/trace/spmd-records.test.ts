// The SPMD layer's records: written by the thread writer (call sites interned per file), merged
// across two nodes with a clock offset, resolved by the model's SpmdResolver, and exported to
// Perfetto JSON as slices and instants.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { exportPerfetto, exportPerfettoProto } from '../../src/trace/index.js';
import { readModel } from '../../src/trace/read.js';
import { SpmdResolver, spmdOpName, syncIn, syncOut } from '../../src/trace/model/spmd.js';
import { SPMD_OPS } from '../../src/trace/schema.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { manifest, tempDir } from './helpers.js';

const op = (name: (typeof SPMD_OPS)[number]): number => SPMD_OPS.indexOf(name);

/** Two ranks on two nodes (node 1's clock 1000 ns behind): a broadcast from rank 0, then a lock. */
function build(dir: string, ranks = 2): void {
  const m = manifest(2, 1, { ranks, clock: { cpuExact: true, offsets: [0, 1000] } });
  openTraceDir(dir, m);
  const a = ThreadTraceWriter.open(dir, 0, 1), b = ThreadTraceWriter.open(dir, 1, 1);
  a.programStart(0);
  b.programStart(-1000);
  a.spmdEnter(100, 0, op('broadcast'), a.siteName('is.ts:10:3'));
  b.spmdEnter(-950, 1, op('broadcast'), b.siteName('is.ts:10:3'));
  a.spmdCExit(300, 0, op('broadcast'), 0, 0, 1 + 4 * 2, 800, 0);
  b.spmdCExit(-680, 1, op('broadcast'), 0, 0, 1 + 4 * 2, 0, 800);
  a.spmdEnter(400, 0, op('lock'), a.siteName('is.ts:20:5'));
  a.spmdAlock(410, 0, 7);
  a.spmdExit(420, 0, op('lock'));
  a.spmdEnter(500, 0, op('unlock'), a.siteName('is.ts:22:5'));
  if (a.siteName('is.ts:20:5') !== a.siteName('is.ts:20:5')) throw new Error('siteName not idempotent');
  a.spmdRlock(505, 0, 7);
  a.spmdExit(510, 0, op('unlock'));
  a.programFinish(600, 1);
  b.programFinish(-400, 1);
  a.close();
  b.close();
  writeManifest(dir, { ...m, status: 'completed', files: [{ node: 0, thread: 1, path: traceFileName(0, 1) }, { node: 1, thread: 1, path: traceFileName(1, 1) }] });
}

test('the model resolves SPMD records: call sites by file, node clocks merged, ranks counted', (t) => {
  const dir = tempDir(t);
  build(dir);
  const seen: string[] = [];
  readModel(dir, (model) => model.use(SpmdResolver).listen({
    enter: (e, site) => seen.push(`${e.t} enter r${e.rank} ${spmdOpName(e.op)} @ ${site}`),
    exit: (e) => seen.push(`${e.t} exit r${e.rank} ${spmdOpName(e.op)}`),
    cexit: (e) => seen.push(`${e.t} cexit r${e.rank} ${spmdOpName(e.op)} seq ${e.seq} root ${e.root} ${syncIn(e.sync)}/${syncOut(e.sync)} sent ${e.sent} recv ${e.recv}`),
    lock: (e) => seen.push(`${e.t} ${e.kind} r${e.rank} lock ${e.lock}`),
  }));
  assert.deepEqual(seen, [
    '50 enter r1 broadcast @ is.ts:10:3',
    '100 enter r0 broadcast @ is.ts:10:3',
    '300 cexit r0 broadcast seq 0 root 0 mysync/allsync sent 800 recv 0',
    '320 cexit r1 broadcast seq 0 root 0 mysync/allsync sent 0 recv 800',
    '400 enter r0 lock @ is.ts:20:5',
    '410 spmdAlock r0 lock 7',
    '420 exit r0 lock',
    '500 enter r0 unlock @ is.ts:22:5',
    '505 spmdRlock r0 lock 7',
    '510 exit r0 unlock',
  ]);
});

test('a record of a rank beyond the manifest\'s ranks is damage, named, and dropped', (t) => {
  const dir = tempDir(t);
  build(dir, 1);
  let n = 0;
  const read = readModel(dir, (model) => model.use(SpmdResolver).listen({ enter: () => n++ }));
  assert.equal(n, 3, 'the enters of rank 0 only');
  assert.ok(read.warnings().some((w) => /ranks beyond the run's 1 ranks/.test(w)), read.warnings().join('\n'));
  assert.ok(read.damage().total >= 1);
});

test('Perfetto JSON shows SPMD operations as slices on the rank\'s thread and lock changes as instants', (t) => {
  const dir = tempDir(t);
  build(dir);
  const out = join(dir, 'run.json');
  exportPerfetto(dir, out);
  const evs = (JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: { ph: string; cat?: string; name?: string; pid: number; tid: number; ts: number; args?: Record<string, unknown> }[] }).traceEvents.filter((e) => e.cat === 'spmd');
  const begins = evs.filter((e) => e.ph === 'B').map((e) => `${e.pid}/${e.tid} ${e.ts} ${e.name}`);
  assert.deepEqual(begins, ['1/1 0.05 broadcast @ is.ts:10:3', '0/1 0.1 broadcast @ is.ts:10:3', '0/1 0.4 lock @ is.ts:20:5', '0/1 0.5 unlock @ is.ts:22:5']);
  const ends = evs.filter((e) => e.ph === 'E');
  assert.equal(ends.length, 4, 'every slice ends');
  assert.deepEqual(ends.find((e) => e.pid === 1)!.args, { seq: 0, sent: 0, received: 800, sync: 'IN_MYSYNC | OUT_ALLSYNC', root: 0 });
  assert.deepEqual(evs.filter((e) => e.ph === 'i').map((e) => e.name), ['acquire lock 7', 'release lock 7']);
});

test('Perfetto protobuf shows SPMD operations as slices that open and close on the rank\'s thread, lock changes as instants', async (t) => {
  const dir = tempDir(t);
  build(dir);
  const out = join(dir, 'run.pftrace');
  exportPerfettoProto(dir, out);
  const { TracePacket } = await import('../../src/trace/export/perfetto-proto.js');
  const protobuf = (await import('protobufjs')).default;
  const rd = protobuf.Reader.create(readFileSync(out));
  const names = new Map<number, string>();
  const begun: string[] = [], instants: string[] = [];
  const open = new Map<number, number>();
  let endsWithSeq = 0;
  while (rd.pos < rd.len) {
    assert.equal(rd.uint32(), 0x0a);
    const p = TracePacket.decode(rd.bytes()) as unknown as { internedData?: { eventNames?: { iid: number; name: string }[] }; trackEvent?: { type: number; trackUuid: number; nameIid?: number; debugAnnotations?: { name?: string }[] } };
    for (const n of p.internedData?.eventNames ?? []) names.set(Number(n.iid), n.name);
    const e = p.trackEvent;
    if (!e) continue;
    const track = Number(e.trackUuid);
    if (e.type === 1) { begun.push(names.get(Number(e.nameIid))!); open.set(track, (open.get(track) ?? 0) + 1); }
    else if (e.type === 2) {
      open.set(track, open.get(track)! - 1);
      if (e.debugAnnotations?.some((a) => a.name === 'seq')) endsWithSeq++;
    } else if (e.type === 3) instants.push(names.get(Number(e.nameIid))!);
  }
  assert.deepEqual(begun.filter((n) => n.includes('@')).sort(), ['broadcast @ is.ts:10:3', 'broadcast @ is.ts:10:3', 'lock @ is.ts:20:5', 'unlock @ is.ts:22:5']);
  assert.equal(endsWithSeq, 2, 'both collective exits carry their sequence number');
  assert.deepEqual(instants.filter((n) => n.includes('lock')), ['acquire lock 7', 'release lock 7']);
  for (const [track, n] of open) assert.equal(n, 0, `track ${track}: every slice closed`);
});
