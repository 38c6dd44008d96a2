/**
 * Forge status (docs/hub.md "Forge status"): `agentscm change link` records the candidate commit,
 * and a hub profile with publish_forge_status publishes the Change's qualification state to a
 * fake forge on loopback — pending, then success after a passing import, failure after a failed
 * one — with the forge's own request shape (GitHub and GitLab), retries a forge that fails with
 * backoff, and never lets a forge failure touch task state. Config refusals for the forge section.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { parseHubConfig, type HubProfile } from '../../src/hub/config.js';
import { forgeRequest } from '../../src/hub/forge-client.js';
import { forgeLinksPath, listForgeLinks } from '../../src/hub/forge-links.js';
import { startHub } from '../../src/hub/server.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { importEnvelope } from '../support/admission.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { grantFor, hubOver, postTask, REPOSITORY_ID, resultOf } from '../support/hub.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

interface ForgeRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

/** A fake forge: records every request and answers with the next status of `answers` (201 after). */
async function fakeForge(
  t: TestContext,
  answers: number[] = [],
): Promise<{ url: string; requests: ForgeRequest[]; server: Server }> {
  const requests: ForgeRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      });
      const status = answers.shift() ?? 201;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

function tokenFile(ev: Evidence, token = 'forge-secret-token'): string {
  const file = join(ev.dir, 'forge-token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

function profileOf(ev: Evidence, forge: HubProfile['forge']): HubProfile {
  return { ...hubOver(ev.dir, ev.store).profile, forge };
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function link(ev: Evidence, args: string[]): Promise<CliResult> {
  return runCli(['--data-dir', ev.store.dataDir, 'change', 'link', '--change', CHANGE_ID, ...args]);
}

test("GitHub and GitLab requests have each forge's own shape; the description is cut to 140 characters", () => {
  const status = { state: 'failure' as const, description: 'x'.repeat(200) };
  const github = forgeRequest(
    'https://api.github.com/',
    { kind: 'github', project: 'acme/widgets', sha: SHA },
    status,
    'tok',
  );
  assert.equal(github.url, `https://api.github.com/repos/acme/widgets/statuses/${SHA}`);
  assert.equal(github.headers.authorization, 'Bearer tok');
  assert.deepEqual(JSON.parse(github.body), {
    state: 'failure',
    context: 'agentscm/qualification',
    description: 'x'.repeat(140),
  });
  const gitlab = forgeRequest(
    'https://gitlab.example/api/v4',
    { kind: 'gitlab', project: 'platform/tools/widgets', sha: SHA },
    status,
    'tok',
  );
  assert.equal(gitlab.url, `https://gitlab.example/api/v4/projects/platform%2Ftools%2Fwidgets/statuses/${SHA}`);
  assert.equal(gitlab.headers['private-token'], 'tok');
  assert.equal(gitlab.headers.authorization, undefined);
  assert.deepEqual(JSON.parse(gitlab.body), {
    state: 'failed',
    name: 'agentscm/qualification',
    description: 'x'.repeat(140),
  });
});

test("change link: records, replaces and removes a Change's link; a bad project or SHA and an unknown Change change nothing", async (t) => {
  const ev = makeEvidence(t);
  const badSha = await link(ev, ['--forge', 'github', '--project', 'acme/widgets', '--sha', SHA.toUpperCase()]);
  assert.equal(badSha.code, 2, badSha.stderr);
  assert.match(badSha.stderr, /^error\[FORGE_LINK_INVALID\]/);
  const badProject = await link(ev, ['--forge', 'github', '--project', 'acme/tools/widgets', '--sha', SHA]);
  assert.match(badProject.stderr, /^error\[FORGE_LINK_INVALID\]/);
  const unknown = await runCli([
    '--data-dir',
    ev.store.dataDir,
    'change',
    'link',
    '--change',
    'no-such-change',
    '--forge',
    'github',
    '--project',
    'acme/widgets',
    '--sha',
    SHA,
  ]);
  assert.match(unknown.stderr, /^error\[CHANGE_NOT_FOUND\]/);
  const missing = await link(ev, ['--forge', 'github']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^error\[USAGE\]/);
  assert.equal(existsSync(forgeLinksPath(ev.store)), false, 'a refused link creates nothing');

  const first = await link(ev, ['--forge', 'github', '--project', 'acme/widgets', '--sha', SHA, '--json']);
  assert.equal(first.code, 0, first.stderr);
  assert.equal((JSON.parse(first.stdout) as { sha: string }).sha, SHA);
  const other = 'a'.repeat(40);
  const again = await link(ev, ['--forge', 'gitlab', '--project', '4242', '--sha', other]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(
    listForgeLinks(ev.store, ev.store.repository).map((l) => [l.change_id, l.forge, l.project, l.sha]),
    [[CHANGE_ID, 'gitlab', '4242', other]],
  );
  const removed = await link(ev, ['--remove', '--json']);
  assert.deepEqual(JSON.parse(removed.stdout), { change_id: CHANGE_ID, removed: true });
  assert.deepEqual(listForgeLinks(ev.store, ev.store.repository), []);
});

test(
  'the hub publishes pending, then success after a passing import, on the linked GitHub commit with the forge token',
  { timeout: 60_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const forge = await fakeForge(t);
    const linked = await link(ev, ['--forge', 'github', '--project', 'acme/widgets', '--sha', SHA]);
    assert.equal(linked.code, 0, linked.stderr);
    const log: string[] = [];
    const hub = await startHub(
      {
        host: '127.0.0.1',
        port: 0,
        profiles: [profileOf(ev, { kind: 'github', base_url: forge.url, token_file: tokenFile(ev) })],
      },
      { accessLog: (line) => log.push(line), forge: { intervalMs: 60_000, debounceMs: 10 } },
    );
    t.after(() => hub.close());

    await until('the first status', () => forge.requests.length >= 1);
    const first = forge.requests[0];
    assert.equal(first?.method, 'POST');
    assert.equal(first?.path, `/repos/acme/widgets/statuses/${SHA}`);
    assert.equal(first?.headers.authorization, 'Bearer forge-secret-token');
    assert.equal(first?.body.state, 'pending');
    assert.equal(first?.body.context, 'agentscm/qualification');
    assert.match(String(first?.body.description), /task_pending/);

    // The agent's own request through the hub makes the publisher look again; nothing changed, so
    // nothing is sent twice.
    const grant = grantFor({ store: ev.store, dir: ev.dir } as Parameters<typeof grantFor>[0], 'carol', 'c1');
    resultOf(
      await postTask(hub.url, grant.token, 'qualification', null, {
        change_id: CHANGE_ID,
        context_digest: ev.store.contextDigest,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(forge.requests.length, 1);

    // A passing transfer imported through the hub's upload route → success.
    const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
    const uploaded = await fetch(
      `${hub.url}/v1/hub/workspace/repositories/${REPOSITORY_ID}/profiles/${PROFILE}/agent-tasks/collector-upload`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${readFileSync(ev.tokenFile, 'utf8').trim()}`,
          'content-type': 'application/octet-stream',
        },
        body: envelope,
      },
    );
    assert.equal(uploaded.status, 200, await uploaded.text());
    await until('the success status', () => forge.requests.some((r) => r.body.state === 'success'));
    const success = forge.requests.find((r) => r.body.state === 'success');
    assert.match(String(success?.body.description), /^qualified: revision [0-9a-f]{12}, receipt [0-9a-f]{12}$/);
    assert.ok(log.some((line) => line.includes('"event":"forge_status"') && line.includes('"result":"published"')));
    assert.ok(
      log.every((line) => !line.includes('forge-secret-token')),
      'the forge token is never logged',
    );
  },
);

test(
  'a failed record publishes failure on GitLab; a failing forge is retried with backoff and never changes task state',
  { timeout: 60_000 },
  async (t) => {
    const ev = makeEvidence(t);
    const forge = await fakeForge(t, [500, 502]);
    assert.equal((await link(ev, ['--forge', 'gitlab', '--project', 'platform/widgets', '--sha', SHA])).code, 0);
    const log: string[] = [];
    const hub = await startHub(
      {
        host: '127.0.0.1',
        port: 0,
        profiles: [
          profileOf(ev, { kind: 'gitlab', base_url: `${forge.url}/api/v4`, token_file: tokenFile(ev, 'glpat-1') }),
        ],
      },
      {
        accessLog: (line) => log.push(line),
        forge: { intervalMs: 60_000, debounceMs: 10, retryBaseMs: 50, retryMaxMs: 200 },
      },
    );
    t.after(() => hub.close());
    await until('the pending status after two failures', () => forge.requests.length >= 3);
    assert.deepEqual(
      forge.requests.slice(0, 3).map((r) => [r.path, r.headers['private-token'], r.body.state, r.body.name]),
      Array.from({ length: 3 }, () => [
        `/api/v4/projects/platform%2Fwidgets/statuses/${SHA}`,
        'glpat-1',
        'pending',
        'agentscm/qualification',
      ]),
    );
    const failures = log
      .filter((line) => line.includes('"result":"failed"'))
      .map((line) => JSON.parse(line) as { error: string; attempt: number; retry_in_ms: number });
    assert.deepEqual(
      failures.map((f) => [f.error, f.attempt, f.retry_in_ms]),
      [
        ['http_500', 1, 50],
        ['http_502', 2, 100],
      ],
    );

    const parts = transferParts(claim(ev));
    parts.record = { ...parts.record, outcome: 'failed', exit_code: 1 };
    const imported = importEnvelope(ev, envelopeOf(ev.key, parts));
    assert.equal(imported.outcome, 'failed');
    // The import ran in this process, not through the hub: the next pass (poked by any request) sees it.
    const grant = grantFor({ store: ev.store, dir: ev.dir } as Parameters<typeof grantFor>[0], 'carol', 'c1');
    resultOf(await postTask(hub.url, grant.token, 'capabilities', null));
    await until('the failure status', () => forge.requests.some((r) => r.body.state === 'failed'));
    assert.match(
      String(forge.requests.find((r) => r.body.state === 'failed')?.body.description),
      /collector_not_passed/,
    );

    // The forge goes away: task operations over the hub still answer, and the failure is only logged.
    await new Promise<void>((resolve) => {
      forge.server.close(() => resolve());
      forge.server.closeAllConnections();
    });
    const before = log.length;
    const answer = await postTask(hub.url, grant.token, 'qualification', null, {
      change_id: CHANGE_ID,
      context_digest: ev.store.contextDigest,
    });
    assert.equal(answer.status, 200);
    assert.equal((resultOf(answer) as { qualified: boolean }).qualified, false);
    assert.ok(log.length > before);
  },
);

test('the forge section is checked at startup: token file absolute, private and holding one token; base URL without credentials', (t) => {
  const ev = makeEvidence(t);
  const good = tokenFile(ev);
  const entry = {
    repository_id: REPOSITORY_ID,
    profile_id: PROFILE,
    native_repository: ev.store.repository,
    data_dir: ev.store.dataDir,
    target: 'main',
    requirement_digest: 'a'.repeat(64),
    publish_forge_status: true,
  };
  const parse = (forge: Record<string, unknown>): string => {
    try {
      parseHubConfig(Buffer.from(JSON.stringify({ version: 1, agent_task_profiles: [{ ...entry, forge }] })));
      return 'ok';
    } catch (error) {
      return (error as { code: string }).code;
    }
  };
  assert.equal(parse({ kind: 'github', base_url: 'https://api.github.com', token_file: good }), 'ok');
  assert.equal(
    parse({ kind: 'github', base_url: 'https://api.github.com', token_file: 'forge-token' }),
    'HUB_CONFIG_FORGE_INVALID',
  );
  assert.equal(
    parse({ kind: 'github', base_url: 'https://user:pw@api.github.com', token_file: good }),
    'HUB_CONFIG_FORGE_INVALID',
  );
  assert.equal(
    parse({ kind: 'github', base_url: 'https://api.github.com?x=1', token_file: good }),
    'HUB_CONFIG_FORGE_INVALID',
  );
  assert.equal(parse({ kind: 'github', base_url: 'ftp://api.github.com', token_file: good }), 'SCHEMA_TYPE');
  assert.equal(
    parse({ kind: 'github', base_url: 'https://api.github.com', token_file: join(ev.dir, 'absent') }),
    'HUB_CONFIG_FORGE_INVALID',
  );
  chmodSync(good, 0o644);
  assert.equal(
    parse({ kind: 'github', base_url: 'https://api.github.com', token_file: good }),
    'HUB_CONFIG_FORGE_INVALID',
  );
  chmodSync(good, 0o600);
  writeFileSync(good, 'two words\n');
  assert.equal(
    parse({ kind: 'github', base_url: 'https://api.github.com', token_file: good }),
    'HUB_CONFIG_FORGE_INVALID',
  );
});
