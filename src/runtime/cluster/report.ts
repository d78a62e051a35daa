// Human messages for run-time faults and hangs: the CF's label with its indices, what it runs,
// its global id and source position, and the node.
import type { Origin } from '../../lang/source.js';
import { describeSite } from '../node/fault.js';
import type { Cf } from '../node/fragment.js';
import type { NodeRuntime, RunFault } from '../node/runtime.js';

export { where } from '../node/fault.js';

export function describeCf(cf: Cf, label: string): string {
  return describeSite(cf.site, label, cf.gid);
}

export interface HangItem { node: number; text: string; origin: Origin }

export function formatHang(items: HangItem[]): string {
  items.sort((a, b) => a.origin.file.localeCompare(b.origin.file) || a.origin.line - b.origin.line || a.origin.col - b.origin.col || a.node - b.node);
  const max = 50;
  const lines = items.slice(0, max).map((i) => `  ${i.text}`);
  if (items.length > max) lines.push(`  … and ${items.length - max} more`);
  return `the program hangs: nothing can run while ${items.length} CF(s) wait for data fragments that are never produced\n${lines.join('\n')}`;
}

/** The fault as the user reads it: the cause, then the fragment and the node (node 0 when alone). */
export function faultText(rt: NodeRuntime, f: RunFault): string {
  const lines = [f.message];
  const node = f.node ?? rt.self;
  if (f.cf) lines.push(`  in ${describeCf(f.cf, rt.labelOf(f.cf))} on node ${node}`);
  else if (f.at) lines.push(`  in ${describeSite(f.at.site, f.at.site.label, f.at.gid)} on node ${node}`);
  else if (!f.message.includes(`node ${node}`)) lines.push(`  on node ${node}`);
  return lines.join('\n');
}

export function hangItems(rt: NodeRuntime, node: number): HangItem[] {
  return rt.waitingReport().map((w) => ({
    node,
    origin: w.cf.site.origin,
    text: `${describeCf(w.cf, w.label)}${rt.size > 1 ? ` on node ${node}` : ''} waits for ${w.waits.length ? w.waits.join(', ') : '(nothing it can name)'}`,
  }));
}
