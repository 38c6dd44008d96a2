/**
 * The dashboard shows a file name with a bidirectional override escaped and marked (issue #25
 * item 6; docs/dashboard.md "Safe by construction"): in real Chromium against a real hub, a
 * Change whose revision adds `src/evil` U+202E `sj.exe` renders the name as
 * `[!]src/evil\u202esj.exe` in a marked element, and no U+202E reaches the page's text raw —
 * while the hub's JSON route still carries the exact name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import puppeteer, { type Browser } from 'puppeteer-core';

import { UNSAFE_TEXT_MARKER } from '../../src/contracts/display-text.js';
import { addChangeWithFile, BROWSER_ARGS, browserPath, dashboardHub } from '../support/dashboard.js';

const EVIL = 'src/evil\u202esj.exe';
const SHOWN = `${UNSAFE_TEXT_MARKER}src/evil\\u202esj.exe`;

test(
  'dashboard in Chromium: a Change adding src/evil\\u202esj.exe shows the name escaped and marked, never raw',
  { timeout: 180_000 },
  async (t) => {
    const d = await dashboardHub(t);
    addChangeWithFile(d.hub, 'change-rlo', EVIL, 'MZ');

    // The JSON route is machine output: the exact name.
    const api = await fetch(`${d.url}${d.base}/changes/change-rlo`, {
      headers: { authorization: `Bearer ${d.reader.token}` },
    });
    assert.equal(api.status, 200);
    const body = await api.text();
    assert.ok(body.includes(EVIL) || body.includes('\\u202e'), 'the route carries the exact name');
    assert.ok(JSON.stringify(JSON.parse(body)).includes(EVIL), 'the decoded JSON holds the exact name');

    const browser: Browser = await puppeteer.launch({
      executablePath: browserPath(),
      headless: true,
      args: BROWSER_ARGS,
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(`${d.url}/ui/`, { waitUntil: 'load' });
    await page.evaluate(
      `sessionStorage.setItem('agentscm.reader_token', ${JSON.stringify(d.reader.token)}); location.hash = '#/change/change-rlo'`,
    );
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(`document.getElementById('main')?.textContent?.includes('1 file differ') === true`, {
      timeout: 30_000,
    });

    const seen = (await page.evaluate(
      "({ text: document.body.textContent ?? '', marked: [...document.querySelectorAll('#main .unsafe-text')].map((el) => ({ text: el.textContent, title: el.getAttribute('title') })) })",
    )) as { text: string; marked: { text: string; title: string | null }[] };
    assert.ok(!seen.text.includes('\u202e'), 'no raw U+202E in the page text');
    assert.ok(seen.text.includes(SHOWN), `the escaped, marked name is shown: ${seen.text.slice(0, 2000)}`);
    assert.deepEqual(
      seen.marked.map((m) => m.text),
      [SHOWN],
    );
    assert.match(seen.marked[0]?.title ?? '', /control or bidirectional formatting characters/);
    // The marked element is visibly different from the text around it.
    const style = (await page.evaluate(
      "(() => { const el = document.querySelector('#main .unsafe-text'); const s = getComputedStyle(el); return { bg: s.backgroundColor, outline: s.outlineStyle }; })()",
    )) as { bg: string; outline: string };
    assert.notEqual(style.bg, 'rgba(0, 0, 0, 0)');
    assert.equal(style.outline, 'dashed');
    assert.deepEqual(pageErrors, []);
  },
);
