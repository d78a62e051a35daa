// Assembles the self-contained page: the sections' HTML, one JSON data block, ECharts and the
// client code inlined, so the file opens offline and makes no network request.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, sep } from 'node:path';
import type { RunData } from './collect.js';
import { clientMain, codeColor, tickLabel } from './client.js';
import { fromPlanes } from './planes.js';
import { esc, type ReportCtx, type Section } from './section.js';
import { SECTIONS } from './sections/index.js';

/** ECharts' minified browser bundle, read from the installed package at report time. */
export function echartsSource(): string {
  const path = createRequire(import.meta.url).resolve('echarts/dist/echarts.min.js');
  return readFileSync(path, 'utf8');
}

/** fflate's browser build (the global `fflate`): the page inflates its columns with it, synchronously. */
function fflateSource(): string {
  // the package exports no subpath for it: found beside its resolved entry
  const main = createRequire(import.meta.url).resolve('fflate');
  return readFileSync(join(main.slice(0, main.lastIndexOf(`${sep}fflate${sep}`) + 8), 'umd', 'index.js'), 'utf8');
}

/** JSON that is safe inside a <script> element. */
function scriptJson(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const scriptText = (s: string): string => s.replace(/<\/(script)/gi, '<\\/$1');

const CSS = `
:root{--fg:#1d2430;--mut:#5c6773;--bg:#fff;--line:#e3e7ec;--acc:#2a6fdb}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{position:sticky;top:0;z-index:5;background:#f7f9fb;border-bottom:1px solid var(--line);padding:8px 20px;display:flex;gap:18px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:16px;margin:0}header nav a{margin-right:12px;color:var(--acc);text-decoration:none}
main{padding:8px 20px 60px;max-width:1600px}section{margin:26px 0}h2{font-size:18px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:14px;margin:10px 0 6px}table{border-collapse:collapse;margin:6px 0 12px}th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-weight:600;color:var(--mut)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.cmp{display:flex;gap:24px;flex-wrap:wrap}.cmp>.col{flex:1 1 420px;min-width:0}
.chart{width:100%;min-width:300px}.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:18px}.mut{color:var(--mut)}.err{color:#b00}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:middle}
.advice li{margin:6px 0}.advice .f{font-weight:600;margin-right:6px}
.tl{position:relative;border:1px solid var(--line);margin:6px 0 14px}.tl canvas{display:block;width:100%;cursor:grab}
.tlbar{margin:6px 0}.tlstats{margin:4px 0 14px}
.tip{position:absolute;pointer-events:none;background:#1d2430;color:#fff;padding:4px 7px;border-radius:4px;font-size:12px;white-space:pre;display:none;z-index:3}
.msg{white-space:pre-wrap;font:12px/1.4 ui-monospace,monospace;margin:4px 0}.run-ended{border:1px solid #e3b3b3;background:#fdf3f3;padding:8px 12px;border-radius:4px;margin:6px 0 10px}
.status-completed{color:#3c9d5d;font-weight:600}.status-failed,.status-hung,.status-lost,.status-interrupted{color:#b00;font-weight:600}
`;

export interface PageOptions { title?: string; sections?: readonly Section[]; distribution?: ReportCtx['distribution'] }

/** Page text of one run (or two, compared) and the size of its parts. */
export function buildPage(runs: RunData[], labels: string[], o: PageOptions = {}): string {
  const ctx: ReportCtx = { runs, labels, ...(o.distribution ? { distribution: o.distribution } : {}) };
  const sections = o.sections ?? SECTIONS;
  const built = sections.map((s) => ({ s, b: s.build(ctx) }));
  const data = {
    labels,
    runs: runs.map((r, i) => ({ label: labels[i], dir: r.dir, slow: r.slow, findings: r.findings })),
    sections: Object.fromEntries(built.filter((x) => x.b.data !== undefined).map((x) => [x.s.id, x.b.data])),
  };
  const progs = [...new Set(runs.map((r) => basename(r.manifest.program)))];
  const title = o.title ?? `LuNA run report: ${progs.join(' vs ')}${runs.length > 1 && progs.length === 1 ? ', A vs B' : ''}`;
  const renderers = built.filter((x) => x.s.render).map((x) => `${JSON.stringify(x.s.id)}: (${x.s.render!.toString()})`).join(',\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${CSS}</style></head>
<body><header><h1>${esc(title)}</h1><nav>${built.map(({ s }) => `<a href="#${s.id}">${esc(s.title)}</a>`).join('')}</nav></header>
<main>
${built.map(({ s, b }) => `<section id="${s.id}"><h2>${esc(s.title)}</h2>${b.html}${s.render ? '<div class="client"></div>' : ''}</section>`).join('\n')}
</main>
<script type="application/json" id="luna-data">${scriptJson(data)}</script>
<script>${scriptText(echartsSource())}</script>
<script>${scriptText(fflateSource())}</script>
<script>${scriptText(`(${clientMain.toString()})({\n${renderers}\n}, { codeColor: (${codeColor.toString()}), tickLabel: (${tickLabel.toString()}), fromPlanes: (${fromPlanes.toString()}) }).catch((e) => console.error(String(e && e.stack || e)));`)}</script>
</body></html>
`;
}
