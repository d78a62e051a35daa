// Applying a distribution (`luna run --distribution FILE`, made by `luna balance`): the CFs the
// file names run on its nodes, in preference to their locators and to migration, wherever the
// placement question is asked (examining a CF, a spread loop choosing what to spawn); the DFs it
// names live on its nodes; a placed stealable CF is not stolen away. Everything else is the
// wrapped policy's. It counts the fragments it placed (see stats).
import type { CallSite } from '../../program/compile.js';
import type { Distribution } from './distribution-file.js';
import { ForwardingPolicy } from './forward.js';
import type { FragmentView, ProfileSample, SchedulingPolicy } from './types.js';

export interface DistributionStats {
  /** atomic CFs that ran on this node */
  ran: number;
  /** of them, CFs the file named (placed by it) */
  placed: number;
}

export class DistributionPolicy extends ForwardingPolicy {
  override readonly name: string;
  private readonly cfs: Map<string, number>;
  private readonly dfs: Map<string, number>;
  readonly stats: DistributionStats = { ran: 0, placed: 0 };

  constructor(d: Distribution, inner: SchedulingPolicy) {
    const dfs = new Map(Object.entries(d.dfs));
    super(inner, { places: true, ownsDfs: dfs.size > 0, guardsSteals: true, profiles: true });
    this.cfs = new Map(Object.entries(d.cfs));
    this.dfs = dfs;
    this.name = `distribution + ${inner.name}`;
  }

  /** Entries of the file: CFs, DFs. */
  get size(): { cfs: number; dfs: number } {
    return { cfs: this.cfs.size, dfs: this.dfs.size };
  }

  override place(cf: FragmentView): number | undefined {
    return this.named(cf) ?? this.inner.place(cf);
  }

  /**
   * The file's node for an atomic CF. Not for a CF that receives pushed values (`wait`): its
   * pushers address it by its label's owner, so it stays where that is.
   */
  private named(cf: FragmentView): number | undefined {
    const site = cf.site;
    if (site.kind !== 'call' || (site as CallSite).waits.length > 0) return undefined;
    return this.cfs.get(cf.gid);
  }

  override dfOwner(key: string, owner: number): number {
    return this.dfs.get(key) ?? this.inner.dfOwner(key, owner);
  }

  override permitSteal(cf: FragmentView): boolean {
    return this.named(cf) === undefined && this.inner.permitSteal(cf);
  }

  override profile(s: ProfileSample): void {
    this.stats.ran++;
    if (this.named(s.cf) !== undefined) this.stats.placed++;
    this.inner.profile(s);
  }
}
