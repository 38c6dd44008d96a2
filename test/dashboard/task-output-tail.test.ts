/**
 * The dashboard's Tasks view of a collected command that did not pass carries the last lines of
 * its output from the transfer's signed command_output_tail record (docs/dashboard.md "Routes and
 * bounds"): at most 40 lines and 4 KiB, control characters escaped, hostile markup as plain text;
 * a passed command carries none.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import puppeteer from 'puppeteer-core';

import { buildOutputTail, encodeOutputTail, OUTPUT_TAIL_LIMITS } from '../../src/contracts/collector/output-tail.js';
import { encodeTransferEnvelope, transferRecordEntry } from '../../src/contracts/collector/transfer.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { importEnvelope } from '../support/admission.js';
import { BROWSER_ARGS, browserPath, UI_BASE } from '../support/dashboard.js';
import { claim, makeEvidence, transferParts } from '../support/evidence.js';
import { grantFor, httpCall, hubOver, startTestHub } from '../support/hub.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON views read loosely in assertions
type Loose = any;

test(
  'a failed collected command shows its output tail in the Tasks view, bounded and escaped',
  { timeout: 120_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const parts = transferParts(claim(ev));
    const lines = Array.from({ length: OUTPUT_TAIL_LIMITS.shownLines + 5 }, (_, i) => `out ${i}`);
    const stdout = Buffer.from(`${lines.join('\n')}\n`);
    const stderr = Buffer.from('<img src=x onerror=alert(1)>\n\x1b[31mred\x1b[0m FAIL\n');
    const stream = (bytes: Buffer): Loose => ({
      retained_bytes: bytes.byteLength,
      observed_bytes: bytes.byteLength,
      truncated: false,
      sha256: sha256Hex(bytes),
    });
    const record = { ...parts.record, outcome: 'failed', exit_code: 1, stdout: stream(stdout), stderr: stream(stderr) };
    const tail = encodeOutputTail(
      buildOutputTail({ last: stdout, total: stdout.byteLength }, { last: stderr, total: stderr.byteLength }),
    );
    const requestBytes = encodeCanonical(parts.request);
    const recordBytes = encodeCanonical(record);
    const envelope = encodeTransferEnvelope(
      {
        ...parts.header,
        records: [
          transferRecordEntry('execution_request', requestBytes),
          transferRecordEntry('execution_record', recordBytes),
          transferRecordEntry('command_output_tail', tail),
        ],
      },
      [requestBytes, recordBytes, tail],
      ev.key.privateKey,
    );
    importEnvelope(ev, envelope);

    const hub = hubOver(ev.dir, ev.store);
    const reader = grantFor(hub, 'ops', 'dashboard', 'reader');
    const running = await startTestHub(t, hub);
    const answer = await httpCall(running.url, 'GET', `${UI_BASE}/tasks?limit=10`, { token: reader.token });
    assert.equal(answer.status, 200, answer.text);
    const attempts: Loose[] = (answer.json.tasks as Loose[]).flatMap(
      (task: Loose): Loose[] => task.attempts as Loose[],
    );
    const transfer = attempts.find((a) => a.transfer !== null)?.transfer;
    assert.ok(transfer, answer.text.slice(0, 500));
    assert.equal(transfer.outcome, 'failed');
    const shown = transfer.output_tail;
    assert.equal(shown.stderr, '<img src=x onerror=alert(1)>\n\\x1b[31mred\\x1b[0m FAIL');
    const outLines = shown.stdout.split('\n');
    // 40 lines in all: stderr's 2 and stdout's last 38.
    assert.equal(outLines.length, OUTPUT_TAIL_LIMITS.shownLines - 2);
    assert.equal(outLines.at(-1), `out ${lines.length - 1}`);
    assert.ok(!outLines.includes('out 0'));
    assert.equal(shown.truncated, true);
    assert.deepEqual(transfer.output_tail_cut, { stdout: true, stderr: false });

    // The page: each stream in a <pre> as text; the markup in stderr never becomes an element.
    const browser = await puppeteer.launch({ executablePath: browserPath(), headless: true, args: BROWSER_ARGS });
    t.after(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`${running.url}/ui/`, { waitUntil: 'load' });
    await page.waitForSelector('#token-form');
    await page.type('#token', reader.token);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#main table');
    await page.evaluate("location.hash = '/tasks'");
    await page.waitForSelector('pre[aria-label="stderr output tail"]', { timeout: 15_000 });
    const shownOnPage = (await page.evaluate(
      `[...document.querySelectorAll('pre[aria-label$="output tail"]')].map((e) => [e.getAttribute('aria-label'), ` +
        `e.textContent, e.previousElementSibling?.textContent])`,
    )) as [string, string, string][];
    assert.deepEqual(
      shownOnPage.map(([label, , note]) => [label, note]),
      [
        ['stdout output tail', 'stdout, last lines (earlier output left out):'],
        ['stderr output tail', 'stderr, last lines:'],
      ],
    );
    assert.equal(shownOnPage[1]?.[1], shown.stderr);
    assert.equal(await page.evaluate("document.querySelectorAll('#main img').length"), 0);
    await running.close();
  },
);
