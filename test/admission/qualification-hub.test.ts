/**
 * qualification through the hub over loopback HTTP and MCP (docs/qualification.md "Calling it"):
 * the same facade answer on the agent-tasks route and as the agentscm_task_qualification tool, an
 * input document refused, a revoked token refused; and agent-claimed attempts — a failed result,
 * a passing agent assertion (never evidence) and a cancelled attempt.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { qualificationAnswerDecoder, type QualificationAnswer } from '../../src/contracts/task/qualification.js';
import { hubOperation, toolNameOf } from '../../src/hub/operations.js';
import { qualify } from '../../src/tasks/admission/qualification.js';
import { trustedLocalGuard } from '../../src/tasks/context.js';
import { withStore } from '../../src/tasks/store.js';
import {
  errorCode,
  grantFor,
  hubStore,
  postTask,
  REPOSITORY_ID,
  resultOf,
  revoke,
  startTestHub,
  subjectOf,
  type HubStore,
  type TestGrant,
} from '../support/hub.js';
import { assertionRequest, claimedOf, claimRequest, mutationRequest, taskRef } from '../support/task-requests.js';
import { CHANGE_ID, PROFILE } from '../support/tasks.js';

function localAnswer(hub: HubStore): QualificationAnswer {
  return withStore(hub.store.dataDir, 'read', (store) =>
    qualify({
      store,
      actor: { owner_id: 'operator', agent_id: 'local' },
      profile: PROFILE,
      target: 'main',
      subject: { change_id: CHANGE_ID, context_digest: hub.store.contextDigest },
      guard: trustedLocalGuard,
    }),
  );
}

async function qualifyOverHttp(url: string, grant: TestGrant, hub: HubStore): Promise<QualificationAnswer> {
  return qualificationAnswerDecoder.validate(
    resultOf(await postTask(url, grant.token, 'qualification', null, subjectOf(hub))) as unknown as JsonObject,
  );
}

test('the hub serves qualification on the agent-tasks route and as an MCP tool, with the answer of the in-process facade', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  assert.equal(hubOperation('qualification')?.input.kind, 'subject');

  const answer = await qualifyOverHttp(running.url, alice, hub);
  assert.deepEqual(answer, localAnswer(hub));
  assert.equal(answer.qualified, false);
  assert.equal(answer.subject_current, true);
  assert.deepEqual(
    answer.tasks.map((task) => [task.step_id, task.state]),
    [
      ['paths', 'succeeded'],
      ['unit', 'pending'],
      ['lint', 'pending'],
      ['cap', 'blocked'],
    ],
  );
  assert.equal(answer.next.operation, 'collector_claim');

  const client = new Client({ name: 'agentscm-qualification-test', version: '1' });
  const path = `/v1/hub/workspace/mcp?repository=${encodeURIComponent(REPOSITORY_ID)}&profile=${PROFILE}`;
  await client.connect(
    new StreamableHTTPClientTransport(new URL(path, running.url), {
      requestInit: { headers: { authorization: `Bearer ${alice.token}` } },
    }),
  );
  t.after(() => client.close());
  const tools = await client.listTools();
  assert.ok(tools.tools.some((tool) => tool.name === toolNameOf('qualification')));
  const viaMcp = await client.callTool({ name: 'agentscm_task_qualification', arguments: { subject: subjectOf(hub) } });
  assert.notEqual(viaMcp.isError, true, JSON.stringify(viaMcp.content));
  assert.deepEqual(qualificationAnswerDecoder.validate(viaMcp.structuredContent as JsonObject), answer);

  const withInput = await postTask(running.url, alice.token, 'qualification', { version: 1 }, subjectOf(hub));
  assert.equal(withInput.status, 400);
  assert.equal(errorCode(withInput), 'USAGE');
  const withoutSubject = await postTask(running.url, alice.token, 'qualification', null);
  assert.equal(withoutSubject.status, 400);
  assert.equal(errorCode(withoutSubject), 'TASK_SUBJECT_REQUIRED');

  revoke(hub, alice);
  const revoked = await postTask(running.url, alice.token, 'qualification', null, subjectOf(hub));
  assert.equal(revoked.status, 401);
  assert.equal(errorCode(revoked), 'GRANT_TOKEN_REJECTED');
});

test('agent-claimed attempts over the hub: a failed result is result_failed, a passing agent assertion is result_not_qualifying, a cancelled attempt is uncertain until reconciled', async (t) => {
  const hub = hubStore(t);
  const alice = grantFor(hub, 'alice', 'a1');
  const running = await startTestHub(t, hub);
  const requirements = resultOf(
    await postTask(running.url, alice.token, 'requirements', null, subjectOf(hub)),
  ) as unknown as JsonObject;
  const unit = taskRef(requirements, 'unit');
  const lint = taskRef(requirements, 'lint');

  const claimedUnit = claimedOf(
    resultOf(
      await postTask(
        running.url,
        alice.token,
        'claim',
        claimRequest(alice.actor, unit, 'r-unit', 'e-unit'),
        subjectOf(hub),
      ),
    ) as unknown as JsonObject,
  );
  resultOf(
    await postTask(
      running.url,
      alice.token,
      'result',
      assertionRequest(alice.actor, claimedUnit, 'r-unit-result', 'failed'),
    ),
  );
  const claimedLint = claimedOf(
    resultOf(
      await postTask(
        running.url,
        alice.token,
        'claim',
        claimRequest(alice.actor, lint, 'r-lint', 'e-lint'),
        subjectOf(hub),
      ),
    ) as unknown as JsonObject,
  );
  resultOf(
    await postTask(
      running.url,
      alice.token,
      'result',
      assertionRequest(alice.actor, claimedLint, 'r-lint-result', 'passed'),
    ),
  );

  const finished = await qualifyOverHttp(running.url, alice, hub);
  assert.deepEqual(
    finished.tasks.map((task) => [task.step_id, task.state]),
    [
      ['paths', 'succeeded'],
      ['unit', 'failed'],
      ['lint', 'blocked'],
      ['cap', 'blocked'],
    ],
  );
  assert.deepEqual(finished.failures, [
    { task_id: unit.task_id, code: 'result_failed' },
    { task_id: lint.task_id, code: 'result_not_qualifying' },
  ]);
  assert.deepEqual(finished.next, { operation: 'none' });
  assert.equal(finished.qualified, false);

  // A second store: a cancelled attempt stays uncertain and next says reconcile it.
  const other = hubStore(t);
  const bob = grantFor(other, 'bob', 'b1');
  const second = await startTestHub(t, other);
  const lint2 = taskRef(
    resultOf(await postTask(second.url, bob.token, 'requirements', null, subjectOf(other))) as unknown as JsonObject,
    'lint',
  );
  const claimed = claimedOf(
    resultOf(
      await postTask(
        second.url,
        bob.token,
        'claim',
        claimRequest(bob.actor, lint2, 'r-claim', 'e-claim'),
        subjectOf(other),
      ),
    ) as unknown as JsonObject,
  );
  resultOf(await postTask(second.url, bob.token, 'cancel', mutationRequest(bob.actor, claimed, 'cancel', 'r-cancel')));
  const cancelled = await qualifyOverHttp(second.url, bob, other);
  assert.equal(cancelled.tasks.find((task) => task.step_id === 'lint')?.state, 'uncertain');
  assert.ok(
    cancelled.failures.some((failure) => failure.task_id === lint2.task_id && failure.code === 'attempt_uncertain'),
  );
  // unit (pending) comes first in plan order; with unit claimed, lint's reconcile is next.
  assert.equal(cancelled.next.operation, 'collector_claim');
  const unit2 = taskRef(
    resultOf(await postTask(second.url, bob.token, 'requirements', null, subjectOf(other))) as unknown as JsonObject,
    'unit',
  );
  resultOf(
    await postTask(
      second.url,
      bob.token,
      'claim',
      claimRequest(bob.actor, unit2, 'r-unit', 'e-unit'),
      subjectOf(other),
    ),
  );
  assert.deepEqual((await qualifyOverHttp(second.url, bob, other)).next, {
    operation: 'reconcile',
    task_id: lint2.task_id,
  });
});
