// Trace format micro-benchmark: writer cost per event, bytes per event, read and merge
// throughput on ~2e6 synthetic events, each against a baseline measured in the same run:
//   encoding (writer spilling to /dev/null) vs the same numbers stored into a Float64Array,
//   writer to a file vs raw fs.writeSync of as many bytes (on VMs where first-touch page-cache
//   pages are slow, storage dominates, which is why bytes per event matter),
//   reader vs raw fs.readSync of the same bytes in the same chunk size (the I/O floor),
//   merge of all files vs reading them one by one.
// Run: node dist/bench/trace-format.js  (or import { run }).
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { threadCpuNs, wallNs } from '../src/trace/clock.js';
import { openTraceDir, writeManifest } from '../src/trace/dir.js';
import type { TraceManifest } from '../src/trace/manifest.js';
import { traceFileName, VERSION } from '../src/trace/format.js';
import { readTrace } from '../src/trace/merge.js';
import { readThreadFile } from '../src/trace/reader.js';
import { ThreadTraceWriter } from '../src/trace/writer.js';

const CFS_PER_FILE = 100_000; // 4 files × 100k CFs × 5 events ≈ 2e6 events
const FILES = 4;

const now = (): number => Number(process.hrtime.bigint());

// One CF's life as the system thread and a worker record it (5 events + 1 string-table entry per 8 CFs).
function writeCfs(w: ThreadTraceWriter, base: number): void {
  let t = base;
  let df = 0;
  for (let i = 0; i < CFS_PER_FILE; i++) {
    t += 100;
    w.cfCreated(t, i, i >> 1, 2, '3_1_2', null);
    if ((i & 7) === 0) df = w.dfName(`a#0.${i}`);
    w.cfInput(i, df);
    w.cfStart(t + 10, t * 0.9, i, 1);
    w.cfFinish(t + 90, t * 0.9 + 70, i, 1);
    w.dfComputed(t + 95, df, i, 8);
  }
}

function baseline(f: Float64Array): number {
  // The same numbers a writer stores, into a flat typed array: what any recorder must at least do.
  let t = 0;
  let p = 0;
  for (let i = 0; i < CFS_PER_FILE; i++) {
    t += 100;
    if (p + 20 > f.length) p = 0;
    f[p++] = t; f[p++] = i; f[p++] = i >> 1; f[p++] = 2;
    f[p++] = i; f[p++] = 0;
    f[p++] = t + 10; f[p++] = t * 0.9; f[p++] = i;
    f[p++] = t + 90; f[p++] = t * 0.9 + 70; f[p++] = i;
    f[p++] = t + 95; f[p++] = 0; f[p++] = i; f[p++] = 8;
  }
  return p;
}

function perCall(fn: () => number, n = 1e6): number {
  let s = 0;
  for (let i = 0; i < 1e5; i++) s += fn();
  const t0 = now();
  for (let i = 0; i < n; i++) s += fn();
  const dt = (now() - t0) / n;
  return s === -1 ? 0 : dt;
}

export async function run(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'luna-trace-bench-'));
  try {
    const m: TraceManifest = {
      format: 'luna-ts-trace', version: VERSION, program: 'bench', args: [], nodes: 1, threads: FILES - 1,
      codes: ['main', 'init', 'mul'], clock: { cpuExact: true, offsets: [] }, startedAt: new Date().toISOString(),
      versions: { lunaTs: '0', node: process.version }, files: [],
    };
    openTraceDir(dir, m);
    // Warm every path once so that the timed passes run optimized code.
    const warm = ThreadTraceWriter.open(dir, 9, 9);
    writeCfs(warm, 0);
    warm.close();
    for (const _ of readThreadFile(warm.path).events);
    rmSync(warm.path);
    // Writer encoding cost alone: same records, spilled to /dev/null.
    const n0 = now();
    let nullRecords = 0;
    for (let f = 0; f < FILES; f++) {
      const w = new ThreadTraceWriter('/dev/null', 0, f);
      writeCfs(w, f * 37);
      w.close();
      nullRecords += w.records;
    }
    const encodeNs = now() - n0;
    // Writer to real files (encoding + page-cache writes).
    let records = 0;
    let bytes = 0;
    let writeNs = 0;
    for (let f = 0; f < FILES; f++) {
      const w = ThreadTraceWriter.open(dir, 0, f);
      const t0 = now();
      writeCfs(w, f * 37);
      w.close();
      writeNs += now() - t0;
      records += w.records;
      bytes += w.written;
      m.files.push({ node: 0, thread: f, path: traceFileName(0, f) });
    }
    writeManifest(dir, m);
    if (nullRecords !== records) throw new Error('record count differs');
    const arr = new Float64Array(1 << 17);
    baseline(arr);
    const b0 = now();
    for (let f = 0; f < FILES; f++) baseline(arr);
    const baseNs = now() - b0;
    // Storage floor: the same number of bytes written raw, 1 MiB at a time, to a new file.
    const chunk = Buffer.alloc(1 << 20, 7);
    const rawPath = join(dir, 'raw.bin');
    const w0 = now();
    const wfd = openSync(rawPath, 'w');
    for (let left = bytes; left > 0; left -= chunk.length) writeSync(wfd, chunk, 0, Math.min(left, chunk.length));
    closeSync(wfd);
    const rawWriteNs = now() - w0;
    rmSync(rawPath);

    // Reader: each file separately vs raw chunked reads of the same bytes.
    const r0 = now();
    for (const f of m.files) {
      const fd = openSync(join(dir, f.path), 'r');
      let pos = 0;
      for (let n; (n = readSync(fd, chunk, 0, chunk.length, pos)) > 0; ) pos += n;
      closeSync(fd);
    }
    const rawNs = now() - r0;
    let readEvents = 0;
    const d0 = now();
    for (const f of m.files) for (const _ of readThreadFile(join(dir, f.path)).events) readEvents++;
    const readNs = now() - d0;

    // Merge of all files.
    let merged = 0;
    const g0 = now();
    for (const _ of readTrace(dir).events) merged++;
    const mergeNs = now() - g0;
    if (readEvents !== records || merged !== records) throw new Error(`lost events: wrote ${records}, read ${readEvents}, merged ${merged}`);

    return {
      events: records,
      bytesPerEvent: (bytes - FILES * 32) / records,
      encodeNsPerEvent: encodeNs / records,
      float64StoreNsPerEvent: baseNs / records,
      encodeVsFloat64Store: encodeNs / baseNs,
      writerToFileNsPerEvent: writeNs / records,
      rawWriteNsPerEvent: rawWriteNs / records,
      writerToFileVsRawWrite: writeNs / rawWriteNs,
      readEventsPerSec: readEvents / (readNs / 1e9),
      rawReadEventsPerSec: records / (rawNs / 1e9),
      readerVsRawRead: readNs / rawNs,
      mergeEventsPerSec: merged / (mergeNs / 1e9),
      mergeVsRead: mergeNs / readNs,
      wallNsCallNs: perCall(wallNs),
      threadCpuNsCallNs: perCall(threadCpuNs),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run();
  const fmt = (x: number): string => (Math.abs(x) >= 1e5 ? x.toExponential(2) : x.toFixed(2));
  for (const [k, v] of Object.entries(r)) console.log(`${k.padEnd(22)} ${fmt(v)}`);
}
