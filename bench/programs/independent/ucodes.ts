// Ucodes of bench/programs/independent/*.fa (also called directly by the baselines).
import { spin } from '../../../examples/kernels.js';

export function c_work(_i: number, us: number): void {
  spin(us);
}
