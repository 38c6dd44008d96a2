/**
 * `agent-task collect --endpoint URL` on a host with no store (docs/collect.md "Collecting on
 * another host"): a real claim, a real hub on loopback over the store, the live engine; the
 * collector's --data-dir names nothing, so the descriptor is checked through the hub, the revision
 * fetched by digest into the state directory's object cache, the recipe run on it, and the signed
 * envelope uploaded to the hub, which imports it. Without --endpoint and without a store: a clear
 * refusal before anything runs.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { startHub } from '../../src/hub/server.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { requireEngine } from '../support/collector.js';
import { collectArgs, makeCollection } from '../support/evidence-collect.js';
import { hubOver, tasksPath } from '../support/hub.js';

interface CollectJson {
  ran: boolean;
  outcome: string;
  upload: { target: string; answer: { status: string } };
}

test('a collector with no store fetches the claimed revision from the hub, runs it and uploads', async (t) => {
  await requireEngine();
  const c = await makeCollection(t, {
    argv: ['sh', '-c', 'test -f /src/a.txt && test -f /src/skills/check/runner.json'],
  });
  const { profile } = hubOver(c.dir, c.store);
  const hub = await startHub({ host: '127.0.0.1', port: 0, profiles: [profile] }, { accessLog: () => undefined });
  t.after(() => hub.close());
  const nowhere = join(c.dir, 'no-store-here');
  const remoteArgs = ['--data-dir', nowhere, ...collectArgs(c).slice(2)];

  const missing = await runCli([...remoteArgs, '--json']);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stdout + missing.stderr, /REMOTE_STORE_MISSING/);
  const collections = join(c.stateDir, 'collections');
  assert.deepEqual(existsSync(collections) ? readdirSync(collections) : [], [], 'nothing was reserved');

  const run = await runCli([...remoteArgs, '--endpoint', `${hub.url}${tasksPath()}`, '--json'], {
    env: { AGENTSCM_PROGRESS: '1' },
  });
  assert.equal(run.code, 0, run.stderr);
  const result = jsonOf<CollectJson>(run);
  assert.equal(result.ran, true);
  assert.equal(result.outcome, 'passed');
  assert.equal(result.upload.target, 'endpoint');
  assert.equal(result.upload.answer.status, 'imported');
  assert.match(run.stderr, /fetched \d+ objects \(\d+ bytes in \d+ requests\) from the hub/);
  assert.equal(existsSync(nowhere), false, 'the collector made no store');
  assert.ok(readdirSync(join(c.stateDir, 'objects', 'blobs')).length > 0);
});
