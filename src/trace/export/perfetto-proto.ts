// Export of a trace as Perfetto's native protobuf (a `Trace` of `TracePacket`s carrying
// TrackEvents): the format ui.perfetto.dev and trace_processor read fastest, several times
// smaller than the Chrome JSON. The subset of Perfetto's schema below (field numbers as in
// perfetto/protos/perfetto/trace) is protobufjs' (a maintained protobuf library), which encodes
// the few track descriptors and decodes the file in the tests; the packets written once per event
// go through the hand encoder in proto-encode.ts. Streamed: the listener writes each fragment as
// it finishes, in 1 MiB batches.
//
// Tracks: a process per node (pid = node + 1), a thread per lane (tid = node · 1024 + lane + 1;
// lane 0 is the system thread), a "DF arrivals" thread per node, and counter tracks for the
// ready queue and the live DF bytes. A fragment is a slice (BEGIN at its start, END at its
// finish) named as the program names it (`link[5]`) with its code, global id, CPU time and
// inputs as debug annotations. Names that repeat and annotation keys are interned (one string per
// sequence); an instance's name is written inline.
// SPMD operations are slices on the track of the thread that ran the rank (`op @ call site`), a
// collective's end carrying its bytes, root and sequence number; lock changes are instants.
import { closeSync } from 'node:fs';
import { writeAll } from './write-all.js';
import { createRegular } from '../../core/files.js';
import protobuf from 'protobufjs';
import type { DamageReport } from '../damage.js';
import type { ModelListener, TraceModel } from '../model/model.js';
import { readModel } from '../read.js';
import { SpmdResolver, spmdOpName, type SpmdCExitEvent, type SpmdEnterEvent, type SpmdExitEvent, type SpmdListener, type SpmdLockEvent } from '../model/spmd.js';
import type { DfRec, Fragment, Transfer } from '../model/records.js';
import { DDA_OPS, type RecordKind, type TraceEvent } from '../schema.js';
import { ProtoBuf, putVarint } from './proto-encode.js';

