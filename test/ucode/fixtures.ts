// Runs of real programs with the test resource: worker threads, real request ports, one or two
// nodes in this process (two over a real TCP mesh), traced into a temporary directory.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadProgram } from '../../src/program/load.js';
import { runNode, type RunOptions, type RunResult } from '../../src/runtime/run.js';
import { createTcpTransport } from '../../src/runtime/transport/tcp.js';
import type { PeerAddress } from '../../src/runtime/transport/types.js';
import { finishRunTrace, startRunTrace } from '../../src/runtime/tracing.js';
import { newRunOrigin } from '../../src/trace/clock.js';
import type { SchedulingPolicy } from '../../src/runtime/policy/types.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { testResource, type ResourceLog } from './resource.js';
import assert from 'node:assert/strict';
import { readTrace } from '../../src/trace/merge.js';
import type { TraceEvent } from '../../src/trace/schema.js';

export type WaitRecord = Extract<TraceEvent, { kind: 'wait' }>;

/** The wait records of a trace, each checked to lie inside the CF it names, on the worker that ran it. */
export function tracedWaits(trace: string): WaitRecord[] {
  const events = [...readTrace(trace).events];
  const ws = events.filter((e): e is WaitRecord => e.kind === 'wait');
  const starts = new Map<string, Extract<TraceEvent, { kind: 'cfStart' }>>();
  const fins = new Map<string, Extract<TraceEvent, { kind: 'cfFinish' }>>();
  for (const e of events) {
    if (e.kind === 'cfStart') starts.set(`${e.node}:${e.cf}`, e);
    if (e.kind === 'cfFinish') fins.set(`${e.node}:${e.cf}`, e);
  }
  for (const w of ws) {
    const s = starts.get(`${w.node}:${w.cf}`), f = fins.get(`${w.node}:${w.cf}`);
    assert.ok(s && f, `the wait for ${w.resource} names a CF that ran`);
    assert.equal(w.thread, s.lane, 'written by the worker that waited');
    assert.ok(w.thread >= 1, 'never on the system thread');
    assert.ok(s.t <= w.t && w.t <= w.end && w.end <= f.t, `wait [${w.t}, ${w.end}] inside its CF [${s.t}, ${f.t}]`);
  }
  return ws;
}

/** The ucode API as a fixture's ucode module imports it (bundled from the sources). */
export const UCODE_API = resolve('src/ucode/api.js');

/** A fresh directory holding `files`, removed after the test. */
export function fixture(t: { after(fn: () => void): void }, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'luna-ucode-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

export interface Ran {
  results: RunResult[];
  logs: ResourceLog[];
  trace?: string;
}

/**
 * Load `dir/prog.fa` with its ucodes and run it on `nodes` nodes of `threads` worker threads
 * with the test resource (and `layers`), traced into dir/trace when `traced`.
 */
export async function runWithResource(dir: string, o: { nodes?: number; threads?: number; args?: string[]; traced?: boolean; layers?: RunOptions['layers']; policy?: () => SchedulingPolicy; rehearse?: boolean } = {}): Promise<Ran> {
  const file = join(dir, 'prog.fa');
  const loaded = await loadProgram(file, { cacheDir: join(dir, '.cache') });
  if (!loaded.program) throw new Error(loaded.text);
  const program = loaded.program;
  const nodes = o.nodes ?? 1, threads = o.threads ?? 2, args = o.args ?? [];
  const layer = testResource();
  const trace = o.traced ? join(dir, 'trace') : undefined;
  const manifest = trace ? startRunTrace(trace, program, { program: file, args, nodes, threads, policy: 'default', version: 'test' }) : undefined;
  const traceOrigin = String(newRunOrigin());
  // every worker booted before main starts: the threads contend for the resource from the first CF
  const base = { program, bundle: loaded.bundle, args, threads, traceDir: trace, traceOrigin, layers: [layer, ...(o.layers ?? [])], warmStart: true };
  // booted, not warmed: the workers' rehearsal of --warm-start (3 000 fragments each) only where a
  // test asks for it (BOOT_ONLY in ../runtime/helpers.ts says why)
  const policy = (): SchedulingPolicy => {
    const p = o.policy?.() ?? new DefaultPolicy();
    if (o.rehearse !== true) p.rehearsal = undefined;
    return p;
  };
  let results: RunResult[];
  if (nodes === 1) results = [await runNode({ ...base, policy: policy() })];
  else {
    const transports = await mesh(nodes);
    results = await Promise.all(transports.map((transport) => runNode({ ...base, transport, policy: policy() })));
  }
  if (trace && manifest) finishRunTrace(trace, manifest, { status: results[0]!.status, message: results[0]!.message, offsets: results[0]!.clockOffsets });
  // the handlers registered node by node, in rank order
  return { results, logs: layer.logs, trace };
}

/** `n` ranks of a real TCP mesh in this process. */
async function mesh(n: number): Promise<Awaited<ReturnType<typeof createTcpTransport>>[]> {
  let publish!: (a: PeerAddress & { secret: string }) => void;
  const published = new Promise<PeerAddress & { secret: string }>((r) => (publish = r));
  const rendezvous = { publish: async (addr: PeerAddress, secret: string) => publish({ ...addr, secret }), lookup: () => published };
  return Promise.all(Array.from({ length: n }, (_, rank) => createTcpTransport({ rank, size: n, rendezvous })));
}
