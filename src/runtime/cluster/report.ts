// Human messages for run-time faults and hangs. A hang report is one list, merged from every
// participant of every node, ordered by source position; a fault names the CF (label, indices,
// what it runs, global id, source position) and the node.
import { describeSite } from '../node/fault.js';
import type { Cf } from '../node/fragment.js';
import type { NodeRuntime, RunFault } from '../node/runtime.js';
import type { Wait } from './layer.js';

export { where } from '../node/fault.js';

export function describeCf(cf: Cf, label: string): string {
  return describeSite(cf.site, label, cf.gid);
}

/** The waits of one participant of one node. */
export interface HangGroup { participant: string; node: number; waits: Wait[] }

/** Most waits a report lists (the rest are counted). */
const MAX_LISTED = 50;

/**
 * The report of a hang: what waits, summed up by layer (`summary`), then each wait ordered by
 * source position (those without one last) and node.
 */
export function formatHang(groups: readonly HangGroup[], summary: (participant: string, n: number) => string): string {
  const counts = new Map<string, number>();
  const items: (Wait & { node: number })[] = [];
  for (const g of groups) {
    counts.set(g.participant, (counts.get(g.participant) ?? 0) + g.waits.length);
    for (const w of g.waits) items.push({ ...w, node: g.node });
  }
  items.sort((a, b) => {
    const o = a.origin, p = b.origin;
    if (!o || !p) return (o ? 0 : 1) - (p ? 0 : 1) || a.node - b.node;
    return o.file.localeCompare(p.file) || o.line - p.line || o.col - p.col || a.node - b.node;
  });
  const lines = items.slice(0, MAX_LISTED).map((i) => `  ${i.text}`);
  if (items.length > MAX_LISTED) lines.push(`  … and ${items.length - MAX_LISTED} more`);
  const what = [...counts].map(([p, n]) => summary(p, n)).join(' and ');
  return `the program hangs: nothing can run while ${what || 'work is left that names nothing it waits for'}\n${lines.join('\n')}`;
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

/** Every CF of this node that waits, and for which DFs. */
export function cfWaits(rt: NodeRuntime): Wait[] {
  return rt.waitingReport().map((w) => ({
    origin: w.cf.site.origin,
    text: `${describeCf(w.cf, w.label)}${rt.size > 1 ? ` on node ${rt.self}` : ''} waits for ${w.waits.length ? w.waits.join(', ') : '(nothing it can name)'}`,
  }));
}
