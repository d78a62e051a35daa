// The report in a real browser (system Chromium through playwright-core): it draws without
// console errors, requests nothing but its own file, shows the analysis' SLOW totals, draws the
// timeline canvas, and zooms on the mouse wheel. Skips, saying why, when there is no Chromium.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { analysis, chromiumPath, luna, tracedRun, type Analysis } from './helpers.js';

let dir = '', page = '', cmpPage = '', an: Analysis;
const exe = chromiumPath();
const haveChromium = exe !== undefined && existsSync(exe);

before(() => {
  if (!haveChromium) return;
  dir = mkdtempSync(join(tmpdir(), 'luna-report-browser-'));
  const a = join(dir, 'a.trace'), b = join(dir, 'b.trace');
  tracedRun(a);
  tracedRun(b, ['--nodes', '1', '--threads', '2']);
  an = analysis(a);
  page = join(dir, 'report.html');
  cmpPage = join(dir, 'cmp.html');
  assert.equal(luna(['report', a, '-o', page]).status, 0);
  assert.equal(luna(['report', a, b, '-o', cmpPage]).status, 0);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

async function open(file: string, fn: (p: import('playwright-core').Page, problems: string[]) => Promise<void>): Promise<void> {
  const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox'] });
  try {
    const p = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    const url = pathToFileURL(file).href;
    p.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    p.on('request', (r) => { if (r.url() !== url) problems.push(`request: ${r.url()}`); });
    await p.goto(url);
    await p.waitForSelector('body[data-ready]', { timeout: 60_000 });
    await fn(p, problems);
    assert.deepEqual(problems, [], 'no console errors, no request but the file itself');
  } finally {
    await browser.close();
  }
}

test('the report in Chromium: totals, charts, the timeline drawn and zoomed, offline', { timeout: 180_000 }, async (t) => {
  if (!haveChromium) { t.skip('no chromium: install Debian package chromium or set LUNA_CHROMIUM'); return; }
  await open(page, async (p) => {
    // the displayed totals are the analysis'
    const rows = await p.$$eval('tr[data-slow-total]', (trs) => trs.map((tr) => ({ f: tr.getAttribute('data-slow-total')!, ns: Number(tr.getAttribute('data-ns')), pct: tr.querySelector('.pct')!.textContent })));
    assert.equal(rows.length, 5);
    for (const r of rows) {
      const f = r.f as 'S' | 'L' | 'O' | 'W' | 'U';
      assert.equal(r.ns, an.t[f]);
      assert.equal(r.pct, `${an.p[f].toFixed(1)}%`);
    }
    // ECharts drew its charts (SLOW bars, dynamics, histograms)
    assert.ok(await p.locator('.chart canvas').count() >= 3);
    const cv = p.locator('canvas[data-run="0"]');
    const inked = await cv.evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i]! < 235 || d[i + 1]! < 235 || d[i + 2]! < 235) n++;
      return n;
    });
    assert.ok(inked > 500, `the timeline has drawn pixels (${inked})`);
    const view = async (): Promise<number[]> => (await cv.getAttribute('data-view'))!.split(',').map(Number);
    const [a0, b0] = await view();
    assert.equal(a0, 0);
    assert.ok(b0! >= an.tWall * 0.99);
    await cv.scrollIntoViewIfNeeded();
    const box = (await cv.boundingBox())!;
    await p.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
    await p.mouse.wheel(0, -600);
    await p.waitForFunction((v) => document.querySelector('canvas[data-run="0"]')!.getAttribute('data-view') !== v, `${a0},${b0}`);
    const [a1, b1] = await view();
    assert.ok(b1! - a1! < (b0! - a0!) / 2, `zoomed in: ${a1}..${b1} from ${a0}..${b0}`);
    // drag pans the zoomed view
    await p.mouse.down();
    await p.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2, { steps: 4 });
    await p.mouse.up();
    await p.waitForFunction((v) => document.querySelector('canvas[data-run="0"]')!.getAttribute('data-view') !== v, `${a1},${b1}`);
    const [a2, b2] = await view();
    assert.ok(a2! > a1!, 'dragged left: later times');
    assert.ok(Math.abs((b2! - a2!) - (b1! - a1!)) < 2, 'panning keeps the zoom');
    const shot = join(tmpdir(), 'luna-report-browser.png');
    await p.screenshot({ path: shot, fullPage: true });
    assert.ok(existsSync(shot));
  });
});

test('the comparison page in Chromium: two timelines, no errors', { timeout: 180_000 }, async (t) => {
  if (!haveChromium) { t.skip('no chromium: install Debian package chromium or set LUNA_CHROMIUM'); return; }
  await open(cmpPage, async (p) => {
    assert.equal(await p.locator('canvas[data-run]').count(), 2);
    assert.equal(await p.locator('tr[data-slow-total]').count(), 10);
  });
});
