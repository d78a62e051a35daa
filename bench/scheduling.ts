// Scheduling suite: the policies behind the runtime's policy seam, each against the default in
// the same run (fresh `luna run --timing` processes, interleaved, medians).
//  - priorities: bench/programs/critical (a chain of k links among m independent fillers, every
//    fragment busy `us` µs, 2 threads): makespan in FIFO order, with critical-path priorities
//    from a trace of an earlier run (--priorities-from), and the lower bound max(k, (k+m)/T)·us;
//  - trace playback: system cost per fragment (CPU time of the system thread, less its time in
//    ucodes, ÷ atomic fragments)
//    replaying a recorded schedule (--replay) against the default policy, on iterative programs
//    (heat1d, matmul), 2 threads;
//  - references: the system thread's CPU a CF and a DF reference (bench/programs/refs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleavedTimed, prog, ROOT, runTimed, section, sig, type Ctx, type SuiteOutput, type Target, type Timed } from './common.js';

const T = 2;

/**
 * The system thread's CPU of bench/programs/refs at R = 1 and R = 32 (`sys1`, `sys32`, ms) split
 * into µs a CF and µs a DF reference: W seeds of one output a reference read (R of them), then NT
 * steps of W CFs of R inputs and R outputs.
 */
export function referenceCosts(NT: number, W: number, sys1: number, sys32: number): { perCf: number; perRef: number } {
  const cfs = (R: number): number => W * R + NT * W, refs = (R: number): number => W * R + NT * W * 2 * R;
  const perRef = (sys32 * cfs(1) - sys1 * cfs(32)) / (refs(32) * cfs(1) - refs(1) * cfs(32));
  return { perCf: ((sys1 - perRef * refs(1)) / cfs(1)) * 1000, perRef: perRef * 1000 };
}

