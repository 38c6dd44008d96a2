/**
 * A collector on another host, on this machine: the hub (`hub serve`, a real process) in one
 * network namespace, the collector (`agent-task collect --endpoint`, a real process with no store)
 * in another, joined only by a veth pair with addresses private to the two namespaces, made and
 * removed by the test. The full path: claim → fetch by digest → run on the live engine → upload →
 * collector_finalize counting the imported transfer for the receipt. Skipped with a message only where namespaces cannot be
 * made (not root, no `ip`).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { callWithTokenFile } from '../../src/tasks/grant-guard.js';
import { openStore } from '../../src/tasks/store.js';
import { cliEntryArgv, REPO_ROOT } from '../helpers/cli.js';
import { requireEngine } from '../support/collector.js';
import { ACTOR, collectArgs, makeCollection } from '../support/evidence-collect.js';
import { hubOver, tasksPath, writeConfigFile } from '../support/hub.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

/** Two namespaces and a veth pair between them (removed after the test); null where they cannot be made. */
function namespaces(t: TestContext): { hub: string; collector: string; hubAddress: string } | null {
  const tag = `${process.pid % 10000}${Math.floor(Math.random() * 100)}`;
  const hub = `agscm-h${tag}`;
  const collector = `agscm-c${tag}`;
  const octet = 1 + (process.pid % 250);
  try {
    ip('netns', 'add', hub);
  } catch (error) {
    t.skip(`network namespaces cannot be made here: ${(error as Error).message.split('\n')[0] ?? ''}`);
    return null;
  }
  t.after(() => {
    for (const ns of [hub, collector])
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
  });
  ip('netns', 'add', collector);
  ip('link', 'add', `vh${tag}`, 'type', 'veth', 'peer', 'name', `vc${tag}`);
  ip('link', 'set', `vh${tag}`, 'netns', hub);
  ip('link', 'set', `vc${tag}`, 'netns', collector);
  const hubAddress = `10.213.${octet}.1`;
  ip('-n', hub, 'addr', 'add', `${hubAddress}/30`, 'dev', `vh${tag}`);
  ip('-n', collector, 'addr', 'add', `10.213.${octet}.2/30`, 'dev', `vc${tag}`);
  for (const [ns, dev] of [
    [hub, `vh${tag}`],
    [collector, `vc${tag}`],
  ] as const) {
    ip('-n', ns, 'link', 'set', dev, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  return { hub, collector, hubAddress };
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('ip', args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('hub and collector in separate network namespaces: claim, fetch, run, upload, finalize', async (t) => {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    t.skip('network namespaces need root');
    return;
  }
  await requireEngine();
  const ns = namespaces(t);
  if (ns === null) return;
  const c = await makeCollection(t);
  const hubStore = hubOver(c.dir, c.store);
  const config = writeConfigFile(hubStore, { listen: `${ns.hubAddress}:0` });
  const hub = spawn(
    'ip',
    ['netns', 'exec', ns.hub, process.execPath, ...cliEntryArgv(), 'hub', 'serve', '--config', config, '--json'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.after(() => hub.kill('SIGKILL'));
  let hubErr = '';
  hub.stderr.on('data', (chunk: Buffer) => (hubErr += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    hub.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end >= 0) resolve((JSON.parse(out.slice(0, end)) as { url: string }).url);
    });
    hub.on('exit', (code) => reject(new Error(`hub exited ${String(code)}: ${hubErr}`)));
  });
  assert.ok(url.startsWith(`http://${ns.hubAddress}:`), url);

  const nowhere = join(c.dir, 'no-store-here');
  const collected = await run([
    'netns',
    'exec',
    ns.collector,
    process.execPath,
    ...cliEntryArgv(),
    '--data-dir',
    nowhere,
    ...collectArgs(c).slice(2),
    '--endpoint',
    `${url.replace(/\/$/, '')}${tasksPath()}`,
    '--json',
  ]);
  assert.equal(collected.code, 0, collected.stderr);
  const result = JSON.parse(collected.stdout) as { outcome: string; upload: { answer: { status: string } } };
  assert.equal(result.outcome, 'passed');
  assert.equal(result.upload.answer.status, 'imported');
  assert.equal(existsSync(nowhere), false);

  // The receipt of the subject, from the uploaded transfer (the hub is idle: the store is shared on disk).
  const store = openStore(c.dataDir, { mode: 'write' });
  try {
    const finalized = callWithTokenFile({
      store,
      tokenFile: c.tokenFile,
      operation: 'collector_finalize',
      input: Buffer.from(JSON.stringify({ version: 1, agent: ACTOR })),
      profile: PROFILE,
      target: 'main',
      subject: { change_id: CHANGE_ID, context_digest: c.store.contextDigest },
    }) as JsonObject;
    // The collected step's transfer is imported and counted; the default requirement's other command
    // step (unit) is what the receipt still waits for.
    assert.equal(finalized.status, 'incomplete', JSON.stringify(finalized));
    assert.match(JSON.stringify(finalized.reason), /\(step \\"unit\\"\) has no imported transfer/);
    assert.doesNotMatch(JSON.stringify(finalized.reason), /\\"lint\\"/);
  } finally {
    store.close();
  }
});
