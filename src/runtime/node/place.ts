// The placement question, one for every place that asks it: examining a CF (examine.ts) and a
// spread loop deciding, before a CF exists, whether to spawn it here (spread.ts). The policy
// answers first (a distribution, a recorded schedule), then the CF's locator, else node 0.
import { childGid } from '../../core/cfid.js';
import type { Site } from '../../program/compile.js';
import type { Frame } from '../../program/expr.js';
import type { FragmentSlot, FragmentView, SchedulingPolicy } from '../policy/types.js';

/** Node `cf` runs on; its locator reads DFs through `frame` (which may then be `missing`). */
export function placeOf(policy: SchedulingPolicy, cf: FragmentView, frame: Frame): number {
  if (policy.caps.places) {
    const at = policy.place(cf);
    if (at !== undefined) return at;
  }
  const locator = cf.site.locator;
  return locator ? locator(frame) : 0;
}

/**
 * A fragment before it exists: site `site` of the block with id prefix `prefix` in iteration
 * `iter`. Reused for every question (no garbage per iteration); the global id is built only if
 * the policy reads it, and nothing is kept.
 */
export class UnbornView implements FragmentView {
  readonly id = -1;
  site!: Site;
  private prefix = '';
  private iter = -1;
  private gidOwn: string | null = null;

  set(site: Site, prefix: string, iter: number): this {
    this.site = site;
    this.prefix = prefix;
    this.iter = iter;
    this.gidOwn = null;
    return this;
  }

  get gid(): string {
    return (this.gidOwn ??= childGid(this.prefix, this.iter, this.site.spawnNo));
  }

  memo<T>(_slot: FragmentSlot<T>, make: (cf: FragmentView) => T): T {
    return make(this);
  }
}