/** Bookkeeping per atomic fragment: the system thread's CPU time less the ucodes it ran itself. */
const sysUsPerCf = (t: Timed): number => (Math.max(0, t.systemCpuMs - t.inlineUcodeMs) * 1000) / (t.inline + t.sent);

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const q = ctx.quick;
  const reps = q ? 2 : Math.max(ctx.reps, 5);
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const targets: Target[] = [];
  const notes: string[] = [`${T} threads, fresh process per run, median of ${reps} interleaved`];
  const dir = mkdtempSync(join(tmpdir(), 'luna-sched-'));
  try {
    await section(ctx, notes, 'priorities', async () => {
      const [k, m, us] = q ? [100, 100, 1000] : [200, 200, 1000];
      const critical = prog('critical/critical.fa');
      const trace = join(dir, 'critical.trace');
      ctx.log(`scheduling: priorities, chain ${k} among ${m} fillers of ${us} µs`);
      await runTimed(['--threads', T, '--trace', trace, critical, k, m, us]);
      const r = await interleavedTimed(reps, {
        fifo: ['--threads', T, critical, k, m, us],
        prio: ['--threads', T, '--priorities-from', trace, critical, k, m, us],
      });
      const bound = (Math.max(k, (k + m) / T) * us) / 1000;
      f['priorities.fifoMs'] = sig(r.fifo.programMs);
      f['priorities.priorityMs'] = sig(r.prio.programMs);
      f['priorities.boundMs'] = sig(bound);
      f['priorities.xFifo'] = sig(r.prio.programMs / r.fifo.programMs);
      f['priorities.xBound'] = sig(r.prio.programMs / bound);
      for (const key of ['priorities.fifoMs', 'priorities.priorityMs', 'priorities.boundMs']) units[key] = 'ms';
      units['priorities.xFifo'] = units['priorities.xBound'] = '×';
      targets.push({ key: 'priorities.xFifo', op: '<=', value: 0.9, label: 'critical-path priorities beat FIFO' });
      notes.push(`priorities: FIFO runs the fillers first (≈ (m/T + k)·us = ${((m / T + k) * us) / 1000} ms); the bound is max(k, (k+m)/T)·us; spans include the workers' start`);
    });

    await section(ctx, notes, 'references', async () => {
      // the same CFs and work, with 1 or 32 raw DFs in and out of each: the system thread's CPU
      // split into a part a CF and a part a DF reference (two runs, two unknowns)
      const [NT, W, us, bytes] = q ? [20, 8, 1500, 8192] : [40, 8, 1500, 8192];
      const refs = prog('refs/refs.fa');
      ctx.log(`scheduling: references, ${NT} steps of ${W} CFs of ${us} µs, 1 or 32 DFs of ${bytes} bytes in and out`);
      const r = await interleavedTimed(reps, {
        one: ['--threads', T, refs, NT, W, 1, us, bytes],
        many: ['--threads', T, refs, NT, W, 32, us, bytes],
      });
      const split = referenceCosts(NT, W, r.one.systemCpuMs, r.many.systemCpuMs);
      f['references.sysUsPerRef'] = sig(split.perRef);
      f['references.sysUsPerCf'] = sig(split.perCf);
      f['references.oneMs'] = sig(r.one.programMs);
      f['references.manyMs'] = sig(r.many.programMs);
      f['references.xOne'] = sig(r.many.programMs / r.one.programMs);
      units['references.sysUsPerRef'] = units['references.sysUsPerCf'] = 'µs';
      units['references.oneMs'] = units['references.manyMs'] = 'ms';
      units['references.xOne'] = '×';
      notes.push(`references: bench/programs/refs, ${NT} steps of ${W} CFs busy ${us} µs, each reading and writing 1 or 32 DFs of ${bytes} bytes; the system thread's CPU (${sig(r.one.systemCpuMs)} and ${sig(r.many.systemCpuMs)} ms, the median runs) = sysUsPerCf a CF + sysUsPerRef a DF reference (an input or an output); xOne: the program's time with 32 over with 1 (docs/pic.md, "Packs by group")`);
    });

    const programs: [name: string, argv: (string | number)[]][] = [
      ['heat1d', [join(ROOT, 'examples', 'heat1d', 'heat1d.fa'), 2048, 16, 0.0001, q ? 100 : 300]],
      ['matmul', [join(ROOT, 'examples', 'matmul', 'matmul.fa'), 256, 8]],
    ];
    for (const [name, argv] of programs) {
      await section(ctx, notes, `replay ${name}`, async () => {
        const rec = join(dir, `${name}.schedule`);
        ctx.log(`scheduling: replay ${name}`);
        await runTimed(['--threads', T, '--record', rec, ...argv]);
        const r = await interleavedTimed(reps, {
          plain: ['--threads', T, ...argv],
          replay: ['--threads', T, '--replay', rec, ...argv],
        });
        f[`replay.${name}.plainSysUsPerCf`] = sig(sysUsPerCf(r.plain));
        f[`replay.${name}.replaySysUsPerCf`] = sig(sysUsPerCf(r.replay));
        f[`replay.${name}.xPlain`] = sig(sysUsPerCf(r.replay) / sysUsPerCf(r.plain));
        f[`replay.${name}.plainMs`] = sig(r.plain.programMs);
        f[`replay.${name}.replayMs`] = sig(r.replay.programMs);
        units[`replay.${name}.plainSysUsPerCf`] = units[`replay.${name}.replaySysUsPerCf`] = 'µs';
        units[`replay.${name}.xPlain`] = '×';
        units[`replay.${name}.plainMs`] = units[`replay.${name}.replayMs`] = 'ms';
        targets.push({ key: `replay.${name}.xPlain`, op: '<=', value: 1, label: `replay lowers the system cost per fragment (${name})` });
      });
    }
    notes.push('system cost per fragment: CPU time of the system thread over the program, less the time it spent in ucodes it ran itself, ÷ atomic fragments');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { status: 'ok', figures: f, units, targets, notes };
}
