// When a node's fragments are coarse, and what follows: V8's tiering budget raised
// (core/tiering.ts) and whatever else the node does for coarse fragments (`onCoarse`: its lanes
// lowered below the system thread). The policy decides from the program's `heavy` hint and the
// mean time of the node's first measured CFs; this keeps the count until it has, and then costs
// nothing. A program that marks a CF heavy has the budget raised as it loads (cli/run.ts), before
// this node exists.
import { canRelaxTiering, relaxTiering, tieringRelaxed } from '../../core/tiering.js';
import type { SchedulingPolicy } from '../policy/types.js';

export class TieringWatch {
  /** still counting: the policy has not decided (never open where there is nothing to raise and nothing to tell) */
  open: boolean;
  /** the CFs measured when this node raised the budget (0: before its first, by the hint, or raised as the program loaded); -1: it did not */
  relaxedAt = -1;
  private n = 0;
  private sumNs = 0;

  private readonly relax: () => boolean;
  private readonly can: boolean;
  private readonly onCoarse?: () => void;

  /**
   * `m.relax`, `m.can`, `m.already`: the mechanism (core/tiering.ts), replaced in tests;
   * `m.onCoarse`: called once if the policy finds the fragments coarse, whether or not there was a
   * budget to raise
   */
  constructor(private readonly policy: Pick<SchedulingPolicy, 'relaxTiering'>, private readonly heavy: boolean,
    m: { relax?: () => boolean; can?: boolean; already?: boolean; onCoarse?: () => void } = {}) {
    this.relax = m.relax ?? relaxTiering;
    this.can = m.can ?? canRelaxTiering();
    this.onCoarse = m.onCoarse;
    const already = m.already ?? tieringRelaxed();
    if (already) this.relaxedAt = 0;
    this.open = this.can || this.onCoarse !== undefined;
    if (this.open) this.decide();
  }

  /** A CF of this node took `ns`. */
  measured(ns: number): void {
    if (!this.open) return;
    this.n++;
    this.sumNs += ns;
    this.decide();
  }

  private decide(): void {
    const d = this.policy.relaxTiering ? this.policy.relaxTiering(this.heavy, this.n, this.n > 0 ? this.sumNs / this.n : 0) : false;
    if (d === undefined) return;
    this.open = false;
    if (!d) return;
    // another node of this process may have given it back already: the first says when
    if (this.can && this.relax()) this.relaxedAt = this.n;
    this.onCoarse?.();
  }
}
