// Blame: which producers the starvation waited for, which DF transfers the latency waited for,
// and which shared resources fragments or ranks waited for (the SLOW analysis' blame lists,
// shown as the program names fragments and DFs).
import { dur, share } from '../../analysis/slow/fmt.js';
import type { Finding, SlowReport } from '../../analysis/slow/index.js';
import { esc, sideBySide, type Section } from '../section.js';
import { culpritTable } from './critical.js';

/** What the producers did while the S charged to them passed, in the analysis' order and words. */
const STATES = [
  ['notReady', 'not ready (its own inputs missing: the graph)', '#d9534f'],
  ['queued', 'ready, not started (in another lane\'s batch or queue: scheduling)', '#f0ad4e'],
  ['running', 'running', '#3c9d5d'],
  ['unknown', 'not known (no producer or readiness recorded)', '#9aa5b1'],
] as const;

/**
 * The S charged to producers split by the producer's state: a stacked bar and a table (time and
 * share of the charged S), and the finding that reads it when "ready, not started" dominates.
 */
export function producerStates(s: SlowReport, findings: readonly Finding[]): string {
  const ps = s.blame.starvation.byProducerState, total = s.blame.starvation.total;
  if (!ps || !(total > 0)) return '';
  const of = (ns: number): number => ns / total;
  const bar = STATES.filter(([k]) => ps[k] > 0).map(([k, name, c]) => `<span data-state="${k}" title="${esc(name)}: ${dur(ps[k])}" style="display:inline-block;height:100%;width:${(100 * of(ps[k])).toFixed(2)}%;background:${c}"></span>`).join('');
  const rows = STATES.map(([k, name, c]) => `<tr data-state="${k}" data-ns="${ps[k]}"><td><span class="sw" style="background:${c}"></span>${esc(name)}</td><td class="n">${dur(ps[k])}</td><td class="n">${share(of(ps[k]))}</td></tr>`).join('');
  const held = findings.find((f) => f.kind === 'held-ready');
  return `<h3 id="blame-producer-state">While the producer was</h3>
<div class="state-bar" style="display:flex;width:100%;max-width:600px;height:14px;border:1px solid var(--line)">${bar}</div>
<table class="producer-state"><thead><tr><th>the producer was</th><th class="n">time</th><th class="n">of the S charged to producers</th></tr></thead><tbody>${rows}</tbody></table>
${held ? `<p class="held-ready">${esc(held.text)}</p>` : ''}`;
}

export const blame: Section = {
  id: 'blame',
  title: 'Blame',
  build(ctx) {
    return {
      html: sideBySide(ctx, (r) => {
        const b = r.slow.blame;
        const pairs = b.latency.byNodePair.length === 0 ? '<p class="mut">none</p>'
          : `<table><thead><tr><th>from → to</th><th class="n">time</th><th class="n">of L</th></tr></thead><tbody>${b.latency.byNodePair.map((p) => `<tr><td>node ${p.from} → node ${p.to}</td><td class="n">${dur(p.ns)}</td><td class="n">${share(p.share)}</td></tr>`).join('')}</tbody></table>`;
        const other = b.starvation.other ?? [];
        // the S no producer ended (idle workers, tails): shown so an idle worker never leaves the table empty
        const unblamed = other.length ? `<h3>Starvation no producer ended</h3>${culpritTable('where', other, 'of S')}` : '';
        return `<h3 id="blame-starvation">Starvation (${dur(b.starvation.total)} charged to producers${other.length ? `, ${dur(other.reduce((a, x) => a + x.ns, 0))} to no producer` : ''})</h3>
${producerStates(r.slow, r.findings)}
<div class="cmp"><div class="col">${culpritTable('producer fragment', b.starvation.byCf, 'of S')}</div><div class="col">${culpritTable('producer code', b.starvation.byCode, 'of S')}${culpritTable('producer label', b.starvation.byLabel, 'of S')}</div></div>${unblamed}
<h3 id="blame-latency">Latency (${dur(b.latency.total)} charged to DF transfers)</h3>
<div class="cmp"><div class="col">${culpritTable('DF', b.latency.byDf, 'of L')}${culpritTable('DF family', b.latency.byDfBase, 'of L')}</div><div class="col">${pairs}${culpritTable('producer label', b.latency.byProducerLabel, 'of L')}</div></div>
${b.waiting.total > 0 ? `<h3 id="blame-waiting">Waiting (${dur(b.waiting.total)} in ${b.waiting.waits} waits for shared resources)</h3>
<div class="cmp"><div class="col">${culpritTable('resource', b.waiting.byResource, 'of waits')}${culpritTable('kind', b.waiting.byKind, 'of waits')}</div><div class="col">${culpritTable('who waited', b.waiting.byWaiter, 'of waits')}</div></div>` : ''}
<h3>Per code fragment (idle time before its fragments, its waits and its work)</h3>
<table><thead><tr><th>code</th><th class="n">fragments</th><th class="n">S</th><th class="n">L</th><th class="n">O</th><th class="n">W</th><th class="n">U</th></tr></thead><tbody>${r.slow.perCode.slice(0, 20).map((c) => `<tr><td>${esc(c.name)}</td><td class="n">${c.cfs}</td><td class="n">${dur(c.S)}</td><td class="n">${dur(c.L)}</td><td class="n">${dur(c.O)}</td><td class="n">${dur(c.W)}</td><td class="n">${dur(c.U)}</td></tr>`).join('')}</tbody></table>`;
      }),
    };
  },
};
