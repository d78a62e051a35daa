// Runtime suite, in-process with runSingleNode (programs loaded once):
//  (a) µs per CF for N independent empty CFs and a chain of N CFs, 1 and 2 worker threads:
//      (median run time at N − median run time at n = 1, the fixed startup) / N;
//  (b) baselines in the same run: a plain sequential JS loop calling the same ucode functions
//      (lower bound) and one piscina task per CF (independent: all submitted at once; chain:
//      each awaited in turn), measured after the pool is warm;
//  (c) block matmul (bs = 80, ~1 ms block products): speedup of 2 threads over 1.
import { Piscina } from 'piscina';
import type { DF } from '../src/ucode/df.js';
import { c_step } from './programs/chain/ucodes.js';
import { c_work } from './programs/independent/ucodes.js';
import type { Task } from './programs/piscina/worker.js';
import { interleaved, load, median, nowMs, prog, runInProc, section, sig, type Ctx, type SuiteOutput, type Target } from './common.js';

const THREADS = [1, 2];

class IntDF {
  v = 0;
  getInt(): number { return this.v; }
  setInt(n: number): void { this.v = n; }
}

/** µs per call of the ucodes in a plain loop (median of reps). */
function seqLoop(n: number, reps: number): { independent: number; chain: number } {
  const ind: number[] = [];
  const ch: number[] = [];
  for (let r = 0; r < reps + 1; r++) {
    let t = nowMs();
    for (let i = 0; i < n; i++) c_work(i, 0);
    const a = nowMs() - t;
    t = nowMs();
    let cur = new IntDF();
    for (let i = 0; i < n; i++) {
      const next = new IntDF();
      c_step(cur as unknown as DF, 0, next as unknown as DF);
      cur = next;
    }
    const b = nowMs() - t;
    if (cur.v !== n) throw new Error('sequential chain: wrong result');
    if (r > 0) { ind.push(a); ch.push(b); } // first pass: warm-up (JIT)
  }
  return { independent: (median(ind) * 1000) / n, chain: (median(ch) * 1000) / n };
}

