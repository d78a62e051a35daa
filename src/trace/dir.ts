// A trace directory: one file per (node, thread) plus manifest.json. The launcher (node 0's
// process, before it starts the other nodes) calls openTraceDir with a draft manifest, so that a
// run that crashes still leaves a readable directory; writeManifest replaces it at the end.
// Reading a directory back (and validating its manifest) is manifest-reader.ts: a run never loads it.

import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { makeDirectory } from '../core/files.js';
import { join } from 'node:path';
import type { TraceManifest } from './manifest.js';
import { MANIFEST_NAME, TRACE_FILE_RE } from './format.js';

export { traceFileName } from './format.js';

/** Create `dir` (or clear the trace files of an earlier run in it) and write the draft manifest. */
export function openTraceDir(dir: string, manifestDraft: TraceManifest): void {
  makeDirectory(dir, 'trace directory');
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
