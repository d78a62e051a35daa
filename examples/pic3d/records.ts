// Particle DFs as arrays, for the ucodes of pic3d (fragments.ts, driver.ts).
import type { DF } from '../../src/ucode/df.js';

/** The doubles of a particle DF (an empty DF is an empty bundle). */
export function records(b: DF): Float64Array {
  return b.getSize() === 0 ? new Float64Array(0) : b.getFloat64Array();
}
