// Piscina worker of the runtime baselines (bench/runtime.ts): one task = one CF, calling the
// same ucode functions as the LuNA programs with minimal DF stand-ins.
import type { DF } from '../../../src/ucode/df.js';
import { c_step } from '../chain/ucodes.js';
import { c_work } from '../independent/ucodes.js';

class IntDF {
  v = 0;
  getInt(): number { return this.v; }
  setInt(n: number): void { this.v = n; }
}

export interface Task { kind: 'work' | 'step'; i: number; us: number }

export default function task(t: Task): number {
  if (t.kind === 'work') {
    c_work(t.i, t.us);
    return 0;
  }
  const prev = new IntDF();
  prev.v = t.i;
  const next = new IntDF();
  c_step(prev as unknown as DF, t.us, next as unknown as DF);
  return next.v;
}
