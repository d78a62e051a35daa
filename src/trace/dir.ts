// A trace directory: one file per (node, thread) plus manifest.json. The launcher (node 0's
// process, before it starts the other nodes) calls openTraceDir with a draft manifest, so that a
// run that crashes still leaves a readable directory; writeManifest replaces it at the end.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceManifest } from './manifest.js';
import { MANIFEST_NAME, TRACE_FILE_RE, TraceFormatError, VERSION, versionMessage } from './format.js';
import { manifestProblem } from './manifest-schema.js';

/** A manifest that parses but does not describe a trace (a field missing, of the wrong type, or contradicting the files). */
export class ManifestError extends TraceFormatError {}

export { traceFileName } from './format.js';

/** Create `dir` (or clear the trace files of an earlier run in it) and write the draft manifest. */
export function openTraceDir(dir: string, manifestDraft: TraceManifest): void {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) {
    if (TRACE_FILE_RE.test(f) || f === MANIFEST_NAME) rmSync(join(dir, f), { force: true });
  }
  writeManifest(dir, manifestDraft);
}

/** Write the manifest atomically (temp file + rename): readers never see half a manifest. */
export function writeManifest(dir: string, manifest: TraceManifest): void {
  const tmp = join(dir, `.${MANIFEST_NAME}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(manifest, null, 2) + '\n');
  renameSync(tmp, join(dir, MANIFEST_NAME));
}

/** Files of the form node<N>.thread<T>.lt in `dir`, sorted by node then thread. */
export function listTraceFiles(dir: string): { node: number; thread: number; path: string }[] {
  const out: { node: number; thread: number; path: string }[] = [];
  for (const f of readdirSync(dir)) {
    const m = TRACE_FILE_RE.exec(f);
    if (m) out.push({ node: Number(m[1]), thread: Number(m[2]), path: f });
  }
  return out.sort((a, b) => a.node - b.node || a.thread - b.thread);
}

/**
 * Read the manifest of `dir`. A missing manifest (a run killed before writing its draft) yields
 * a synthesized one and a warning; an unreadable one throws TraceFormatError.
 */
export function readManifest(dir: string, warnings: string[] = []): TraceManifest {
  const path = join(dir, MANIFEST_NAME);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new TraceFormatError(path, (e as Error).message);
    const files = listTraceFiles(dir);
    if (files.length === 0) throw new TraceFormatError(dir, 'not a trace directory (no manifest.json and no node<N>.thread<T>.lt files)');
    warnings.push(`${MANIFEST_NAME}: missing; using the ${files.length} trace files found`);
    return {
      format: 'luna-ts-trace', version: VERSION, program: '?', args: [],
      nodes: Math.max(...files.map((f) => f.node)) + 1,
      threads: Math.max(...files.map((f) => f.thread)),
      codes: [], clock: { cpuExact: false, offsets: [] }, startedAt: '',
      versions: { lunaTs: '?', node: '?' }, files,
    };
  }
  let m: TraceManifest;
  try {
    m = JSON.parse(text) as TraceManifest;
  } catch (e) {
    throw new TraceFormatError(path, `invalid JSON: ${(e as Error).message}`);
  }
  if (m === null || typeof m !== 'object' || m.format !== 'luna-ts-trace') throw new TraceFormatError(path, 'not a luna-ts trace manifest');
  if (m.version !== VERSION) throw new TraceFormatError(path, versionMessage(m.version));
  const problem = manifestProblem(m);
  if (problem) throw new ManifestError(path, problem);
  const beyond = listTraceFiles(dir).find((f) => f.node >= m.nodes);
  if (beyond) throw new ManifestError(path, `field "nodes": ${m.nodes}, but the directory holds ${beyond.path}, a file of node ${beyond.node}`);
  return m;
}

/** Bytes of a trace's files; at about 20 bytes a record, an estimate of its events for progress bars. */
export function traceFilesBytes(dir: string, m: TraceManifest): number {
  let b = 0;
  for (const f of m.files) { try { b += statSync(join(dir, f.path)).size; } catch { /* reported by the reader */ } }
  return b;
}

/** Events of a trace, estimated from its size (progress only). */
export const estimateEvents = (bytes: number): number => Math.max(1, Math.round(bytes / 20));
