/**
 * `agentscm hub serve` as an operator runs it (docs/hub.md "Running the hub"): a child process
 * of the CLI that prints the bound address as its first stdout line, logs one JSON line per
 * request on stderr without tokens or bodies, and on SIGTERM lets an in-flight request finish
 * before exiting 0; a bad config is refused with its code before anything listens.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { grantFor, httpCall, hubStore, spawnHubServe, tasksPath } from '../support/hub.js';

const PROFILE = {
  repository_id: 'acme/widgets',
  profile_id: 'default',
  native_repository: '0123456789abcdef0123456789abcdef',
  data_dir: '/srv/agentscm/data',
  target: 'main',
  requirement_digest: 'a'.repeat(64),
};

test('hub serve: first line the address, access log on stderr, SIGTERM finishes the in-flight request and exits 0', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const { child, firstLine, url, exited, stdout, stderr } = await spawnHubServe(t, hub);
  const { listen } = JSON.parse(firstLine) as { listen: string };
  assert.match(listen, /^127\.0\.0\.1:[1-9][0-9]*$/);
  assert.equal(url, `http://${listen}`);
  assert.equal((await httpCall(url, 'GET', '/v1/hub/health')).status, 200);

  // A request in flight: headers and half its body sent, then SIGTERM, then the rest.
  const body = '{"operation":"capabilities","input":null}';
  const [host, port] = [listen.slice(0, listen.lastIndexOf(':')), Number(listen.slice(listen.lastIndexOf(':') + 1))];
  const socket = connect(port, host);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const answer = new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
  socket.write(
    `POST ${tasksPath()} HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.write(body.slice(10));
  const response = await answer;
  assert.match(response, /^HTTP\/1\.1 200 /);
  assert.match(response, /"capability":"agentscm\.agent-workflow-tasks\/v1"/);
  assert.equal(await exited, 0, stderr());
  assert.equal(stdout(), `${firstLine}\n`);
  const lines = stderr().trim().split('\n');
  assert.equal(lines.length, 2, stderr());
  for (const line of lines) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.equal(entry.status, 200);
    assert.ok(!line.includes(alice.token) && !line.includes('capabilities'), line);
  }
});

test('hub serve refuses a bad config with its code and exit status before listening', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'hub.json');
  writeFileSync(file, JSON.stringify({ version: 1, agent_task_profiles: [{ ...PROFILE, data_dir: 'relative' }] }));
  const relative = await runCli(['hub', 'serve', '--config', file, '--json']);
  assert.equal(relative.code, 2, relative.stderr);
  assert.equal(jsonOf<{ error: { code: string } }>(relative).error.code, 'HUB_CONFIG_DATA_DIR_RELATIVE');
  writeFileSync(
    file,
    JSON.stringify({ version: 1, agent_task_profiles: [{ ...PROFILE, data_dir: join(dir, 'missing') }] }),
  );
  const missing = await runCli(['hub', 'serve', '--config', file]);
  assert.equal(missing.code, 4, missing.stderr);
  assert.match(missing.stderr, /^error\[HUB_PROFILE_UNAVAILABLE\]/);
  assert.equal(missing.stdout, '');
  writeFileSync(
    file,
    JSON.stringify({ version: 1, agent_task_profiles: [{ ...PROFILE, publish_forge_status: true }] }),
  );
  const forge = await runCli(['hub', 'serve', '--config', file]);
  assert.equal(forge.code, 2);
  assert.match(forge.stderr, /^error\[HUB_CONFIG_FORGE_INVALID\]: .*names no forge/);
});
