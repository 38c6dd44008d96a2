/**
 * A busy store never freezes the hub (issue #25 item 2; docs/hub.md "A busy store"): a real local
 * import paused inside its writer reservation holds the authority's write lock while 8
 * MCP tool calls (the official SDK client) and 8 collector uploads arrive at a real `hub serve`
 * process. Health and a dashboard read answer in under 200 ms throughout, because no route runs
 * store work on the main thread; every call that needs the lock answers STORE_BUSY promptly (HTTP
 * 503 with Retry-After, or the MCP tool error STORE_BUSY) instead of waiting 5 s in a queue; and
 * once the writer commits the same calls are served.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import Database from 'better-sqlite3';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { asParsed } from '../../src/contracts/json/strict-json.js';
import { toolNameOf } from '../../src/hub/operations.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { nativePaths } from '../../src/native/store.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { ALICE, claim, envelopeOf, makeEvidence, transferParts } from '../support/evidence.js';
import {
  grantFor,
  httpCall,
  hubOver,
  postTask,
  REPOSITORY_ID,
  resultOf,
  spawnHubServe,
  tasksPath,
  type HttpAnswer,
  type HubStore,
} from '../support/hub.js';
import { claimRequest, taskRef } from '../support/task-requests.js';
import { CHANGE_ID, DEFAULT_STEPS, PROFILE } from '../support/tasks.js';

/** The bound every health and dashboard answer is held to while the store is busy. */
const FAST_MS = 200;

/** The evidence store (with the `lint` step the MCP calls claim) as a hub profile, and a collected envelope not yet imported. */
function evidenceHub(t: TestContext): { hub: HubStore; envelope: Buffer; tokenFile: string } {
  const ev = makeEvidence(t, DEFAULT_STEPS);
  const envelope = envelopeOf(ev.key, transferParts(claim(ev)));
  return {
    hub: hubOver(ev.dir, ev.store),
    envelope,
    tokenFile: ev.tokenFile,
  };
}

/**
 * A local import of `envelope` (what `agentscm agent-task upload` runs) paused at
 * task:in-native-reservation — inside the authority's writer reservation, so holding its write
 * lock — until `resume` exists; resolves to its exit once it is paused.
 */
async function pausedImport(
  hub: HubStore,
  envelope: Buffer,
  tokenFile: string,
  resume: string,
): Promise<{ readonly done: Promise<number | null> }> {
  const file = join(hub.dir, 'held-transfer.bin');
  writeFileSync(file, envelope);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join('test', 'evidence', 'import-child.ts'), hub.store.dataDir, file, tokenFile],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        AGENTSCM_TEST_PAUSE_AT: 'task:in-native-reservation',
        AGENTSCM_TEST_PAUSE_RESUME_FILE: resume,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-paused:task:in-native-reservation')) resolve();
    });
    void done.then((code) => reject(new Error(`the import ended (${String(code)}) before its pause: ${stderr}`)));
  });
  // Wrapped: an async function would adopt the promise itself and wait for the import to end.
  return { done };
}

