// A small SVG chart generator for the SLOW experiments (docs/experiments/*.svg).
//
// Why hand-written: no charting library is installed that renders to SVG offline in Node without
// a browser (and the project takes no new npm dependencies for this), while the charts needed here
// are simple: one panel of 100 % stacked bars (P_S, P_L, P_O, P_W, P_U per run) and one panel of
// lines (T_X in seconds per run), side by side, with categorical x labels.

export interface Series {
  name: string;
  color: string;
  values: number[];
  /** dashed line (line panel only) */
  dashed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  /** one label per run (categorical x axis) */
  categories: string[];
  /** stacked-bar panel: shares in percent (each column should sum to ~100) */
  stacked: { yLabel: string; series: Series[] };
  /** line panel: absolute values */
  lines: { yLabel: string; series: Series[] };
}

export const COLORS: Record<string, string> = {
  S: '#d62728', L: '#9467bd', O: '#ff7f0e', W: '#8c564b', U: '#2ca02c', total: '#444444', work: '#1f77b4',
};

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const f1 = (x: number): string => (Math.round(x * 10) / 10).toString();

/** "Nice" tick step for a range [0, max] with about n ticks. */
function niceStep(max: number, n = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}

function fmtTick(v: number, step: number): string {
  const d = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step)));
  return v.toFixed(d);
}

interface Box { x: number; y: number; w: number; h: number }

function axes(out: string[], b: Box, cats: string[], yMax: number, yStep: number, yLabel: string, xLabel: string, suffix = ''): void {
  out.push(`<g font-size="11" fill="#333">`);
  for (let v = 0; v <= yMax + 1e-9 * yMax; v += yStep) {
    const y = b.y + b.h - (v / yMax) * b.h;
    out.push(`<line x1="${f1(b.x)}" y1="${f1(y)}" x2="${f1(b.x + b.w)}" y2="${f1(y)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${f1(b.x - 6)}" y="${f1(y + 4)}" text-anchor="end">${fmtTick(v, yStep)}${suffix}</text>`);
  }
  out.push(`<line x1="${b.x}" y1="${b.y + b.h}" x2="${b.x + b.w}" y2="${b.y + b.h}" stroke="#333"/>`);
  out.push(`<line x1="${b.x}" y1="${b.y}" x2="${b.x}" y2="${b.y + b.h}" stroke="#333"/>`);
  const slot = b.w / cats.length;
  const rotate = cats.some((c) => c.length * 6.5 > slot);
  cats.forEach((c, i) => {
    const x = b.x + slot * (i + 0.5);
    const y = b.y + b.h + 14;
    out.push(rotate
      ? `<text x="${f1(x)}" y="${f1(y)}" text-anchor="end" transform="rotate(-35 ${f1(x)} ${f1(y)})">${esc(c)}</text>`
      : `<text x="${f1(x)}" y="${f1(y)}" text-anchor="middle">${esc(c)}</text>`);
  });
  out.push(`<text x="${f1(b.x + b.w / 2)}" y="${f1(b.y + b.h + (rotate ? 58 : 32))}" text-anchor="middle" font-size="12">${esc(xLabel)}</text>`);
  out.push(`<text x="${f1(b.x - 44)}" y="${f1(b.y + b.h / 2)}" text-anchor="middle" font-size="12" transform="rotate(-90 ${f1(b.x - 44)} ${f1(b.y + b.h / 2)})">${esc(yLabel)}</text>`);
  out.push('</g>');
}

function legend(out: string[], x: number, y: number, series: Series[], kind: 'box' | 'line'): void {
  out.push(`<g font-size="11" fill="#333">`);
  let cx = x;
  for (const s of series) {
    if (kind === 'box') out.push(`<rect x="${f1(cx)}" y="${f1(y - 9)}" width="11" height="11" fill="${s.color}"/>`);
    else out.push(`<line x1="${f1(cx)}" y1="${f1(y - 4)}" x2="${f1(cx + 14)}" y2="${f1(y - 4)}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/>`);
    out.push(`<text x="${f1(cx + 17)}" y="${f1(y)}">${esc(s.name)}</text>`);
    cx += 24 + s.name.length * 6.5;
  }
  out.push('</g>');
}

/** Render the two-panel chart as a standalone SVG document. */
export function renderChart(spec: ChartSpec): string {
  const W = 980, H = 420;
  const left: Box = { x: 70, y: 60, w: 380, h: 270 };
  const right: Box = { x: 570, y: 60, w: 380, h: 270 };
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold" fill="#222">${esc(spec.title)}</text>`);
  const cats = spec.categories;

  // stacked 100 % bars
  const stackMax = Math.max(100, ...cats.map((_, i) => spec.stacked.series.reduce((a, s) => a + (s.values[i] || 0), 0)));
  const sMax = Math.ceil(stackMax / 20) * 20;
  axes(out, left, cats, sMax, 20, spec.stacked.yLabel, spec.xLabel, '%');
  const slot = left.w / cats.length;
  const bw = Math.max(4, slot * 0.7);
  cats.forEach((_, i) => {
    let acc = 0;
    for (const s of spec.stacked.series) {
      const v = Math.max(0, s.values[i] || 0);
      if (v <= 0) continue;
      const y0 = left.y + left.h - ((acc + v) / sMax) * left.h;
      const h = (v / sMax) * left.h;
      out.push(`<rect x="${f1(left.x + slot * i + (slot - bw) / 2)}" y="${f1(y0)}" width="${f1(bw)}" height="${f1(Math.max(h, 0.3))}" fill="${s.color}"><title>${esc(`${cats[i]}: ${s.name} ${v.toFixed(1)}%`)}</title></rect>`);
      acc += v;
    }
  });
  legend(out, left.x, 48, spec.stacked.series, 'box');

  // lines
  const lMaxRaw = Math.max(...spec.lines.series.flatMap((s) => s.values.filter(Number.isFinite)), 0);
  const lStep = niceStep(lMaxRaw);
  const lMax = Math.max(lStep, Math.ceil(lMaxRaw / lStep) * lStep);
  axes(out, right, cats, lMax, lStep, spec.lines.yLabel, spec.xLabel);
  const rslot = right.w / cats.length;
  for (const s of spec.lines.series) {
    const pts = s.values.map((v, i) => [right.x + rslot * (i + 0.5), right.y + right.h - (v / lMax) * right.h] as const);
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 4"' : ''} points="${pts.map(([x, y]) => `${f1(x)},${f1(y)}`).join(' ')}"/>`);
    pts.forEach(([x, y], i) => out.push(`<circle cx="${f1(x)}" cy="${f1(y)}" r="3" fill="${s.color}"><title>${esc(`${cats[i]}: ${s.name} ${s.values[i].toPrecision(3)}`)}</title></circle>`));
  }
  legend(out, right.x, 48, spec.lines.series, 'line');
  out.push('</svg>');
  return out.join('\n') + '\n';
}
