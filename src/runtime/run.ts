// Run a loaded program on this process: one node of a run (N = 1 here; cluster.ts adds nodes).
import { availableParallelism } from 'node:os';
import type { CompiledProgram } from '../program/compile.js';
import type { TraceSink } from '../trace/sink.js';
import { NodeRuntime, RunFault } from './node.js';
import { WorkerPool } from './pool.js';
import { describeCf, formatHang, where, type HangItem } from './report.js';
import { displayKey } from '../program/compile.js';

export interface RunOptions {
  program: CompiledProgram;
  bundle?: string;
  args: string[];
  threads?: number;
  trace?: TraceSink;
  needGid?: boolean;
  now?: () => number;
}

export interface RunResult {
  ok: boolean;
  /** error text (fault or hang) when !ok */
  message?: string;
  kind?: 'fault' | 'hang';
}

export function defaultThreads(): number {
  return Math.max(1, availableParallelism());
}

const hr = () => Number(process.hrtime.bigint());

export async function runSingleNode(opts: RunOptions): Promise<RunResult> {
  const threads = opts.threads ?? defaultThreads();
  let rt!: NodeRuntime;
  let settle!: (r: RunResult) => void;
  const done = new Promise<RunResult>((r) => { settle = r; });
  const pool = new WorkerPool({
    threads, bundle: opts.bundle, imports: opts.program.imports,
    onResult: (r) => rt.onResult(r),
    onFatal: (w, msg) => settle({ ok: false, kind: 'fault', message: `worker thread ${w} failed: ${msg}` }),
  });
  rt = new NodeRuntime(opts.program, {
    rank: 0, size: 1, threads, inflight: pool.inflight, trace: opts.trace, now: opts.now ?? hr,
    sendBatch: (w, b) => pool.send(w, b),
  }, { needGid: opts.needGid });
  rt.onFault = (f) => settle({ ok: false, kind: 'fault', message: faultText(rt, f) });
  rt.onIdle = () => {
    if (rt.live === 0) settle({ ok: true });
    else settle({ ok: false, kind: 'hang', message: hangText(rt, 0) });
  };
  try {
    await pool.start();
  } catch (e) {
    await pool.kill();
    return { ok: false, kind: 'fault', message: `cannot start worker threads: ${e instanceof Error ? e.message : String(e)}` };
  }
  try { rt.start(opts.args); } catch (e) { rt.fail(e); }
  const res = await done;
  if (res.ok) await pool.stop(); else await pool.kill();
  return res;
}

export function faultText(rt: NodeRuntime, f: RunFault): string {
  const lines = [f.message];
  if (f.cf) lines.push(`  in ${describeCf(f.cf, rt.labelOf(f.cf), rt.program.codes)}${rt.size > 1 ? ` on node ${rt.self}` : ''}`);
  return lines.join('\n');
}

export function hangItems(rt: NodeRuntime, node: number): HangItem[] {
  return rt.waitingReport().map((w) => ({
    node,
    origin: w.cf.site.origin,
    text: `${describeCf(w.cf, w.label, rt.program.codes)}${rt.size > 1 ? ` on node ${node}` : ''} waits for ${w.waits.length ? w.waits.join(', ') : '(nothing it can name)'}`,
  }));
}

export function hangText(rt: NodeRuntime, node: number): string {
  return formatHang(hangItems(rt, node));
}

export { where, displayKey };
