// What ran and how it ended: program, arguments, nodes × threads, the machines' cores, wall time,
// the exit status recorded in the trace manifest, and what the trace reader warned about. A run
// that did not complete says so first: every figure of the page covers only its part before that.
import { dur } from '../../analysis/slow/fmt.js';
import { runEndLine } from '../../analysis/slow/interpret.js';
import { esc, sideBySide, type Section } from '../section.js';

export const summary: Section = {
  id: 'summary',
  title: 'Run',
  build(ctx) {
    return {
      html: sideBySide(ctx, (r) => {
        const m = r.manifest, s = r.slow;
        const machines = s.machines.length
          ? s.machines.map((x) => {
            const narrow = x.nodes.filter((_, i) => x.nodeCpus[i]! < x.cpus);
            const bound = narrow.length ? ` <span class="err">(node${narrow.length > 1 ? 's' : ''} ${narrow.join(', ')} bound${s.launcher !== 'unknown' && s.launcher !== 'local' ? ` by ${esc(s.launcher)}` : ''} to ${[...new Set(x.nodes.flatMap((n, i) => (x.nodeCpus[i]! < x.cpus ? [x.nodeCpus[i]] : [])))].join('/')} CPU(s) each)</span>` : '';
            return `${esc(x.host || 'this machine')}: ${x.cores} CPUs${x.cpus > x.cores ? ` of ${x.cpus}` : ''}, nodes ${x.nodes.join(', ')}${x.oversubscription > 1 ? ` <span class="err">(oversubscribed ×${x.oversubscription.toFixed(2)})</span>` : ''}${bound}`;
          }).join('<br>')
          : m.cores ? `${m.cores} CPUs (node 0's machine)` : '<span class="mut">not recorded</span>';
        const rows: [string, string][] = [
          ['Program', `<code>${esc(m.program)}</code>`],
          ['Arguments', m.args.length ? `<code>${esc(m.args.join(' '))}</code>` : '<span class="mut">none</span>'],
          ['Nodes × worker threads', `${s.nodes} × ${s.threads} = ${s.nodes * s.threads}`],
          ['Physical cores', machines],
          ['Wall time', `<span data-ns="${s.tWall}" id="${'wall'}">${dur(s.tWall)}</span>`],
          ['Exit status', `<span class="status-${esc(r.status)}" data-status="${esc(r.status)}">${esc(r.status)}</span>${m.message ? `<pre class="msg">${esc(m.message)}</pre>` : ''}${r.status === 'running' || r.status === 'unknown' ? ' <span class="mut">(the run never recorded its end: killed, or still running when the trace was read)</span>' : ''}`],
          ['Fragments run', `${s.cfs.toLocaleString('en')} (mean ${dur(s.meanCfNs)} of CPU)`],
          ['DF transfers', `${r.transfers.start.length.toLocaleString('en')}`],
          ['Trace', `<code>${esc(r.dir)}</code>, ${s.events.toLocaleString('en')} events, ${(r.traceBytes / 1048576).toFixed(1)} MiB`],
          ['Started', esc(m.startedAt)],
          ...(m.policy ? [['Scheduling policy', esc(m.policy)] as [string, string]] : []),
          ['luna-ts / Node', `${esc(m.versions.lunaTs)} / ${esc(m.versions.node)}`],
        ];
        const d = s.damage;
        const damage = d.total > 0
          ? `<div class="err damage" data-damage="${d.total}"><b>Damaged trace:</b> ${d.total} item(s) dropped or corrected (${esc(Object.entries(d.counts).map(([k, n]) => `${k} ${n}`).join(', '))}); every figure below leaves them out.<ul>${d.examples.map((e) => `<li>${esc(e.kind)}: ${esc(e.file ?? '')}${e.offset !== undefined ? ` at byte ${e.offset}` : ''} ${esc(e.detail)}</li>`).join('')}</ul></div>`
          : '';
        const missing = s.missingNodes.length ? `<div class="err" data-missing-nodes="${s.missingNodes.join(',')}"><b>Missing nodes:</b> ${s.missingNodes.join(', ')} left no records (killed?); they are left out of T_total and every share.</div>` : '';
        const endLine = runEndLine(s);
        const ended = endLine ? `<div class="err run-ended" data-run-ended="${esc(r.status)}"><b>${esc(endLine)}</b>${m.message ? `<pre class="msg">${esc(m.message)}</pre>` : ''}</div>` : '';
        const warn = s.warnings.length ? `<h3>Warnings</h3><ul>${s.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>` : '';
        return `${ended}${damage}${missing}<table>${rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join('')}</table>${warn}`;
      }),
    };
  },
};
