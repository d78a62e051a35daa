// The trace directory of a run, managed by the launching rank 0: a draft manifest before any
// node starts (so a run that crashes still leaves a readable directory), the final manifest
// with the files, clock offsets and how the run ended.
import { hostname } from 'node:os';
import { cpuSet } from '../core/cpus.js';
import type { CompiledProgram } from '../program/compile.js';
import { cpuClockExact } from '../trace/clock.js';
import { listTraceFiles, openTraceDir, writeManifest } from '../trace/dir.js';
import { MANIFEST_NAME, VERSION as TRACE_FORMAT_VERSION } from '../trace/format.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MachineInfo, TraceManifest, SiteInfo } from '../trace/manifest.js';
import type { RunStatus } from '../trace/schema.js';

export interface RunDescription {
  program: string;
  args: readonly string[];
  nodes: number;
  threads: number;
  policy: string;
  version: string;
  /** what started the nodes (launch/env.ts); default `local` */
  launcher?: string;
}

export function siteTable(p: CompiledProgram): SiteInfo[] {
  return p.sites.map((s) => ({ label: s.label, code: s.code, kind: s.kind, file: s.origin.file, line: s.origin.line, col: s.origin.col, spawnNo: s.spawnNo }));
}

/** Create (or clear) the trace directory and write the draft manifest; returns it. */
export function startRunTrace(dir: string, program: CompiledProgram, d: RunDescription): TraceManifest {
  const manifest: TraceManifest = {
    format: 'luna-ts-trace', version: TRACE_FORMAT_VERSION, program: d.program, args: [...d.args], nodes: d.nodes, threads: d.threads,
    cores: cpuSet().count, launcher: d.launcher ?? 'local', ...(d.nodes === 1 ? { machines: [thisMachine([0])] } : {}), codes: program.codes, sites: siteTable(program), policy: d.policy,
    clock: { cpuExact: cpuClockExact, offsets: new Array<number>(d.nodes).fill(0) },
    startedAt: new Date().toISOString(), status: 'running', versions: { lunaTs: d.version, node: process.version }, files: [],
  };
  openTraceDir(dir, manifest);
  return manifest;
}

/** This machine, running `nodes` (one node: this process and its CPU set). */
export function thisMachine(nodes: number[]): MachineInfo {
  const set = cpuSet();
  return { host: hostname(), cores: set.count, nodes, cpus: set.machine, nodeCpus: nodes.map(() => set.count) };
}

/**
 * The final manifest: files written, clock offsets, how the run ended, and the machines of a
 * multi-node run (asked by node 0 with the clock offsets; a one-node draft already has its own).
 */
export function finishRunTrace(dir: string, manifest: TraceManifest, end: { status: RunStatus; message?: string; offsets?: number[]; machines?: MachineInfo[]; signal?: string }): void {
  writeManifest(dir, {
    ...manifest,
    ...(end.machines ? { machines: end.machines } : {}),
    clock: { ...manifest.clock, offsets: end.offsets ?? manifest.clock.offsets },
    status: end.status,
    ...(end.message ? { message: end.message } : {}),
    ...(end.signal ? { signal: end.signal } : {}),
    files: listTraceFiles(dir),
  });
}

/**
 * A node whose launcher (node 0, which keeps the manifest) died: finish the draft manifest
 * that node 0 wrote at the start as `interrupted`, with the files the nodes flushed. Every
 * surviving node may do it (the write is atomic and they write the same); a manifest that
 * already says how the run ended, or that cannot be read, is left alone.
 */
export function finishOrphanTrace(dir: string, message: string): void {
  let draft: TraceManifest;
  try {
    draft = JSON.parse(readFileSync(join(dir, MANIFEST_NAME), 'utf8')) as TraceManifest;
  } catch { return; }
  if (draft?.format !== 'luna-ts-trace' || draft.status !== 'running') return;
  finishRunTrace(dir, draft, { status: 'interrupted', message });
}
