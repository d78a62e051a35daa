// `luna report`: one self-contained HTML page of a traced run, or of two runs side by side.
import { basename } from 'node:path';
import { collectRun, type CollectProgress, type RunData } from './collect.js';
import { buildPage } from './page.js';

export { collectRun, type RunData } from './collect.js';
export { buildPage, echartsSource } from './page.js';
export { SECTIONS } from './sections/index.js';
export type { Section, ReportCtx, BuiltSection, Helpers } from './section.js';
import type { ReportCtx } from './section.js';

export interface ReportProgress {
  /** a phase starts: reading and analysing trace i of n, or writing */
  phase(name: string): void;
  events: CollectProgress;
}

export interface ReportOptions {
  /** a distribution shown applied to the runs (the load section) */
  distribution?: ReportCtx['distribution'];
}

/** The page of one trace directory, or of two compared (A before, B after). */
export function reportHtml(dirs: string[], progress?: ReportProgress, o: ReportOptions = {}): { html: string; runs: RunData[] } {
  const runs: RunData[] = [];
  dirs.forEach((d, i) => {
    progress?.phase(dirs.length > 1 ? `reading ${i === 0 ? 'A' : 'B'}` : 'reading');
    runs.push(collectRun(d, {}, progress?.events, { gids: o.distribution !== undefined }));
  });
  const labels = dirs.length === 1 ? [dirs[0]!] : dirs.map((d, i) => `${i === 0 ? 'A (before)' : 'B (after)'}: ${basename(d.replace(/[\\/]+$/, '')) || d}`);
  progress?.phase('building');
  return { html: buildPage(runs, labels, { distribution: o.distribution }), runs };
}
