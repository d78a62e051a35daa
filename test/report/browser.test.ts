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
import { HELD, writeHeldTrace } from '../analysis/written.js';

let dir = '', page = '', cmpPage = '', heldPage = '', an: Analysis;
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
  const held = join(dir, 'held.trace');
  writeHeldTrace(held);
  heldPage = join(dir, 'held.html');
  assert.equal(luna(['report', held, '-o', heldPage]).status, 0);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

// One Chromium for the file, launched at the first page (a launch costs seconds of CPU); each
// page opens in a context of its own (its own storage, cache and permissions, as a fresh browser's).
let browser: Promise<import('playwright-core').Browser> | undefined;
after(async () => { if (browser) await (await browser).close(); });

async function open(file: string, fn: (p: import('playwright-core').Page, problems: string[]) => Promise<void>): Promise<void> {
  browser ??= chromium.launch({ executablePath: exe, args: ['--no-sandbox'] });
  const context = await (await browser).newContext({ viewport: { width: 1400, height: 1000 } });
  try {
    const p = await context.newPage();
    const problems: string[] = [];
    const url = pathToFileURL(file).href;
    p.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    p.on('request', (r) => { if (r.url() !== url) problems.push(`request: ${r.url()}`); });
    await p.goto(url, { waitUntil: 'load' });
    // everything draws before the load event (the columns inflate synchronously): a screenshot
    // taken at load, as `chromium --screenshot` does, sees the drawn page
    assert.equal(await p.evaluate(() => document.body.getAttribute('data-ready')), '1', 'drawn by the load event');
    await p.waitForSelector('body[data-ready]', { timeout: 60_000 });
    await fn(p, problems);
    assert.deepEqual(problems, [], 'no console errors, no request but the file itself');
  } finally {
    await context.close();
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

test('the timeline: instance names, CPU and inputs in tooltips, DFs of transfers, distinct colours, precise ticks, search, a range with statistics', { timeout: 180_000 }, async (t) => {
  if (!haveChromium) { t.skip('no chromium: install Debian package chromium or set LUNA_CHROMIUM'); return; }
  await open(page, async (p) => {
    const cv = p.locator('canvas[data-run="0"]');
    await cv.scrollIntoViewIfNeeded();
    const box = (await cv.boundingBox())!;
    // code colours: distinct from each other and from the transfers' orange and the path's red
    const colours = await p.$$eval('[data-code-colour]', (xs) => xs.map((x) => x.getAttribute('data-code-colour')!));
    assert.ok(colours.length >= 4);
    assert.equal(new Set(colours).size, colours.length, colours.join());
    for (const c of colours) assert.ok(!['#e08a2c', '#e00', '#8795a1'].includes(c), c);
    // hovering a fragment on a worker row names the instance, its CPU time and inputs
    const rowY = async (label: string): Promise<number> => box.y + (await p.evaluate((l) => {
      // rows: axis 22 px, then per node sys (9), net (9), one 18 px row per thread, 4 px gap
      const m = /^n(\d+) t(\d+)$/.exec(l)!; return 22 + Number(m[1]) * (18 + 18 + 4) + 18 + (Number(m[2]) - 1) * 18 + 8;
    }, label));
    let tipText = '';
    for (let x = box.x + 80; x < box.x + box.width && !/inputs: (?!none)/.test(tipText); x += 4) {
      await p.mouse.move(x, await rowY('n1 t1'));
      tipText = (await p.locator('.tip').first().textContent()) ?? '';
    }
    assert.match(tipText, /^[A-Za-z_]\w*(\[\d+\])+  \(\w+\)\nn1 t1\nstart .*, wall .*, CPU .*\ninputs: [A-Za-z_]\w*(\[\d+\])*/, tipText);
    // a transfer names its DF
    let netText = '';
    const netY = box.y + 22 + 9 + 3;
    for (let x = box.x + 80; x < box.x + box.width && !netText.startsWith('DF '); x += 3) {
      await p.mouse.move(x, netY);
      netText = (await p.locator('.tip').first().textContent()) ?? '';
    }
    assert.match(netText, /^DF [A-Za-z_]\w*(\[\d+\])* from node 1 to node 0\n/, netText);
    // zoomed far in (below a millisecond), tick labels stay distinct
    await p.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2);
    for (let i = 0; i < 12; i++) await p.mouse.wheel(0, -900);
    await p.waitForFunction(() => { const v = document.querySelector('canvas[data-run="0"]')!.getAttribute('data-view')!.split(',').map(Number); return v[1]! - v[0]! < 1e6; });
    const ticks = (await cv.getAttribute('data-ticks'))!.split('|');
    assert.ok(ticks.length >= 3, ticks.join());
    assert.equal(new Set(ticks).size, ticks.length, `distinct: ${ticks.join(' ')}`);
    await cv.dblclick({ position: { x: box.width / 2, y: 10 } });
    // search by label: outlines the matches and counts them
    await p.fill('input[data-search]', 'mul');
    await p.press('input[data-search]', 'Enter');
    const n = Number(await p.getAttribute('[data-found]', 'data-found'));
    assert.ok(n > 0, 'matches of `mul`');
    // shift-drag selects a range: statistics of what ran in it
    await p.keyboard.down('Shift');
    await p.mouse.move(box.x + 100, box.y + 60);
    await p.mouse.down();
    await p.mouse.move(box.x + box.width - 20, box.y + 60, { steps: 5 });
    await p.mouse.up();
    await p.keyboard.up('Shift');
    const stat = p.locator('.tlstats[data-run="0"] p[data-selection]');
    await stat.waitFor();
    assert.ok(Number(await stat.getAttribute('data-fragments')) > 0);
    assert.match((await stat.textContent())!, /fragments in it; worker threads busy [0-9.]+% of the range .* DF transfers arrived/);
  });
});

test('the comparison page: the two timelines share their time axis', { timeout: 180_000 }, async (t) => {
  if (!haveChromium) { t.skip('no chromium: install Debian package chromium or set LUNA_CHROMIUM'); return; }
  await open(cmpPage, async (p) => {
    const a = p.locator('canvas[data-run="0"]'), b = p.locator('canvas[data-run="1"]');
    assert.equal(await a.getAttribute('data-view'), await b.getAttribute('data-view'));
    await a.scrollIntoViewIfNeeded();
    const box = (await a.boundingBox())!;
    await p.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await p.mouse.wheel(0, -600);
    await p.waitForFunction(() => document.querySelector('canvas[data-run="1"]')!.getAttribute('data-view') === document.querySelector('canvas[data-run="0"]')!.getAttribute('data-view') && !document.querySelector('canvas[data-run="1"]')!.getAttribute('data-view')!.startsWith('0,'));
  });
});

test('the producer\'s state in Chromium: the bar drawn as wide as each share, the table and the finding shown', { timeout: 180_000 }, async (t) => {
  if (!haveChromium) { t.skip('no chromium: install Debian package chromium or set LUNA_CHROMIUM'); return; }
  await open(heldPage, async (p) => {
    const table = p.locator('table.producer-state');
    await table.scrollIntoViewIfNeeded();
    assert.ok(await table.isVisible());
    const cells = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    assert.deepEqual(cells.map((c) => c.slice(1)), [['0 ns', '0%'], ['90 ns', '64%'], ['50 ns', '36%'], ['0 ns', '0%']]);
    assert.match(cells[1]![0]!, /ready, not started/);
    const w = async (k: string): Promise<number> => (await p.locator(`.state-bar span[data-state="${k}"]`).boundingBox())!.width;
    const queued = await w('queued'), running = await w('running');
    assert.ok(Math.abs(queued / running - HELD.queued / HELD.running) < 0.05, `bar widths ${queued} : ${running}`);
    assert.equal(await p.locator('.state-bar span[data-state="notReady"]').count(), 0, 'no span for a state without time');
    assert.ok(await p.locator('p.held-ready').isVisible());
    assert.match((await p.locator('p.held-ready').textContent())!, /ready and not started for 90 ns/);
  });
});
