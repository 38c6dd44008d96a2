/**
 * The hub's task worker (docs/hub.md "The task worker"): the agent-tasks route's grant and facade
 * steps run in one worker thread. A refusal crosses the thread boundary as the same error; a
 * worker that dies answers its requests INTERNAL and the next request gets a fresh worker; a test
 * pause point reached in the worker announces itself on stderr and resumes, while the main thread
 * keeps serving, and SIGTERM waits for the paused call.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { errorOfWire, wireErrorOf } from '../../src/hub/task-worker-protocol.js';
import {
  errorCode,
  grantFor,
  httpCall,
  hubStore,
  postTask,
  resultOf,
  spawnHubServe,
  startTestHub,
  subjectOf,
} from '../support/hub.js';
import { claimedOf, claimRequest, taskRef } from '../support/task-requests.js';

test('a refusal crosses the thread boundary as the same error: code, message, hint and details', () => {
  const error = new AgentscmError('TASK_STALE', 'task lint is stale', {
    hint: 'reconcile it first',
    details: { task_id: 'lint', fence: 3n },
  });
  const back = errorOfWire(structuredClone(wireErrorOf(error)));
  assert.ok(back instanceof AgentscmError);
  assert.deepEqual(
    [back.code, back.message, back.hint, back.details],
    [error.code, error.message, error.hint, error.details],
  );
});

test('a task worker that dies answers INTERNAL and the next request is served by a fresh one', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  // Fault injection: every worker thread exits when asked to call `next`.
  const running = await startTestHub(t, hub, { taskWorker: { exitOnOperation: 'next' } });
  assert.equal((await postTask(running.url, alice.token, 'capabilities', null)).status, 200);

  const died = await postTask(running.url, alice.token, 'next', null, subjectOf(hub));
  assert.equal(died.status, 500, died.text);
  assert.equal(errorCode(died), 'INTERNAL');
  assert.deepEqual(Object.keys(died.json.error as object).sort(), ['code', 'message']);
  const again = await postTask(running.url, alice.token, 'requirements', null, subjectOf(hub));
  assert.equal(again.status, 200, again.text);

  // Requests in flight when it dies: each is answered (200 before the fault, INTERNAL after), none hangs.
  const burst = await Promise.all([
    ...Array.from({ length: 8 }, () => postTask(running.url, alice.token, 'capabilities', null)),
    postTask(running.url, alice.token, 'next', null, subjectOf(hub)),
    ...Array.from({ length: 8 }, () => postTask(running.url, alice.token, 'capabilities', null)),
  ]);
  for (const answer of burst)
    assert.ok(answer.status === 200 || (answer.status === 500 && errorCode(answer) === 'INTERNAL'), answer.text);
  assert.equal(burst.filter((answer) => answer.status === 500).length >= 1, true);
  assert.equal((await postTask(running.url, alice.token, 'capabilities', null)).status, 200);
  const codes = running.log.map((line) => (JSON.parse(line) as { code: string | null }).code);
  assert.ok(codes.includes('INTERNAL'), codes.join(','));
});

test(
  'hub serve: a pause point in the task worker announces itself and resumes; the main thread serves meanwhile; SIGTERM waits for the call',
  { timeout: 120_000 },
  async (t) => {
    const hub = hubStore(t);
    const alice = grantFor(hub, 'alice', 'a1');
    const resume = join(hub.dir, 'resume');
    const { child, url, exited, stderr } = await spawnHubServe(t, hub, {
      env: {
        ...process.env,
        AGENTSCM_TEST_PAUSE_AT: 'task:in-native-reservation',
        AGENTSCM_TEST_PAUSE_RESUME_FILE: resume,
      },
    });
    const lint = taskRef(
      resultOf(await postTask(url, alice.token, 'requirements', null, subjectOf(hub))) as unknown as JsonObject,
      'lint',
    );

    const claim = postTask(
      url,
      alice.token,
      'claim',
      claimRequest(alice.actor, lint, 'r-claim', 'e-1'),
      subjectOf(hub),
    );
    const deadline = Date.now() + 60_000;
    while (!stderr().includes('agentscm-test-paused:task:in-native-reservation')) {
      if (Date.now() > deadline) throw new Error(`the claim did not pause: ${stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The worker is paused inside the claim; the main thread still answers.
    assert.equal((await httpCall(url, 'GET', '/v1/hub/health')).status, 200);
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeFileSync(resume, '');
    const claimed = await claim;
    assert.equal(claimedOf(resultOf(claimed) as unknown as JsonObject).fence, 1n);
    assert.equal(await exited, 0, stderr());
    assert.match(stderr(), /agentscm-test-resumed:task:in-native-reservation/);
    assert.doesNotMatch(stderr(), /pause-expired/);
  },
);
