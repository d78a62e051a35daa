// Reading a trace directory's manifest back, validated against its schema (zod). Kept apart
// from dir.ts, which a traced run uses to write, so a run does not load the validator.

import { statSync } from 'node:fs';
import { FileError, readRegular, reason } from '../core/files.js';
import { join } from 'node:path';
import type { TraceManifest } from './manifest.js';
import { MANIFEST_NAME, TraceFormatError, VERSION, versionMessage } from './format.js';
import { manifestProblem } from './manifest-schema.js';
import { listTraceFiles } from './dir.js';

/** A manifest that parses but does not describe a trace (a field missing, of the wrong type, or contradicting the files). */
export class ManifestError extends TraceFormatError {}

/**
 * Read the manifest of `dir`. A missing manifest (a run killed before writing its draft) yields
 * a synthesized one and a warning; an unreadable one throws TraceFormatError.
 */
export function readManifest(dir: string, warnings: string[] = []): TraceManifest {
  const path = join(dir, MANIFEST_NAME);
  let text: string;
  try {
    text = readRegular(path, 'manifest');
  } catch (e) {
    if (e instanceof FileError) throw new TraceFormatError(path, e.problem!);
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new TraceFormatError(path, reason(e));
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
