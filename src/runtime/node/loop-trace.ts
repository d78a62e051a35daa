// The trace records of a planned loop's steps (loop-run.ts). A planned step has no fragment, so
// none of the records the fragment-by-fragment path writes for a loop step's CF comes by itself;
// this writes the same ones, with the same numbers and meanings, so that the model and the
// analyses read a planned run as they read an unplanned one (docs/trace-format.md, "Planned
// loops"): per step its creation (cfCreated, the step's stand-in id as gid), its DFs named and
// its inputs (cfInput), and when it was ready where the system thread knew it then; per output
// its computation (dfComputed) at the step's end as its worker read it. The worker writes
// cfStart, cfFinish, and cfReady for a step with a forwarded input (as for a fed CF).
// One pass per batch sent and per batch booked; the only allocations a step costs are its id
// string and its DF names' first interning.
import type { CallSite, ForSite } from '../../program/compile.js';
import { argValue } from '../../program/expr.js';
import { childGid } from '../../core/cfid.js';
import { valueSize, type DfValue } from '../../ucode/value.js';
import type { TraceSink } from '../../trace/schema.js';
import type { Task } from '../exec/protocol.js';
import { KeyFrame, type LoopPlan } from './loop-plan.js';
import type { Cf } from './fragment.js';

export class LoopTrace {
  private readonly frame: KeyFrame;
  private readonly varSlot: number;
  private readonly loopId: number;
  private readonly prefix: string;
  /** per site: its label indices' array, written over for each step (the writer copies it) */
  private readonly labels: (number[] | null)[];

  constructor(private readonly run: { readonly loop: Cf; readonly plan: LoopPlan }, private readonly tr: TraceSink, size: number, self: number) {
    const loop = run.loop;
    this.varSlot = (loop.site as ForSite).varSlot;
    this.frame = new KeyFrame(loop.env.slice(), size, self);
    this.loopId = loop.id;
    this.prefix = loop.gid;
    this.labels = run.plan.sites.map((s) => (s.site.labelIdx.length === 0 || s.site.labelReadsDf ? null : new Array<number>(s.site.labelIdx.length)));
  }

  /**
   * Batch `tasks` (step `its[i]` of site `sites[i]`) leaves at `now`: each step is created then,
   * as an unrolled step is when its loop spawns it, and names what it reads. A step with no
   * forwarded input has every input here (read from before the loop, or none): it is ready now,
   * as the system thread records a CF whose inputs all came; the others are made ready by their
   * worker as they start, and the model dates them by their inputs' dfComputed.
   */
  sent(now: number, tasks: readonly Task[], its: Int32Array, sites: Int32Array): void {
    const tr = this.tr, f = this.frame, env = f.env, ps = this.run.plan.sites;
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i]!, t = its[i]!, s = sites[i]!, site: CallSite = ps[s]!.site;
      env[this.varSlot] = t;
      const lab = this.labels[s]!;
      if (lab !== null) for (let k = 0; k < lab.length; k++) lab[k] = argValue(site.labelIdx[k]!, 'int', f, site.pos) as number;
      tr.cfCreated(now, task.cf, this.loopId, site.id, childGid(this.prefix, t, site.spawnNo), lab);
      if (task.fwd === undefined) tr.cfReady(now, task.cf);
      const keys = task.keys, args = site.args;
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k]!;
        if (key === '') continue;
        // outputs are named now too, as the unplanned path names them when their CF is ready
        const df = tr.dfName(key);
        if (args[k]!.kind === 'in') tr.cfInput(task.cf, df);
      }
    }
  }

  /** Output `key` of step `cf`, read only inside the loop (never in the store), was made at `at` (its worker's clock). */
  computed(at: number, key: string, cf: number, v: DfValue): void {
    this.tr.dfComputed(at, this.tr.dfName(key), cf, valueSize(v));
  }
}
