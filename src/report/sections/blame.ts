// Blame: which producers the starvation waited for, which DF transfers the latency waited for,
// and which shared resources fragments or ranks waited for (the SLOW analysis' blame lists,
// shown as the program names fragments and DFs).
import { dur, share } from '../../analysis/slow/fmt.js';
import { esc, sideBySide, type Section } from '../section.js';
import { culpritTable } from './critical.js';

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
