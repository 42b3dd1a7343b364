// Real-browser checks of the HTML and SVG flame graphs. Usage:
//   node flamegraph.test.mjs PAGE.html PAGE.svg FRAME_NAME SHOT_DIR [EXPECTED_PERCENT]
// With EXPECTED_PERCENT, the frame's drawn width and the search's matched share must equal it (±0.1).
// Prints "ok ..." / "FAIL ..." lines and exits non-zero when a check fails.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [html, svg, frameName, shots, expectedArg] = process.argv.slice(2);
const expected = expectedArg === undefined ? null : Number(expectedArg);
let failed = 0;
const check = (ok, what) => { console.log((ok ? 'ok   ' : 'FAIL ') + what); if (!ok) failed++; };

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fa-chromium-')); // playwright keeps its own profile dir; ours is for crash dumps
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  const t0 = Date.now();
  await page.goto('file://' + path.resolve(html));
  await page.waitForFunction(() => window.fg && window.fg.levels.length > 0);
  console.log(`info: HTML page ready in ${Date.now() - t0} ms`);
  check(errors.length === 0, 'html: no script errors ' + errors.join(' | '));
  check(await page.evaluate(() => window.pwned === undefined), 'html: a frame name cannot inject script');

  // hover a known frame and read the tooltip
  const box = await page.evaluate(name => {
    const c = document.getElementById('canvas').getBoundingClientRect();
    const rows = window.fg.levels.length;
    for (let l = 0; l < rows; l++) for (const f of window.fg.levels[l] || [])
      if (f.node.name === name) {
        const rh = c.height / (Math.max(...window.fg.levels.map((_, i) => i)) + 1);
        return { x: c.left + (f.x + f.w / 2) * c.width, y: window.fg.inverted ? c.top + (l + 0.5) * rh : c.bottom - (l + 0.5) * rh };
      }
    return null;
  }, frameName);
  check(box !== null, `html: frame ${frameName} is drawn`);
  if (expected !== null) {
    const w = await page.evaluate(name => {
      for (const l of window.fg.levels) for (const f of l || []) if (f.node.name === name) return f.w * 100;
      return -1;
    }, frameName);
    check(Math.abs(w - expected) < 0.1, `html: ${frameName} is drawn at ${w.toFixed(2)}% of the width (expected ${expected}%)`);
  }
  if (box) {
    await page.mouse.move(box.x, box.y);
    const tip = await page.textContent('#tip');
    check(tip.includes(frameName) && /%/.test(tip), `html: hover shows name and share (${tip.slice(0, 80)})`);
    await page.mouse.click(box.x, box.y);
    const zoomed = await page.evaluate(name => {
      for (const l of window.fg.levels) for (const f of l || []) if (f.node.name === name) return f.w;
      return -1;
    }, frameName);
    check(await page.evaluate(() => window.fg.zoomed) === frameName && Math.abs(zoomed - 1) < 1e-9,
      `html: click zooms ${frameName} to the full width (${zoomed})`);
    await page.screenshot({ path: path.join(shots, 'flamegraph-zoomed.png') });
    await page.click('#reset');
    check(await page.evaluate(() => window.fg.zoomed) === null, 'html: reset returns to the whole profile');
  }
  await page.fill('#search', frameName.replace(/[.$]/g, '\\$&'));
  await page.press('#search', 'Enter');
  const matched = await page.evaluate(() => window.fg.matched);
  const matchedText = await page.textContent('#matched');
  check(matched > 0 && matched <= 100 && /Matched: [0-9.]+%/.test(matchedText) &&
    (expected === null || Math.abs(matched - expected) < 0.1), `html: search shows the matched share (${matchedText})`);
  await page.screenshot({ path: path.join(shots, 'flamegraph-search.png') });
  await page.click('#flip');
  check(await page.evaluate(() => window.fg.inverted) === true, 'html: icicle toggle');
  await page.click('#rev');
  check(await page.evaluate(() => window.fg.reversed) === true, 'html: reversed toggle');
  const rootsAreLeaves = await page.evaluate(() => (window.fg.levels[0] || []).every(f => f.node.self >= 0));
  check(rootsAreLeaves, 'html: reversed view lays out');
  await page.screenshot({ path: path.join(shots, 'flamegraph-reversed-icicle.png') });
  await page.click('#treebtn');
  const items = await page.$$eval('#tree li', l => l.length);
  check(items > 0, `html: tree view lists ${items} roots`);
  check(errors.length === 0, 'html: still no script errors ' + errors.join(' | '));

  // SVG
  const sp = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const sErrors = [];
  sp.on('pageerror', e => sErrors.push(String(e)));
  await sp.goto('file://' + path.resolve(svg));
  // the widest box of the frame, scrolled into view: a deep profile's SVG is taller than the viewport
  // and the first box found may be a sliver or below the fold
  const title = await sp.evaluate(name => {
    let best = null, bestWidth = -1;
    for (const g of document.getElementsByTagName('g')) {
      const t = g.getElementsByTagName('title')[0];
      const rect = g.getElementsByTagName('rect')[0];
      if (t && rect && t.textContent.startsWith(name + ' (')) {
        const w = rect.getBoundingClientRect().width;
        if (w > bestWidth) { best = rect; bestWidth = w; }
      }
    }
    if (!best) return null;
    best.scrollIntoView({ block: 'center', inline: 'center' });
    const r = best.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }, frameName);
  check(title !== null, `svg: frame ${frameName} is drawn`);
  if (title) {
    await sp.mouse.move(title.x, title.y);
    const details = await sp.textContent('#details');
    check(details.includes(frameName), `svg: hover shows details (${details.slice(0, 80)})`);
    await sp.mouse.click(title.x, title.y);
    check(await sp.evaluate(() => document.documentElement.getAttribute('data-zoomed')) === frameName, 'svg: click zooms');
    await sp.screenshot({ path: path.join(shots, 'svg-zoomed.png') });
    await sp.evaluate(() => resetZoom());
    check(await sp.evaluate(() => document.documentElement.getAttribute('data-zoomed')) === null, 'svg: reset');
  }
  await sp.evaluate(name => search(name.replace(/[.$]/g, '\\$&')), frameName);
  const sm = await sp.evaluate(() => document.documentElement.getAttribute('data-matched'));
  check(+sm > 0 && +sm <= 100 && (expected === null || Math.abs(+sm - expected) < 0.1), `svg: search shows the matched share (${sm}%)`);
  check(sErrors.length === 0, 'svg: no script errors ' + sErrors.join(' | '));
} finally {
  await browser.close();
  fs.rmSync(userDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
