/**
 * `agentscm doctor --hub-config FILE`: the config decoded as `hub serve` decodes it, then the hub
 * probed on its fixed loopback address — a live hub (started in this process on a real port)
 * answers its health route; each profile's store and pinned requirement are checked; a closed port is HUB_NOT_LISTENING; a server that answers otherwise
 * HUB_UNHEALTHY; port 0 cannot be probed.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';

import { hubStore, startTestHub, writeConfigFile } from '../support/hub.js';
import { doctor, findingOf, findingsOf, testHome } from './fixture.js';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('an invalid hub config is HUB_CONFIG_INVALID naming the refusal, and nothing is probed', async (t) => {
  const hub = hubStore(t);
  const file = writeConfigFile(hub, { surprise: true });
  const { report } = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', file]);
  const invalid = findingOf(report, 'hub.config', 'HUB_CONFIG_INVALID');
  assert.equal(invalid.status, 'fail');
  assert.match(invalid.message, /SCHEMA_UNKNOWN_FIELD/);
  assert.match(invalid.fix ?? '', /`agentscm hub serve` refuses it the same way/);
  assert.deepEqual(findingsOf(report, 'hub.listen'), []);

  const broken = join(hub.dir, 'broken.json');
  writeFileSync(broken, '{"version": 1,');
  const second = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', broken]);
  assert.match(findingOf(second.report, 'hub.config', 'HUB_CONFIG_INVALID').message, /JSON_SYNTAX/);
});

test('a hub that is not listening is HUB_NOT_LISTENING with the serve fix', async (t) => {
  const hub = hubStore(t);
  const port = await closedPort();
  const file = writeConfigFile(hub, { listen: `127.0.0.1:${port}` });
  const { report } = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', file]);
  findingOf(report, 'hub.config', 'OK');
  const down = findingOf(report, 'hub.listen', 'HUB_NOT_LISTENING');
  assert.equal(down.status, 'fail');
  assert.match(down.message, new RegExp(`nothing listens on 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
  assert.equal(down.fix, `start the hub: agentscm hub serve --config ${file}`);
});

test('a live hub passes config, profile, listen and health', async (t) => {
  const hub = hubStore(t);
  const running = await startTestHub(t, hub);
  const file = writeConfigFile(hub, { listen: running.address });
  const { report } = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', file]);
  findingOf(report, 'hub.config', 'OK');
  findingOf(report, 'hub.profile', 'OK');
  findingOf(report, 'hub.listen', 'OK');
  assert.match(
    findingOf(report, 'hub.health', 'OK').message,
    new RegExp(`GET ${running.url}/v1/hub/health answers \\{"status":"ok"\\}`),
  );
  assert.ok(
    running.log.some((line) => line.includes('health')),
    running.log.join('\n'),
  );
});

test('a server on the hub port that does not answer health is HUB_UNHEALTHY; port 0 cannot be probed', async (t) => {
  const hub = hubStore(t);
  const server = createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"STORE_BUSY"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const file = writeConfigFile(hub, { listen: `127.0.0.1:${port}` });
  const { report } = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', file]);
  findingOf(report, 'hub.listen', 'OK');
  const sick = findingOf(report, 'hub.health', 'HUB_UNHEALTHY');
  assert.match(sick.message, /answered HTTP 503: "\{\\"error\\":\{\\"code\\":\\"STORE_BUSY\\"\}\}"/);

  const dynamic = writeConfigFile(hub, { listen: '127.0.0.1:0' });
  const second = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', dynamic]);
  assert.equal(findingOf(second.report, 'hub.listen', 'HUB_PORT_DYNAMIC').status, 'skip');
});

test('a profile whose target requires another requirement is HUB_REQUIREMENT_CHANGED; one without a store HUB_PROFILE_UNAVAILABLE', async (t) => {
  const hub = hubStore(t);
  const changed = writeConfigFile({ ...hub, profile: { ...hub.profile, requirementDigest: 'c'.repeat(64) } });
  const { report } = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', changed]);
  const moved = findingOf(report, 'hub.profile', 'HUB_REQUIREMENT_CHANGED');
  assert.match(
    moved.message,
    new RegExp(`pins requirement ${'c'.repeat(64)}, but the target requires ${hub.profile.requirementDigest}`),
  );
  assert.match(moved.fix ?? '', /update requirement_digest in the hub config/);

  const gone = writeConfigFile({ ...hub, profile: { ...hub.profile, dataDir: join(hub.dir, 'no-store') } });
  const second = await doctor(testHome(t), ['--data-dir', hub.store.dataDir, '--hub-config', gone]);
  assert.match(
    findingOf(second.report, 'hub.profile', 'HUB_PROFILE_UNAVAILABLE').message,
    /no native store; the hub does not start/,
  );
});
