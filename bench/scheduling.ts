// Scheduling suite: the policies behind the runtime's policy seam, each against the default in
// the same run (fresh `luna run --timing` processes, interleaved, medians).
//  - priorities: bench/programs/critical (a chain of k links among m independent fillers, every
//    fragment busy `us` µs, 2 threads): makespan in FIFO order, with critical-path priorities
//    from a trace of an earlier run (--priorities-from), and the lower bound max(k, (k+m)/T)·us;
//  - trace playback: system cost per fragment (CPU time of the system thread, less its time in
//    ucodes, ÷ atomic fragments)
//    replaying a recorded schedule (--replay) against the default policy, on iterative programs
//    (heat1d, matmul), 2 threads.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleavedTimed, prog, ROOT, runTimed, section, sig, type Ctx, type SuiteOutput, type Target, type Timed } from './common.js';

const T = 2;

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
