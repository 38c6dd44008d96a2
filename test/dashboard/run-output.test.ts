/**
 * A server-executed command step's retained output in the dashboard: a real run in the live
 * container engine (AGENTSCM_TEST_DOCKER_SOCKET) whose command prints markup and more than the
 * 64 KiB the run view carries; the route answers the first 64 KiB with the whole size and digest,
 * and Chromium shows the markup as text.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { before, test } from 'node:test';
import puppeteer from 'puppeteer-core';

import { sha256Hex } from '../../src/crypto/sha256.js';
import type { HubProfile } from '../../src/hub/config.js';
import { buildScenario } from '../helpers/scenario.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';
import { BROWSER_ARGS, browserPath } from '../support/dashboard.js';
import { grantFor, httpCall, startTestHub, type HubStore } from '../support/hub.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const FILLER = 100_000;

before(async () => {
  await requireEngine();
});

test(
  'a run view carries the first 64 KiB of a command step output; Chromium shows markup in it as text',
  { timeout: 180_000 },
  async (t) => {
    const script = `printf '%s\\n' '${HOSTILE}'; head -c ${FILLER} /dev/zero | tr '\\0' a`;
    const world = await buildScenario(t, {
      argv: ['/bin/sh', '-c', script],
      limits: { output_bytes: 256 * 1024 },
      requirement: false,
      enrollStep: null,
    });
    const { root, dataDir: data, cli, workflowFile: workflow } = world;
    const run = await cli([
      'skill-workflow',
      'run',
      'r1',
      workflow,
      '--docker',
      DOCKER,
      '--docker-socket',
      DOCKER_SOCKET,
    ]);
    assert.equal(run.code, 0, run.stderr + run.stdout);

    const profile: HubProfile = {
      repositoryId: 'acme/demo',
      profileId: 'default',
      nativeRepository: world.repository,
      dataDir: data,
      target: 'main',
      requirementDigest: '0'.repeat(64),
    };
    const hub: HubStore = {
      dir: root,
      store: {
        dataDir: data,
        repository: world.repository,
        revision: world.revision,
        contextDigest: world.contextDigest,
        changeVersion: BigInt(world.changeVersion),
      },
      profile,
      config: { host: '127.0.0.1', port: 0, profiles: [profile] },
    };
    const reader = grantFor(hub, 'ops', 'dashboard', 'reader');
    const running = await startTestHub(t, hub);
    const base = '/v1/hub/ui-api/repositories/acme/demo/profiles/default';

    const answer = await httpCall(running.url, 'GET', `${base}/runs/r1`, { token: reader.token });
    assert.equal(answer.status, 200, answer.text);
    const attempts = answer.json.attempts as {
      step_id: string;
      stdout: { text: string; bytes: number; sha256: string; truncated: boolean };
    }[];
    const stdout = attempts[0]?.stdout;
    const whole = `${HOSTILE}\n${'a'.repeat(FILLER)}`;
    assert.deepEqual(
      [attempts.length, stdout?.bytes, stdout?.sha256, stdout?.truncated],
      [1, Buffer.byteLength(whole), sha256Hex(Buffer.from(whole)), true],
    );
    assert.equal(stdout?.text, whole.slice(0, 64 * 1024), 'the first 64 KiB exactly');
    const missing = await httpCall(running.url, 'GET', `${base}/runs/no-such-run`, { token: reader.token });
    assert.equal((missing.json.error as { code: string }).code, 'WORKFLOW_RUN_NOT_FOUND');

    const browser = await puppeteer.launch({ executablePath: browserPath(), headless: true, args: BROWSER_ARGS });
    t.after(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`${running.url}/ui/`, { waitUntil: 'load' });
    await page.evaluate(
      `sessionStorage.setItem('agentscm.reader_token', ${JSON.stringify(reader.token)}); location.hash = '#/run/r1'`,
    );
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction("document.querySelector('pre')?.textContent?.startsWith('<img') === true", {
      timeout: 20_000,
    });
    const shown = (await page.evaluate(
      "({ pre: document.querySelector('pre').textContent, images: document.querySelectorAll('img').length, pwned: window.__pwned ?? null, main: document.getElementById('main').textContent })",
    )) as {
      pre: string;
      images: number;
      pwned: number | null;
      main: string;
    };
    assert.equal(shown.pre, whole.slice(0, 64 * 1024));
    assert.deepEqual([shown.images, shown.pwned], [0, null], 'the command output became markup');
    assert.match(shown.main, /only the first 64 KiB shown/);
  },
);
