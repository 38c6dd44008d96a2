/**
 * A healthy machine end to end: a store with a journal, a collector key enrolled and current, a
 * collector profile pinning the live engine's identity and image, a live grant whose token file a
 * task-stop hook of this agentscm names, and a live hub on a fixed loopback port. `agentscm
 * doctor` passes every check it makes (nothing warns or fails), exits 0, and changes no file of
 * the data directory, the state directory or the home directory.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { installStop } from '../../src/hooks/install-stop.js';
import { startHub } from '../../src/hub/server.js';
import { withStore } from '../../src/tasks/store.js';
import { showRequirement } from '../../src/workflows/requirement.js';
import { DEV_BIN } from '../helpers/cli.js';
import { DOCKER_EXE, IMAGE, makeCollection } from '../support/evidence-collect.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';
import { doctor, findingOf, fingerprint, problems, testHome } from './fixture.js';

test('a healthy store, key, grant, runtime, hook and hub: every check passes and doctor exits 0', async (t) => {
  const c = await makeCollection(t);
  const home = testHome(t);
  const requirement = withStore(c.dataDir, 'read', (s) => showRequirement(s, { target: 'main' }));
  const profile = {
    repositoryId: 'acme/widgets',
    profileId: PROFILE,
    nativeRepository: c.store.repository,
    dataDir: c.dataDir,
    target: 'main',
    requirementDigest: requirement.requirement_digest,
  };
  const hub = await startHub({ host: '127.0.0.1', port: 0, profiles: [profile] }, { accessLog: () => undefined });
  t.after(() => hub.close());
  const config = join(c.dir, 'hub.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      listen: hub.address,
      agent_task_profiles: [
        {
          repository_id: 'acme/widgets',
          profile_id: PROFILE,
          native_repository: c.store.repository,
          data_dir: c.dataDir,
          target: 'main',
          requirement_digest: requirement.requirement_digest,
        },
      ],
    }),
  );
  installStop({
    client: 'claude-code',
    mode: 'task-stop',
    scope: 'user',
    change: CHANGE_ID,
    workspace: join(c.dir, 'ws'),
    dataDir: c.dataDir,
    repo: join(c.dir, 'ws'),
    executable: DEV_BIN,
    task: { endpoint: hub.url, repository: 'acme/widgets', profile: PROFILE, tokenFile: c.tokenFile },
    remove: false,
    dryRun: false,
    home,
  });
  const before = { data: fingerprint(c.dir), home: fingerprint(home) };
  const { result, report } = await doctor(home, [
    '--data-dir',
    c.dataDir,
    '--state-dir',
    c.stateDir,
    '--docker',
    DOCKER_EXE,
    '--hub-config',
    config,
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(report.ok, true);
  assert.deepEqual(problems(report), []);
  const skipped = report.findings.filter((f) => f.status === 'skip');
  assert.deepEqual(skipped, [], 'a fully set-up machine leaves nothing unchecked');
  for (const check of [
    'node',
    'store',
    'store.journal',
    'store.permissions',
    'keys.registrations',
    'keys.state-dir',
    'grants',
    'grants.token-file',
    'requirements',
    'runtime',
    'runtime.image',
    'runtime.identity',
    'hooks',
    'hub.config',
    'hub.profile',
    'hub.listen',
    'hub.health',
  ]) {
    findingOf(report, check, 'OK');
  }
  assert.match(
    findingOf(report, 'runtime.image', 'OK').message,
    new RegExp(`^image ${IMAGE} \\(sha256:[0-9a-f]{64}\\) is present, pinned by 1 collector profile$`),
  );
  assert.match(
    findingOf(report, 'keys.state-dir', 'OK').message,
    new RegExp(`registration ${c.enrollment.registration_id} \\(epoch 1\\) is current$`),
  );
  assert.deepEqual(report.counts, { pass: report.findings.length, warn: 0, fail: 0, skip: 0 });
  assert.deepEqual({ data: fingerprint(c.dir), home: fingerprint(home) }, before);
});
