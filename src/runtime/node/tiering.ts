// When a node raises V8's tiering budget (core/tiering.ts): the policy decides from the program's
// `heavy` hint and the mean time of the node's first measured CFs; this keeps the count until it
// has, and then costs nothing. A program that marks a CF heavy has the budget raised as it loads
// (cli/run.ts), before this node exists.
import { canRelaxTiering, relaxTiering, tieringRelaxed } from '../../core/tiering.js';
import type { SchedulingPolicy } from '../policy/types.js';

export class TieringWatch {
  /** still counting: the policy has not decided (never open where there is nothing to raise) */
  open: boolean;
  /** the CFs measured when this node raised the budget (0: before its first, by the hint, or raised as the program loaded); -1: it did not */
  relaxedAt = -1;
  private n = 0;
  private sumNs = 0;

  /** `relax`, `can`, `already`: the mechanism (core/tiering.ts), replaced in tests */
  constructor(private readonly policy: Pick<SchedulingPolicy, 'relaxTiering'>, private readonly heavy: boolean,
    private readonly relax: () => boolean = relaxTiering, can = canRelaxTiering(), already = tieringRelaxed()) {
    if (already) this.relaxedAt = 0;
    this.open = can;
    if (this.open) this.decide();
  }

  /** A CF of this node took `ns`. */
  measured(ns: number): void {
    this.n++;
    this.sumNs += ns;
    this.decide();
  }

  private decide(): void {
    const d = this.policy.relaxTiering ? this.policy.relaxTiering(this.heavy, this.n, this.n > 0 ? this.sumNs / this.n : 0) : false;
    if (d === undefined) return;
    this.open = false;
    // another node of this process may have given it back already: the first says when
    if (d && this.relax()) this.relaxedAt = this.n;
  }
}