const SCHEMA = {
  nested: {
    TracePacket: {
      fields: {
        timestamp: { type: 'uint64', id: 8 },
        trustedPacketSequenceId: { type: 'uint32', id: 10 },
        trackEvent: { type: 'TrackEvent', id: 11 },
        internedData: { type: 'InternedData', id: 12 },
        sequenceFlags: { type: 'uint32', id: 13 },
        trackDescriptor: { type: 'TrackDescriptor', id: 60 },
      },
    },
    TrackDescriptor: {
      fields: {
        uuid: { type: 'uint64', id: 1 },
        name: { type: 'string', id: 2 },
        process: { type: 'ProcessDescriptor', id: 3 },
        thread: { type: 'ThreadDescriptor', id: 4 },
        parentUuid: { type: 'uint64', id: 5 },
        counter: { type: 'CounterDescriptor', id: 8 },
      },
    },
    ProcessDescriptor: { fields: { pid: { type: 'int32', id: 1 }, processName: { type: 'string', id: 6 } } },
    ThreadDescriptor: { fields: { pid: { type: 'int32', id: 1 }, tid: { type: 'int32', id: 2 }, threadName: { type: 'string', id: 5 } } },
    CounterDescriptor: { fields: {} },
    TrackEvent: {
      fields: {
        categoryIids: { rule: 'repeated', type: 'uint64', id: 3 },
        debugAnnotations: { rule: 'repeated', type: 'DebugAnnotation', id: 4 },
        type: { type: 'int32', id: 9 },
        nameIid: { type: 'uint64', id: 10 },
        trackUuid: { type: 'uint64', id: 11 },
        name: { type: 'string', id: 23 },
        counterValue: { type: 'int64', id: 30 },
        doubleCounterValue: { type: 'double', id: 44 },
      },
    },
    DebugAnnotation: {
      fields: {
        nameIid: { type: 'uint64', id: 1 },
        uintValue: { type: 'uint64', id: 3 },
        intValue: { type: 'int64', id: 4 },
        doubleValue: { type: 'double', id: 5 },
        stringValue: { type: 'string', id: 6 },
        name: { type: 'string', id: 10 },
      },
    },
    InternedString: { fields: { iid: { type: 'uint64', id: 1 }, name: { type: 'string', id: 2 } } },
    InternedData: {
      fields: {
        eventNames: { rule: 'repeated', type: 'InternedString', id: 2 },
        debugAnnotationNames: { rule: 'repeated', type: 'InternedString', id: 3 },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(SCHEMA);
export const TracePacket = root.lookupType('TracePacket');

const SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4;
const SEQ = 1;
const SEQ_CLEARED = 1, SEQ_NEEDS = 2;
const BATCH = 1 << 20;

export interface ProtoResult { packets: number; slices: number; warnings: string[]; damage: DamageReport }

/** Writes Perfetto protobuf packets to a file descriptor as the model resolves the trace. */
export class PerfettoProtoWriter implements ModelListener, SpmdListener {
  packets = 0;
  slices = 0;
  private out = new ProtoBuf(BATCH + 65536);
  private readonly names = new Map<string, number>();
  private readonly keys = new Map<string, number>();
  private first = true;
  /** the InternedData of the packet being built (written after its TrackEvent) */
  private readonly interned = new ProtoBuf();

  constructor(private readonly fd: number, private readonly model: TraceModel) {
    const N = model.N, T = model.T;
    for (let n = 0; n < N; n++) {
      this.packet({ trackDescriptor: { uuid: nodeUuid(n), process: { pid: n + 1, processName: `node ${n}` } } });
      for (let l = 0; l <= T; l++) {
        this.packet({ trackDescriptor: { uuid: laneUuid(n, l), parentUuid: nodeUuid(n), thread: { pid: n + 1, tid: n * 1024 + l + 1, threadName: l === 0 ? 'system' : `lane ${l}` } } });
      }
      this.packet({ trackDescriptor: { uuid: netUuid(n), parentUuid: nodeUuid(n), thread: { pid: n + 1, tid: n * 1024 + 1023, threadName: 'DF arrivals' } } });
      this.packet({ trackDescriptor: { uuid: counterUuid(n, 0), parentUuid: nodeUuid(n), name: 'ready queue', counter: {} } });
      this.packet({ trackDescriptor: { uuid: counterUuid(n, 1), parentUuid: nodeUuid(n), name: 'live DF bytes', counter: {} } });
    }
  }

  /** A packet built by protobufjs from an object (the few track descriptors). */
  private packet(p: Record<string, unknown>): void {
    const msg: Record<string, unknown> = { trustedPacketSequenceId: SEQ, ...p };
    if (this.first) { msg.sequenceFlags = SEQ_CLEARED; this.first = false; }
    const bytes = TracePacket.encode(msg).finish();
    this.writePacket(bytes as Buffer, bytes.length);
  }

  /** Trace { repeated TracePacket packet = 1; }: tag 0x0a, the length, the packet. */
  private writePacket(bytes: Uint8Array, n: number): void {
    const o = this.out;
    o.room(n + 10);
    o.buf[o.len++] = 0x0a;
    o.varint(n);
    o.bytes(bytes, n);
    this.packets++;
    if (o.len >= BATCH) this.flush();
  }

  flush(): void {
    if (this.out.len > 0) writeAll(this.fd, this.out.buf, 0, this.out.len);
    this.out.len = 0;
  }

  /** The iid of an interned string, adding its InternedData entry to the packet when new. */
  private intern(map: Map<string, number>, field: number, s: string): number {
    let iid = map.get(s);
    if (iid !== undefined) return iid;
    iid = map.size + 1;
    map.set(s, iid);
    const e = this.interned, at = e.open(field);
    e.uint(1, iid);
    e.string(2, s);
    e.close(at);
    return iid;
  }

  /** position of the open packet's and TrackEvent's length slots in `out` */
  private packetAt = 0;
  private eventAt = 0;

  /**
   * Start a packet with a TrackEvent of `type` on a track, written straight into the output;
   * annotations follow, then `commit`. A name that repeats (a code, `system busy`, an operation
   * at a site) is interned; one that names an instance (`link[5]`, a DF transfer) is written
   * inline: interning 10^6 names used once would only grow the table and the file.
   */
  private open(type: number, track: number, name: string | null, instance = false, t = 0): void {
    const o = this.out;
    this.interned.len = 0;
    // the head every packet shares, stored byte by byte (one room check, no call per field):
    // Trace.packet {, timestamp, trusted_packet_sequence_id, sequence_flags, track_event {, type, track_uuid
    o.room(40);
    const b = o.buf;
    let p = o.len;
    b[p++] = 0x0a; this.packetAt = p++;
    b[p++] = 0x40; p = putVarint(b, p, ts(t));
    b[p++] = 0x50; b[p++] = SEQ;
    b[p++] = 0x68; b[p++] = SEQ_NEEDS;
    b[p++] = 0x5a; this.eventAt = p++;
    b[p++] = 0x48; b[p++] = type;
    b[p++] = 0x58; p = putVarint(b, p, track);
    o.len = p;
    if (name === null) return;
    if (instance) o.string(23, name);
    else o.uint(10, this.intern(this.names, 2, name));
  }

  /** A debug annotation under an interned key (`byName`: the key written as a string). */
  private ann(key: string, v: string | number, byName = false): void {
    this.annAt(byName ? -1 : this.intern(this.keys, 3, key), key, v);
  }

  /** A debug annotation under the interned key `iid` (< 0: `key` written as a string). */
  private annAt(iid: number, key: string, v: string | number): void {
    const o = this.out, at = o.open(4);
    if (iid < 0) o.string(10, key);
    else o.uint(1, iid);
    if (typeof v === 'string') o.string(6, v);
    else if (Number.isInteger(v)) o.int(4, v);
    else o.double(5, v);
    o.close(at);
  }

  /** iids of the keys every fragment carries (0: not interned yet; interned strings stay for the whole sequence) */
  private iidCode = 0;
  private iidGid = 0;
  private iidCpu = 0;
  private iidInputs = 0;

  /** per code: its `code` annotation as encoded once (the same bytes for every CF of the code) */
  private readonly codeAnns: (Buffer | undefined)[] = [];

  /** The `code` annotation of a CF of `code`: encoded at its first CF, then copied. */
  private codeAnn(code: number): void {
    const a = code >= 0 ? this.codeAnns[code] : undefined;
    if (a !== undefined) { this.out.bytes(a, a.length); return; }
    const o = this.out, at = o.len;
    this.annAt(this.iidCode || (this.iidCode = this.intern(this.keys, 3, 'code')), 'code', this.model.codeName(code));
    if (code >= 0) this.codeAnns[code] = Buffer.from(o.buf.subarray(at, o.len));
  }

  /** A fragment's inputs as its tooltip lists them (the first 8 names, then the count), written in place (names from the DF keys: no string per DF). */
  private inputsAnn(inputs: readonly DfRec[]): void {
    const o = this.out, at = o.open(4);
    o.uint(1, this.iidInputs || (this.iidInputs = this.intern(this.keys, 3, 'inputs')));
    const s = o.open(6);
    const n = Math.min(inputs.length, 8);
    o.dfName(inputs[0]!.key);
    for (let i = 1; i < n; i++) { o.text(', '); o.dfName(inputs[i]!.key); }
    if (inputs.length > 8) o.text(`, … (${inputs.length})`);
    o.close(s);
    o.close(at);
  }

  private commit(): void {
    const o = this.out;
    o.close(this.eventAt);
    if (this.interned.len > 0) o.message(12, this.interned);
    o.close(this.packetAt);
    this.packets++;
    if (o.len >= BATCH) this.flush();
  }

  /** The end of the innermost open slice of a track. */
  private end(track: number, t1: number): void {
    this.open(SLICE_END, track, null, false, t1);
    this.commit();
  }

  enter(e: SpmdEnterEvent, site: string): void {
    this.open(SLICE_BEGIN, laneUuid(e.node, e.thread), `${spmdOpName(e.op)} @ ${site}`, false, e.t);
    this.ann('rank', e.rank);
    this.commit();
    this.slices++;
  }

  exit(e: SpmdExitEvent): void {
    this.end(laneUuid(e.node, e.thread), e.t);
  }

  cexit(e: SpmdCExitEvent): void {
    // annotations of an end by name: ends with them are rare
    this.open(SLICE_END, laneUuid(e.node, e.thread), null, false, e.t);
    this.ann('seq', e.seq, true);
    this.ann('sent', e.sent, true);
    this.ann('received', e.recv, true);
    this.ann('root', e.root, true);
    this.commit();
  }

  lock(e: SpmdLockEvent): void {
    this.open(INSTANT, laneUuid(e.node, e.thread), `${e.kind === 'spmdAlock' ? 'acquire' : 'release'} lock ${e.lock}`, false, e.t);
    this.ann('rank', e.rank);
    this.commit();
    this.slices++;
  }

  finish(f: Fragment, inputs: readonly DfRec[]): void {
    if (f.slot < 0 || !(f.finish >= f.start)) return;
    const track = laneUuid(f.node, f.lane);
    if (f.labelIdx === null) this.open(SLICE_BEGIN, track, f.label, false, f.start);
    else {
      // an instance's name, written inline from its label and indices
      this.open(SLICE_BEGIN, track, null, false, f.start);
      const o = this.out, at = o.open(23);
      o.cfName(f.label, f.labelIdx);
      o.close(at);
    }
    this.codeAnn(f.code);
    this.annAt(this.iidGid || (this.iidGid = this.intern(this.keys, 3, 'gid')), 'gid', f.gid);
    this.annAt(this.iidCpu || (this.iidCpu = this.intern(this.keys, 3, 'cpu_us')), 'cpu_us', Math.round(f.cpu) / 1000);
    if (inputs.length) this.inputsAnn(inputs);
    this.commit();
    this.end(track, f.finish);
    this.slices++;
  }

  sysBusy(node: number, t0: number, t1: number): void {
    const track = laneUuid(node, 0);
    this.open(SLICE_BEGIN, track, 'system busy', false, t0);
    this.commit();
    this.end(track, t1);
    this.slices++;
  }

  transfer(t: Transfer): void {
    // the name `DF x[3] from node 1`, written in place (one per transfer: never interned)
    this.open(INSTANT, netUuid(t.to), null, false, t.arrive);
    const o = this.out, at = o.open(23);
    o.text('DF ');
    o.dfName(t.df.key);
    o.text(' from node ');
    o.decimal(t.from);
    o.close(at);
    this.ann('bytes', t.bytes);
    this.ann('latency_us', Math.round(t.arrive - t.sendStart) / 1000);
    this.commit();
    this.slices++;
  }

  readonly eventKinds: readonly RecordKind[] = ['ddaOp'];
  /** A dynamic array's global operation: a slice on its node's network track, with the bytes it moved. */
  event(e: TraceEvent): void {
    if (e.kind !== 'ddaOp') return;
    const track = netUuid(e.node);
    this.open(SLICE_BEGIN, track, `${DDA_OPS[e.op] ?? 'operation'} of dynamic array ${e.array}`, false, e.t);
    this.ann('exchanged_bytes', e.exchanged);
    this.ann('rearranged_bytes', e.rearranged);
    this.commit();
    this.end(track, e.end);
    this.slices++;
  }

  counter(node: number, name: 'readyQueue' | 'liveBytes', t: number, value: number): void {
    this.open(COUNTER, counterUuid(node, name === 'readyQueue' ? 0 : 1), null, false, t);
    this.out.int(30, Math.round(value));
    this.commit();
  }
}

const ts = (t: number): number => Math.max(0, Math.round(t));
const nodeUuid = (n: number): number => 1 + n;
const laneUuid = (n: number, l: number): number => 1_000_000 + n * 2048 + l;
const netUuid = (n: number): number => 1_000_000 + n * 2048 + 1100;
const counterUuid = (n: number, k: number): number => 1_000_000 + n * 2048 + 1200 + k;

/**
 * Write the trace in `dir` as Perfetto protobuf to `outFile` (a path, or a file descriptor);
 * `progress(done, estimated)` in events.
 */
export function exportPerfettoProto(dir: string, outFile: string | number, progress?: (done: number, estimated: number) => void): ProtoResult {
  const fd = typeof outFile === 'number' ? outFile : createRegular(outFile, 'Perfetto trace');
  try {
    let w!: PerfettoProtoWriter;
    const read = readModel(dir, (model) => { w = new PerfettoProtoWriter(fd, model); model.listen(w); model.use(SpmdResolver).listen(w); }, progress, { worker: true, recycle: true });
    w.flush();
    return { packets: w.packets, slices: w.slices, warnings: read.warnings(), damage: read.damage() };
  } finally {
    if (typeof outFile !== 'number') closeSync(fd);
  }
}
