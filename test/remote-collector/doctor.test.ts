/**
 * `agentscm doctor --endpoint URL` on a collector host (docs/doctor.md "collector host"): a real
 * hub on loopback over a real store, the live engine, a real key state directory, and no store on
 * the doctor's side. All pass for a live token, a key and a present image; each broken part is
 * its own failing finding with its code, in the JSON and in the human lines, and exit 1.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createSigningKey } from '../../src/collector/key-store.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { requireEngine } from '../support/collector.js';
import { tasksPath } from '../support/hub.js';
import { DOCKER_SOCKET, IMAGE } from '../support/runtime.js';
import { remoteSetup } from './support.js';

interface Report {
  ok: boolean;
  data_dir: string;
  findings: { check: string; status: string; code: string; message: string }[];
}

test('doctor --endpoint on a collector host: endpoint, token, key, engine and image', async (t) => {
  await requireEngine();
  const setup = await remoteSetup(t);
  const dir = tempDir(t, 'agentscm-doctor-remote-');
  const stateDir = join(dir, 'state');
  createSigningKey(stateDir);
  const endpoint = `${setup.hubUrl}${tasksPath()}`;
  const doctor = (extra: readonly string[], endpointUrl = endpoint) =>
    runCli(
      [
        '--data-dir',
        join(dir, 'no-store'),
        'doctor',
        '--endpoint',
        endpointUrl,
        '--state-dir',
        stateDir,
        '--docker-socket',
        DOCKER_SOCKET,
        ...extra,
      ],
      { cwd: dir },
    );
  const codes = (report: Report): [string, string][] => report.findings.map((f) => [f.check, f.code]);

  const healthy = await doctor(['--token-file', setup.ev.tokenFile, '--image', IMAGE, '--json']);
  assert.equal(healthy.code, 0, healthy.stderr);
  const report = jsonOf<Report>(healthy);
  assert.equal(report.ok, true);
  assert.deepEqual(codes(report), [
    ['endpoint.health', 'OK'],
    ['endpoint.token', 'OK'],
    ['keys.state-dir', 'OK'],
    ['runtime', 'OK'],
    ['runtime.image', 'OK'],
  ]);
  assert.ok(!healthy.stdout.includes(setup.token), 'the token is never printed');

  // A token the hub does not know, an image the engine does not have: two failures, exit 1.
  const unknown = join(dir, 'unknown.token');
  writeFileSync(unknown, `agentscm_${'A'.repeat(43)}\n`, { mode: 0o600 });
  const broken = await doctor(['--token-file', unknown, '--image', 'local/absent-image:0']);
  assert.equal(broken.code, 1, broken.stderr);
  assert.match(broken.stdout, /✗ endpoint\.token: the hub refused the token of .*unknown\.token.*; fix: /);
  assert.match(broken.stdout, /✗ runtime\.image: image local\/absent-image:0 cannot be used/);
  assert.match(broken.stderr, /DOCTOR_FAILED/);
  const brokenJson = jsonOf<Report>(
    await doctor(['--token-file', unknown, '--image', 'local/absent-image:0', '--json']),
  );
  assert.deepEqual(
    brokenJson.findings.filter((f) => f.status === 'fail').map((f) => f.code),
    ['ENDPOINT_TOKEN_REFUSED', 'IMAGE_MISSING'],
  );

  // Nothing listens there: the endpoint fails and the token is not checked.
  const nowhere = await doctor(['--token-file', setup.ev.tokenFile, '--json'], 'http://127.0.0.1:9/v1/hub/x');
  assert.equal(nowhere.code, 1);
  assert.deepEqual(codes(jsonOf<Report>(nowhere)).slice(0, 2), [
    ['endpoint.health', 'ENDPOINT_UNREACHABLE'],
    ['endpoint.token', 'ENDPOINT_UNREACHABLE'],
  ]);
});
