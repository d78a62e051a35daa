// Patterns of inefficient behaviour (the pattern engine): the tree pattern → call site → rank
// (or lane / node), worst first, as Cube shows it — each level a <details> the reader opens —
// with what to change for each pattern found, and the ones under the noise threshold named.
import { dur } from '../../analysis/slow/fmt.js';
import { PATTERNS } from '../../analysis/patterns/catalog.js';
import type { PatternNode } from '../../analysis/patterns/results.js';
import { esc, sideBySide, type Section } from '../section.js';

const SITES = 12, LOCS = 16;

function node(p: PatternNode): string {
  const d = PATTERNS.find((x) => x.id === p.id)!;
  const sites = p.sites.slice(0, SITES).map((s) => `<details><summary><span class="n">${dur(s.wasted)}</span> ${esc(s.site)}</summary><table><tbody>${s.locations.slice(0, LOCS).map((l) => `<tr><td>${esc(l.label)}</td><td class="n">${dur(l.wasted)}</td><td class="n">${l.count}×</td></tr>`).join('')}${s.locations.length > LOCS ? `<tr><td class="mut">… ${s.locations.length - LOCS} more</td><td></td><td></td></tr>` : ''}</tbody></table></details>`).join('');
  const more = p.sites.length > SITES ? `<p class="mut">… ${p.sites.length - SITES} more call sites</p>` : '';
  return `<details class="pattern" data-pattern="${p.id}"><summary><b>${esc(p.title)}</b> — ${dur(p.wasted)} (${(100 * p.share).toFixed(1)}% of the time, ${p.count}×)</summary><p class="mut">${esc(d.formula)}. ${esc(d.advice)}.</p>${sites}${more}</details>`;
}

export const patterns: Section = {
  id: 'patterns',
  title: 'Patterns',
  build(ctx) {
    return {
      html: sideBySide(ctx, (r) => {
        const pr = r.patterns;
        const found = pr.patterns.filter((p) => p.found), low = pr.patterns.filter((p) => !p.found);
        const head = pr.ranks > 0 ? `<p>${pr.ranks} SPMD rank(s), ${pr.spmd.collectives} collective(s) analysed.</p>` : '';
        const body = found.length ? found.map(node).join('') : '<p>No pattern of inefficient behaviour above the noise threshold.</p>';
        const noise = low.length ? `<p class="mut">Below the noise threshold: ${low.map((p) => `${esc(p.title)} ${dur(p.wasted)}`).join(', ')}.</p>` : '';
        return `${head}${body}${noise}`;
      }),
    };
  },
};
