// The results tree as text, the way Cube shows it: pattern → call site → rank (or lane / node),
// wasted time and its share, worst first; patterns under the noise threshold are listed apart.
import { dur } from '../slow/fmt.js';
import { PATTERNS } from './catalog.js';
import type { PatternReport } from './analyze.js';

const SITES_SHOWN = 8;
const LOCS_SHOWN = 6;

export function formatPatterns(r: PatternReport): string {
  const L: string[] = [];
  const who = r.ranks > 0 ? `${r.ranks} rank(s)` : `${r.nodes} node(s) × ${r.threads} worker thread(s)`;
  L.push(`Patterns of inefficient behaviour in ${r.program || 'the run'}: ${who}, T_wall ${dur(r.tWall)}${r.ranks > 0 ? `, ${r.spmd.collectives} collective(s)` : ''}${r.cfs > 0 ? `, ${r.cfs} CF(s)` : ''}`);
  const found = r.patterns.filter((p) => p.found), noise = r.patterns.filter((p) => !p.found);
  if (!found.length) L.push('No pattern above the noise threshold.');
  else {
    L.push('');
    L.push(`${'wasted'.padStart(12)} ${'share'.padStart(6)}  pattern / call site / location`);
    for (const p of found) {
      L.push(`${dur(p.wasted).padStart(12)} ${pc(p.share).padStart(6)}  ${p.title} (${p.count}×)`);
      for (const s of p.sites.slice(0, SITES_SHOWN)) {
        L.push(`${dur(s.wasted).padStart(12)} ${''.padStart(6)}    ${s.site}`);
        for (const l of s.locations.slice(0, LOCS_SHOWN)) L.push(`${dur(l.wasted).padStart(12)} ${''.padStart(6)}      ${l.label}${l.count > 1 ? ` (${l.count}×)` : ''}`);
        if (s.locations.length > LOCS_SHOWN) L.push(`${''.padStart(20)}      … ${s.locations.length - LOCS_SHOWN} more`);
      }
      if (p.sites.length > SITES_SHOWN) L.push(`${''.padStart(20)}    … ${p.sites.length - SITES_SHOWN} more call sites`);
    }
    L.push('');
    L.push('What to change:');
    for (const p of found) L.push(`  - ${p.title}: ${PATTERNS.find((d) => d.id === p.id)!.advice}`);
  }
  if (noise.length) L.push('', `Below the noise threshold (${dur(r.noise.perInstanceNs)} per occurrence and ${pc(r.noise.share)} of the time): ${noise.map((p) => `${p.title} ${dur(p.wasted)}`).join(', ')}`);
  if (r.comparison?.length) {
    L.push('', 'Seed 001 against Scalasca on the same collectives:');
    for (const c of r.comparison) L.push(`  ${c.pattern.padEnd(20)} ${dur(c.seedNs).padStart(12)}   ${c.scalasca.padEnd(20)} ${dur(c.scalascaNs).padStart(12)}   (${c.instances} instance(s))`);
  }
  return L.join('\n');
}

const pc = (x: number): string => `${(100 * x).toFixed(x < 0.001 ? 2 : 1)}%`;
