// Recommendations in words (interpretFindings of the SLOW analysis), each linked to the section
// that shows the evidence it cites.
import { esc, sideBySide, type Section } from '../section.js';

/** Which section shows a report field (a finding's evidence path). */
export function sectionOf(path: string): string {
  if (/^(blame\.starvation)/.test(path)) return 'blame';
  if (/^(blame\.latency)/.test(path)) return 'blame';
  if (/^(blame\.waiting)/.test(path)) return 'blame';
  if (/^criticalPath/.test(path)) return 'critical';
  if (/^series/.test(path)) return 'slow';
  if (/^perCode|^perLabel/.test(path)) return 'histograms';
  if (/^(run|launcher|placement|machines|warnings|coverage|tWall)\b/.test(path)) return 'summary';
  return 'slow';
}

const TITLES: Record<string, string> = { summary: 'run', slow: 'SLOW', critical: 'critical path', blame: 'blame', histograms: 'durations', timeline: 'timeline' };

export const advice: Section = {
  id: 'advice',
  title: 'Recommendations',
  build(ctx) {
    return {
      html: sideBySide(ctx, (r) => `<ol class="advice">${r.findings.map((f) => {
        const targets = [...new Set(f.evidence.map(sectionOf))];
        if (f.evidence.some((e) => /^(perThread|placement)/.test(e))) targets.push('timeline');
        const links = targets.map((t) => `<a href="#${t}" data-evidence="${esc(f.evidence.join(' '))}">${TITLES[t]}</a>`).join(', ');
        return `<li data-kind="${esc(f.kind)}"><span class="f">${f.factor ?? ''}</span>${esc(f.text)} <span class="mut">(see ${links})</span></li>`;
      }).join('')}</ol>`),
    };
  },
};
