/**
 * The dashboard in a real browser: Debian's Chromium (installed by bin/start-browser.sh, or
 * AGENTSCM_TEST_BROWSER) driven by puppeteer-core against a real hub over a store with a real
 * receipt. Screenshots of every view go to test-artifacts/dashboard/ (git-ignored). Checks: a
 * hostile string from the store renders as text, every request is a GET to the hub with the
 * token in a header only, keyboard navigation reaches every link and button and Enter follows a
 * link, the main colours have a contrast of at least 4.5:1, the bundle download is the offline
 * bundle, and the page shows "reconnecting" while the hub is down and recovers when it is back.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

import { revokeRegistration } from '../../src/native/executor-registry.js';
import { withStore } from '../../src/tasks/store.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { addChangeWithFile, BROWSER_ARGS, browserPath, dashboardHub, landedHub } from '../support/dashboard.js';
import { startTestHub } from '../support/hub.js';
import { CHANGE_ID } from '../support/tasks.js';

const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts', 'dashboard');

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// Code run in the page is written as expression strings: the test is type-checked for Node, not the DOM.
function mainHas(text: string): string {
  return `document.getElementById('main')?.textContent?.includes(${JSON.stringify(text)}) === true`;
}

async function show(page: Page, hash: string, expect: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.waitForFunction(mainHas(expect), { timeout: 15_000 });
}

async function mainText(page: Page): Promise<string> {
  return String(await page.evaluate("document.getElementById('main')?.textContent ?? ''"));
}

function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((part) => {
    const c = Number(part) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

test(
  'dashboard in Chromium: every view, hostile text, GET only, keyboard, contrast, bundle download, reconnecting',
  { timeout: 180_000 },
  async (t) => {
    const d = await dashboardHub(t);
    withStore(d.hub.store.dataDir, 'write', (s) =>
      revokeRegistration(s.authority(), d.receipt.ev.enrollment.registration_id, HOSTILE),
    );
    // A file name is any UTF-8: one that is markup, in a Change's diff against its target.
    addChangeWithFile(d.hub, 'change-2', `${HOSTILE}.md`, 'x');
    const downloads = tempDir(t, 'agentscm-dashboard-downloads-');

    const browser: Browser = await puppeteer.launch({
      executablePath: browserPath(),
      headless: true,
      args: BROWSER_ARGS,
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const requests: { method: string; url: string; authorization: string | undefined }[] = [];
    page.on('request', (request) =>
      requests.push({ method: request.method(), url: request.url(), authorization: request.headers().authorization }),
    );
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));

    await page.goto(`${d.url}/ui/`, { waitUntil: 'load' });
    await page.evaluate("sessionStorage.setItem('agentscm.poll_ms', '300')");
    await page.waitForSelector('#token-form');
    await shot(page, '0-token');
    await page.type('#token', d.reader.token);
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      `document.querySelector('#main table')?.textContent?.includes(${JSON.stringify(CHANGE_ID)}) === true`,
      { timeout: 15_000 },
    );
    // The revoked registration makes the subject fail qualification, in words.
    assert.match(await mainText(page), /not qualified/);
    await shot(page, '1-changes');

    await show(page, `/change/${CHANGE_ID}`, 'Revision against its target');
    await shot(page, '2-change');
    await show(page, '/tasks', 'Step unit');
    assert.match(await mainText(page), /box-1, registration/);
    await shot(page, '3-tasks');
    await show(page, '/receipts', CHANGE_ID);
    await shot(page, '4-receipts');
    await show(page, `/receipt/${d.receipt.receiptDigest}`, 'Download offline bundle');
    await shot(page, '5-receipt');

    // The download button fetches the bundle with the header token and saves it.
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
    await page.click('#download-bundle');
    const bundleName = `receipt-${d.receipt.receiptDigest}.agscmrb`;
    for (let i = 0; i < 100 && !existsSync(join(downloads, bundleName)); i += 1)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(readdirSync(downloads), [bundleName]);
    assert.ok(
      readFileSync(join(downloads, bundleName)).equals(d.receipt.bundle),
      'the downloaded file is the offline bundle',
    );

    await show(page, '/targets', 'Target main');
    await shot(page, '6-targets');
    await show(page, '/registrations', 'revoked');
    await shot(page, '7-registrations');
    const hostile = (await page.evaluate(
      "({ images: document.querySelectorAll('img').length, pwned: window.__pwned ?? null, text: document.getElementById('main')?.textContent ?? '' })",
    )) as {
      images: number;
      pwned: number | null;
      text: string;
    };
    assert.deepEqual([hostile.images, hostile.pwned], [0, null], 'the hostile string became markup');
    assert.ok(hostile.text.includes(HOSTILE), 'the hostile string is shown as the text it is');
    await show(page, '/change/change-2', '1 file differ');
    await shot(page, '7b-change-diff');
    const diffText = await mainText(page);
    assert.ok(diffText.includes(`${HOSTILE}.md`), 'the hostile file name is shown as text');
    assert.equal(await page.evaluate("document.querySelectorAll('img').length"), 0);
    assert.equal(await page.evaluate('window.__pwned ?? null'), null);
    await show(page, '/runs', 'Skill-workflow runs');
    await shot(page, '8-runs');

    // Contrast of the main text and of links against the page background (WCAG: at least 4.5:1).
    const colours = (await page.evaluate(
      "({ fg: getComputedStyle(document.body).color, bg: getComputedStyle(document.body).backgroundColor, link: getComputedStyle(document.querySelector('nav a')).color })",
    )) as { fg: string; bg: string; link: string };
    assert.ok(contrast(colours.fg, colours.bg) >= 4.5, `text contrast ${contrast(colours.fg, colours.bg)}`);
    assert.ok(contrast(colours.link, colours.bg) >= 4.5, `link contrast ${contrast(colours.link, colours.bg)}`);

    // Keyboard: Tab reaches every link and button of the receipt view; Enter on a nav link follows it.
    await show(page, `/receipt/${d.receipt.receiptDigest}`, 'Download offline bundle');
    await page.evaluate('document.activeElement?.blur()');
    const focusable = await page.$$eval('a[href], button', (nodes) => nodes.length);
    const reached = new Set<string>();
    for (let i = 0; i < focusable + 5; i += 1) {
      await page.keyboard.press('Tab');
      reached.add(
        String(
          await page.evaluate(
            "(el => el === null ? '' : el.tagName + ':' + (el.getAttribute('href') ?? el.textContent ?? ''))(document.activeElement)",
          ),
        ),
      );
    }
    const all = (await page.evaluate(
      "[...document.querySelectorAll('a[href], button')].map(el => el.tagName + ':' + (el.getAttribute('href') ?? el.textContent ?? ''))",
    )) as string[];
    for (const element of all) assert.ok(reached.has(element), `Tab never reached ${element}`);
    await page.focus('nav a[href="#/targets"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction("location.hash === '#/targets'");
    await page.waitForFunction(mainHas('Target main'));

    // The hub goes away: the page says so and keeps the view; it recovers when the hub is back.
    const port = Number(new URL(d.url).port);
    await d.close();
    await page.waitForFunction("document.getElementById('status')?.textContent?.startsWith('reconnecting') === true", {
      timeout: 15_000,
    });
    assert.match(await mainText(page), /Target main/);
    await shot(page, '9-reconnecting');
    await startTestHub(t, { ...d.hub, config: { ...d.hub.config, port } });
    await page.waitForFunction("document.getElementById('status')?.textContent?.startsWith('updated') === true", {
      timeout: 15_000,
    });

    assert.deepEqual(pageErrors, []);
    const hubRequests = requests.filter((r) => !r.url.startsWith('blob:'));
    assert.ok(hubRequests.length > 10);
    for (const r of hubRequests) {
      assert.equal(r.method, 'GET', r.url);
      assert.ok(r.url.startsWith(d.url), `a request left the hub: ${r.url}`);
      assert.ok(!r.url.includes(d.reader.token), 'the token appeared in a URL');
    }
    assert.ok(
      hubRequests
        .filter((r) => r.url.includes('/v1/hub/ui-api/'))
        .every((r) => r.authorization === `Bearer ${d.reader.token}`),
    );
  },
);

test(
  'dashboard in Chromium: a landing shows its Change version and links to its receipt',
  { timeout: 120_000 },
  async (t) => {
    const d = await landedHub(t);
    const browser: Browser = await puppeteer.launch({
      executablePath: browserPath(),
      headless: true,
      args: BROWSER_ARGS,
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(`${d.url}/ui/`, { waitUntil: 'load' });
    await page.evaluate(
      `sessionStorage.setItem('agentscm.reader_token', ${JSON.stringify(d.reader.token)}); location.hash = '#/targets'`,
    );
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(mainHas(`${CHANGE_ID} v2`), { timeout: 15_000 });
    await shot(page, '6b-targets-landed');
    const hrefs = (await page.evaluate(
      "[...document.querySelectorAll('#main td a')].map((a) => a.getAttribute('href'))",
    )) as string[];
    assert.deepEqual(hrefs, [`#/change/${CHANGE_ID}`, `#/receipt/${d.receiptDigest}`]);
    await page.click(`a[href="#/receipt/${d.receiptDigest}"]`);
    await page.waitForFunction(mainHas('Download offline bundle'), { timeout: 15_000 });
  },
);
