// `luna report` against the analysis of the same trace, on generated trace directories of about
// 10^5 and 10^6 fragments (BENCH_REPORT_CFS, comma-separated, overrides): the SLOW analysis (one
// model pass: the baseline, measured in the same run, the faster of a run before and after the report), the whole report (read, analyse, collect
// the timeline, build and write the page), the page's size and bytes per fragment.
// Target: the report of 10^6 fragments ≤ 30 MB.
// Run: node dist/bench/report.js  (or import { run }).
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeSlowTrace } from '../src/analysis/slow/index.js';
import { syntheticEvents, type SyntheticOptions } from '../src/analysis/sim/synthetic.js';
import { reportHtml } from '../src/report/index.js';
import { writeSyntheticTrace } from './common.js';

function measure<T>(f: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = f();
  return { ms: performance.now() - t0, value };
}

/** Synthetic events per CF, from a small sample (the generator's mix of records). */
function eventsPerCf(): number {
  const o: SyntheticOptions = { events: 20_000, nodes: 2, threads: 2, seed: 11 };
  let cfs = 0, n = 0;
  for (const e of syntheticEvents(o)) { n++; if (e.kind === 'cfFinish') cfs++; }
  return n / Math.max(1, cfs);
}

export async function run(): Promise<Record<string, number>> {
  const targets = (process.env.BENCH_REPORT_CFS ?? '1e5,1e6').split(',').map(Number).filter((x) => x > 0);
  const perCf = eventsPerCf();
  const out: Record<string, number> = {};
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-report-'));
  try {
    for (const want of targets) {
      const tag = want >= 1e6 ? `${Math.round(want / 1e6)}M` : `${Math.round(want / 1e3)}k`;
      const trace = join(dir, `trace-${tag}`);
      const o: SyntheticOptions = { events: Math.round(want * perCf), nodes: 2, threads: 2, seed: 11 };
      // written by a child process: generating 10^7 events here would leave a heap that slows
      // every later pass
      writeSyntheticTrace(trace, o);
      const an0 = measure(() => analyzeSlowTrace(trace));
      const page = join(dir, `report-${tag}.html`);
      const rep = measure(() => writeFileSync(page, reportHtml([trace]).html));
      // the baseline warm as well as cold: the faster of an analysis before and after the report
      const an1 = measure(() => analyzeSlowTrace(trace));
      const an = an1.ms < an0.ms ? an1 : an0;
      const bytes = statSync(page).size, cfs = an.value.cfs;
      out[`cfs${tag}`] = cfs;
      out[`analyzeMs${tag}`] = Math.round(an.ms);
      out[`reportMs${tag}`] = Math.round(rep.ms);
      out[`reportVsAnalyze${tag}`] = +(rep.ms / an.ms).toFixed(2);
      out[`sizeMB${tag}`] = +(bytes / 1e6).toFixed(2);
      out[`bytesPerCf${tag}`] = +(bytes / cfs).toFixed(1);
      rmSync(trace, { recursive: true, force: true });
      rmSync(page, { force: true });
    }
    out.peakRssMiB = Math.round(process.resourceUsage().maxRSS / 1024);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [k, v] of Object.entries(await run())) console.log(`${k.padEnd(24)} ${v}`);
}