/** µs per task with one piscina task per CF, after warm-up. */
async function piscina(threads: number, nInd: number, nChain: number, reps: number): Promise<{ independent: number; chain: number }> {
  const pool = new Piscina<Task, number>({
    filename: new URL('./programs/piscina/worker.js', import.meta.url).href,
    minThreads: threads, maxThreads: threads, idleTimeout: 600_000,
  });
  try {
    await Promise.all(Array.from({ length: 200 * threads }, (_, i) => pool.run({ kind: 'work', i, us: 0 })));
    const ind: number[] = [];
    const ch: number[] = [];
    for (let r = 0; r < reps; r++) {
      let t = nowMs();
      await Promise.all(Array.from({ length: nInd }, (_, i) => pool.run({ kind: 'work', i, us: 0 })));
      ind.push(nowMs() - t);
      t = nowMs();
      let v = 0;
      for (let i = 0; i < nChain; i++) v = await pool.run({ kind: 'step', i: v, us: 0 });
      ch.push(nowMs() - t);
      if (v !== nChain) throw new Error('piscina chain: wrong result');
    }
    return { independent: (median(ind) * 1000) / nInd, chain: (median(ch) * 1000) / nChain };
  } finally {
    await pool.destroy();
  }
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const q = ctx.quick;
  const n = q ? 50_000 : 200_000;
  const nPiscInd = q ? 10_000 : 100_000;
  const nPiscChain = q ? 3_000 : 20_000;
  const [mmN, mmNb] = q ? [640, 8] : [800, 10];
  const reps = ctx.reps;
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const targets: Target[] = [];
  const notes: string[] = [`N = ${n} CFs; piscina: ${nPiscInd} independent / ${nPiscChain} chained tasks; matmul ${mmN}×${mmN} in ${mmNb}×${mmNb} blocks of ${mmN / mmNb}; median of ${reps}`];

  const ind = await load(prog('independent/independent.fa'));
  const chain = await load(prog('chain/chain.fa'));
  const mm = await load(prog('matmul/matmul_bench.fa'));

  // (b) lower bound: a sequential loop
  let seq = { independent: NaN, chain: NaN };
  await section(ctx, notes, 'sequential loop', async () => {
    seq = seqLoop(n, reps);
    f['independent.seqLoop.usPerCf'] = sig(seq.independent);
    f['chain.seqLoop.usPerCf'] = sig(seq.chain);
    units['independent.seqLoop.usPerCf'] = units['chain.seqLoop.usPerCf'] = 'µs';
  });

  for (const T of THREADS) {
    // (a) LuNA
    let usInd = NaN, usCh = NaN;
    await section(ctx, notes, `luna ${T} thread(s)`, async () => {
      ctx.log(`runtime: ${T} thread(s): independent and chain, N = ${n}`);
      const m = await interleaved(reps, {
        indTiny: () => runInProc(ind, [1, 0], { threads: T }),
        indBig: () => runInProc(ind, [n, 0], { threads: T }),
        chTiny: () => runInProc(chain, [1, 0], { threads: T }),
        chBig: () => runInProc(chain, [n, 0], { threads: T }),
      });
      usInd = ((m.indBig - m.indTiny) * 1000) / n;
      usCh = ((m.chBig - m.chTiny) * 1000) / n;
      f[`independent.t${T}.startupMs`] = sig(m.indTiny);
      f[`independent.t${T}.usPerCf`] = sig(usInd);
      f[`chain.t${T}.startupMs`] = sig(m.chTiny);
      f[`chain.t${T}.usPerCf`] = sig(usCh);
    });
    // (b) piscina with as many threads
    await section(ctx, notes, `piscina ${T} thread(s)`, async () => {
      ctx.log(`runtime: ${T} thread(s): piscina baseline`);
      const p = await piscina(T, nPiscInd, nPiscChain, reps);
      f[`independent.piscina.t${T}.usPerTask`] = sig(p.independent);
      f[`chain.piscina.t${T}.usPerTask`] = sig(p.chain);
      f[`independent.t${T}.xPiscinaThroughput`] = sig(p.independent / usInd);
      f[`chain.t${T}.xPiscinaThroughput`] = sig(p.chain / usCh);
    });
    f[`independent.t${T}.xSeqLoopCost`] = sig(usInd / seq.independent);
    f[`chain.t${T}.xSeqLoopCost`] = sig(usCh / seq.chain);
    for (const k of [`independent.t${T}.usPerCf`, `chain.t${T}.usPerCf`, `independent.piscina.t${T}.usPerTask`, `chain.piscina.t${T}.usPerTask`]) units[k] = 'µs';
    units[`independent.t${T}.startupMs`] = units[`chain.t${T}.startupMs`] = 'ms';
    for (const k of [`independent.t${T}.xPiscinaThroughput`, `chain.t${T}.xPiscinaThroughput`, `independent.t${T}.xSeqLoopCost`, `chain.t${T}.xSeqLoopCost`]) units[k] = '×';
    targets.push(
      { key: `independent.t${T}.usPerCf`, op: '<=', value: 2, label: 'independent CF amortized' },
      { key: `chain.t${T}.usPerCf`, op: '<=', value: 5, label: 'chained CF' },
      { key: `independent.t${T}.xPiscinaThroughput`, op: '>=', value: 5, label: 'throughput vs piscina' },
      { key: `chain.t${T}.xPiscinaThroughput`, op: '>=', value: 5, label: 'throughput vs piscina' },
    );
  }

  // (c) matmul speedup
  await section(ctx, notes, 'matmul', async () => {
    ctx.log(`runtime: matmul ${mmN}/${mmNb} with 1 and 2 threads`);
    const mmt = await interleaved(reps, {
      t1: () => runInProc(mm, [mmN, mmNb], { threads: 1 }),
      t2: () => runInProc(mm, [mmN, mmNb], { threads: 2 }),
    });
    f['matmul.t1.ms'] = sig(mmt.t1);
    f['matmul.t2.ms'] = sig(mmt.t2);
    f['matmul.speedup2v1'] = sig(mmt.t1 / mmt.t2);
    f['matmul.t1.usPerProduct'] = sig((mmt.t1 * 1000) / mmNb ** 3);
  });
  units['matmul.t1.ms'] = units['matmul.t2.ms'] = 'ms';
  units['matmul.speedup2v1'] = '×';
  units['matmul.t1.usPerProduct'] = 'µs';
  notes.push('matmul.t1.usPerProduct = whole 1-thread run / nb³ block products (an upper bound of one product CF)');
  targets.push({ key: 'matmul.speedup2v1', op: '>=', value: 1.8, label: 'matmul speedup 2 threads vs 1' });
  for (const k of Object.keys(f)) if (!Number.isFinite(f[k])) delete f[k];

  return { status: 'ok', figures: f, units, targets, notes };
}