/** True while another connection holds the authority's write lock (a BEGIN IMMEDIATE that does not wait fails). */
function lockHeld(hub: HubStore): boolean {
  const db = new Database(nativePaths(hub.store.dataDir).db);
  try {
    db.pragma('busy_timeout = 0');
    db.prepare('BEGIN IMMEDIATE').run();
    db.prepare('ROLLBACK').run();
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw error;
  } finally {
    db.close();
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

function toolCode(result: CallToolResult): string | null {
  return result.isError === true ? (result.structuredContent as { error: { code: string } }).error.code : null;
}

test(
  'a writer holding the authority lock: health and a dashboard read answer in under 200 ms while 8 MCP calls and 8 uploads answer STORE_BUSY promptly',
  { timeout: 240_000 },
  async (t) => {
    const { hub, envelope, tokenFile } = evidenceHub(t);
    const agentToken = readTokenFile(tokenFile);
    const reader = grantFor(hub, 'olivia', 'dashboard', 'reader');
    const { url, stderr } = await spawnHubServe(t, hub);
    const dashboard = `/v1/hub/ui-api/repositories/${REPOSITORY_ID}/profiles/${PROFILE}/targets`;
    const subject = { change_id: CHANGE_ID, context_digest: hub.store.contextDigest };
    const lint = taskRef(
      resultOf(await postTask(url, agentToken, 'requirements', null, subject)) as unknown as JsonObject,
      'lint',
    );

    // The MCP clients connect (initialize) before the writer takes the lock.
    const clients = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const client = new Client({ name: 'store-busy-test', version: '1' });
        await client.connect(
          new StreamableHTTPClientTransport(
            new URL(`/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=${PROFILE}`, url),
            { requestInit: { headers: { authorization: `Bearer ${agentToken}` } } },
          ),
        );
        t.after(() => client.close());
        return client;
      }),
    );
    const claimOf = (i: number): Record<string, unknown> => ({
      ...(asParsed(claimRequest(ALICE, lint, `busy-claim-${i}`, `busy-exec-${i}`)) as unknown as Record<
        string,
        unknown
      >),
      subject,
    });
    const upload = (): Promise<HttpAnswer> =>
      httpCall(url, 'POST', `${tasksPath()}/collector-upload`, {
        token: agentToken,
        body: envelope,
        headers: { 'content-type': 'application/octet-stream' },
      });

    const resume = join(hub.dir, 'resume-import');
    const writer = await pausedImport(hub, envelope, tokenFile, resume);
    assert.equal(lockHeld(hub), true, 'the paused import holds the authority write lock');

    const burstStarted = performance.now();
    const settled: number[] = [];
    const mark = <T>(promise: Promise<T>): Promise<T> =>
      promise.finally(() => settled.push(performance.now() - burstStarted));
    const calls = clients.map((client, i) =>
      mark(client.callTool({ name: toolNameOf('claim'), arguments: claimOf(i) })),
    );
    const uploads = Array.from({ length: 8 }, () => mark(upload()));
    let all = false;
    const burst = Promise.all([Promise.all(calls), Promise.all(uploads)]).finally(() => (all = true));

    // Health and the dashboard, one after the other, every 50 ms, for as long as the burst lasts
    // (from once this process has sent the burst: its own sending is not the hub's latency).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const health: number[] = [];
    const reads: number[] = [];
    while (!all || health.length < 5) {
      const ping = await timed(() => httpCall(url, 'GET', '/v1/hub/health'));
      assert.equal(ping.value.status, 200, ping.value.text);
      health.push(ping.ms);
      const read = await timed(() => httpCall(url, 'GET', dashboard, { token: reader.token }));
      assert.equal(read.value.status, 200, read.value.text);
      reads.push(read.ms);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [toolAnswers, uploadAnswers] = await burst;
    assert.equal(lockHeld(hub), true, 'the writer still held the lock when the burst ended');
    assert.ok(
      Math.max(...health) < FAST_MS,
      `health took ${Math.round(Math.max(...health))} ms at worst: ${health.map(Math.round).join(', ')}`,
    );
    assert.ok(
      Math.max(...reads) < FAST_MS,
      `the dashboard took ${Math.round(Math.max(...reads))} ms at worst: ${reads.map(Math.round).join(', ')}`,
    );

    // Every call that needed the lock was refused promptly with STORE_BUSY, none waited 5 s in a queue.
    for (const answer of toolAnswers)
      assert.equal(toolCode(answer), 'STORE_BUSY', JSON.stringify(answer.structuredContent));
    for (const answer of uploadAnswers) {
      assert.equal(answer.status, 503, answer.text);
      assert.equal((answer.json.error as { code: string }).code, 'STORE_BUSY');
      assert.equal(answer.headers['retry-after'], '1');
    }
    assert.ok(Math.max(...settled) < 6_000, `the last busy answer came after ${Math.round(Math.max(...settled))} ms`);

    // The writer commits; the same calls are served (the upload is now the exact retry of its import).
    writeFileSync(resume, '');
    assert.equal(await writer.done, 0);
    const again = await upload();
    assert.equal(again.status, 200, again.text);
    const first = clients[0];
    assert.ok(first !== undefined);
    const claimed = await first.callTool({ name: toolNameOf('claim'), arguments: claimOf(100) });
    assert.equal(toolCode(claimed), null, JSON.stringify(claimed.structuredContent));
    assert.doesNotMatch(stderr(), /pause-expired/);
  },
);
