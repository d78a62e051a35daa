// Shared by the report tests: real traced runs of an example (written under os.tmpdir()), their
// SLOW analysis as `luna analyze slow --json` prints it, and the data block of a report page.
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Finding, SlowReport } from '../../src/analysis/slow/index.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LUNA = join(ROOT, 'bin', 'luna');

export interface Out { status: number | null; stdout: string; stderr: string }

export function luna(args: string[], cwd = ROOT): Out {
  const r = spawnSync(process.execPath, [LUNA, ...args], { cwd, encoding: 'utf8', timeout: 180_000, maxBuffer: 256 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** matmul spread over nodes by its locators: fragments on every node, DFs crossing between them. */
export function tracedRun(trace: string, opts: string[] = ['--nodes', '2', '--threads', '1'], args = ['64', '4']): void {
  const r = luna(['run', ...opts, '--trace', trace, join(ROOT, 'examples/matmul/matmul_cyclic.fa'), ...args]);
  assert.equal(r.status, 0, r.stderr);
}

export type Analysis = SlowReport & { advice: string[]; findings: Finding[] };

export function analysis(trace: string): Analysis {
  const a = luna(['analyze', 'slow', '--json', trace]);
  assert.equal(a.status, 0, a.stderr);
  return JSON.parse(a.stdout) as Analysis;
}

export interface PageData {
  labels: string[];
  runs: { label: string; dir: string; slow: SlowReport; findings: Finding[] }[];
  sections: Record<string, unknown>;
}

/** The JSON data block embedded in a report page. */
export function pageData(html: string): PageData {
  const m = /<script type="application\/json" id="luna-data">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(m, 'the page embeds its data as application/json');
  return JSON.parse(m[1]!) as PageData;
}

export function chromiumPath(): string | undefined {
  return process.env.LUNA_CHROMIUM || '/usr/bin/chromium';
}
