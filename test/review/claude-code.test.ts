import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import {
  claudeCodeArguments,
  createClaudeCodeTransport,
  hashExecutable,
} from '../../src/collector/review/claude-code-transport.js';
import { runReview, type ReviewTransport } from '../../src/collector/review/controller.js';
import { openReviewJournal } from '../../src/collector/review/journal.js';
import { isQualifiedTransport } from '../../src/collector/review/transports.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import type { ReviewAction } from '../../src/contracts/review/policy.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import {
  answerJson,
  installFixture,
  policyBytes,
  reviewAction,
  reviewStore,
  type InstalledFixture,
} from '../support/review.js';

function transportOf(fixture: InstalledFixture, model = 'claude-sonnet-4-5'): ReviewTransport {
  return createClaudeCodeTransport({
    executable: fixture.executable,
    workDir: fixture.workDir,
    env: fixture.env,
    model,
    providerScope: 'team-a',
  });
}

async function run(
  t: TestContext,
  plan: readonly JsonValue[],
  action: ReviewAction = reviewAction(),
  wrap: (inner: ReviewTransport, fixture: InstalledFixture) => ReviewTransport = (inner) => inner,
  policy = policyBytes(),
) {
  const store = reviewStore(t);
  const fixture = installFixture(t, plan);
  const transport = wrap(transportOf(fixture), fixture);
  const journal = openReviewJournal(tempDir(t));
  try {
    const record = await runReview(
      { repository: store.repository, revision: store.revision, action, policyBytes: policy },
      { sources: store.sources, transport, journal },
    );
    return { record, fixture };
  } finally {
    journal.close();
  }
}

const ANSWER = { mode: 'answer', response: answerJson() };

test('the Claude Code transport runs the executable non-interactively, without tools, in its private directory, with only the named environment', async (t) => {
  const { record, fixture } = await run(t, [ANSWER, ANSWER, ANSWER]);
  assert.equal(record.outcome, 'passed');
  assert.equal(record.transport.basis, 'claude-code');
  assert.equal(record.transport.executable_sha256, hashExecutable(fixture.executable));
  assert.ok(isQualifiedTransport(record.transport));
  const calls = fixture.calls();
  assert.deepEqual(
    calls.map((c) => c.call_index),
    [0, 1, 2],
  );
  for (const call of calls) {
    assert.deepEqual(call.argv, claudeCodeArguments('claude-sonnet-4-5'));
    assert.deepEqual(call.argv, [
      '--print',
      '--output-format',
      'json',
      '--model',
      'claude-sonnet-4-5',
      '--max-turns',
      '1',
      '--tools',
      '',
      '--strict-mcp-config',
    ]);
    assert.equal(call.cwd, fixture.workDir);
    // Only what the operator named (node may add nothing of its own but these).
    assert.deepEqual(
      call.env.filter((name) => !['PATH', 'FIXTURE_PLAN', 'FIXTURE_LOG'].includes(name)),
      [],
    );
  }
  for (const call of record.calls) {
    assert.equal(call.observation.status, 'answered');
    assert.equal(call.observation.exit_code, 0);
    assert.equal(call.observation.executable_before, record.transport.executable_sha256);
    assert.equal(call.observation.executable_after, record.transport.executable_sha256);
  }
});

test('garbage output, a non-zero exit status and an error result are failed calls: the record does not pass', async (t) => {
  const { record, fixture } = await run(t, [{ mode: 'garbage' }, { mode: 'exit', code: 7 }, { mode: 'is_error' }]);
  assert.deepEqual(
    record.calls.map((c) => c.observation.status),
    ['failed', 'failed', 'failed'],
  );
  assert.deepEqual(
    record.calls.map((c) => c.observation.exit_code),
    [0, 7, 0],
  );
  assert.match(record.calls[1]?.observation.detail ?? '', /exit status 7: fixture: failing with 7/);
  assert.deepEqual(
    record.calls.map((c) => c.effect),
    ['not_answered', 'not_answered', 'not_answered'],
  );
  assert.equal(record.outcome, 'incomplete');
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'transport_failed']);
  assert.equal(fixture.calls().length, 3);
});

test('an answer naming a path outside its request is not accepted (out_of_policy)', async (t) => {
  const { record } = await run(t, [{ mode: 'outside' }, ANSWER, ANSWER]);
  assert.deepEqual(
    record.calls.map((c) => c.effect),
    ['out_of_policy', 'accepted', 'accepted'],
  );
  assert.deepEqual(record.findings, []);
  assert.deepEqual(
    record.coverage.map((c) => c.state),
    ['not_covered', 'not_covered', 'covered'],
  );
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'out_of_policy']);
});

test('a call slower than the remaining wall time is killed: timed_out, the review stops, not passing', async (t) => {
  const started = Date.now();
  const { record, fixture } = await run(
    t,
    [ANSWER, { mode: 'slow', ms: 30_000, response: answerJson() }, ANSWER],
    reviewAction(undefined, { wall_time_ms: 1500 }),
  );
  assert.ok(Date.now() - started < 15_000);
  assert.deepEqual(
    record.calls.map((c) => c.observation.status),
    ['answered', 'timed_out'],
  );
  assert.equal(fixture.calls().length, 2);
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'timed_out']);
  assert.equal(record.outcome, 'incomplete');
});

test('the executable rewritten during a call: its answer is not used, the call is executable_changed and the record uncertain', async (t) => {
  const { record, fixture } = await run(t, [{ mode: 'replace-self', response: answerJson() }, ANSWER, ANSWER]);
  assert.deepEqual(
    record.calls.map((c) => c.observation.status),
    ['executable_changed'],
  );
  assert.equal(record.calls[0]?.observation.response, null);
  assert.notEqual(record.calls[0]?.observation.executable_after, record.transport.executable_sha256);
  assert.equal(fixture.calls().length, 1);
  assert.equal(record.outcome, 'uncertain');
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'executable_changed']);
});

test('the executable replaced between two dispatches: the next call is not run and the record is uncertain', async (t) => {
  // Fault injection beside the real path: after call 0 returns, the file is changed.
  const replaceAfterFirst = (inner: ReviewTransport, fixture: InstalledFixture): ReviewTransport => ({
    identity: inner.identity,
    dispatch: async (call) => {
      const observation = await inner.dispatch(call);
      if (call.callIndex === 0) appendFileSync(fixture.executable, '\n// another build\n');
      return observation;
    },
  });
  const { record, fixture } = await run(t, [ANSWER, ANSWER, ANSWER], reviewAction(), replaceAfterFirst);
  assert.deepEqual(
    record.calls.map((c) => c.observation.status),
    ['answered', 'executable_changed'],
  );
  assert.equal(record.calls[1]?.observation.exit_code, null);
  assert.equal(fixture.calls().length, 1);
  assert.equal(record.outcome, 'uncertain');
});

test('the transport refuses a relative or symlinked executable, a shared working directory and a malformed environment name', (t) => {
  const fixture = installFixture(t, []);
  const base = {
    executable: fixture.executable,
    workDir: fixture.workDir,
    env: fixture.env,
    model: 'm',
    providerScope: 'p',
  };
  assert.equal(
    codeOf(() => createClaudeCodeTransport({ ...base, executable: 'claude' })),
    'REVIEW_TRANSPORT_INVALID',
  );
  const link = join(tempDir(t), 'claude');
  symlinkSync(fixture.executable, link);
  assert.equal(
    codeOf(() => createClaudeCodeTransport({ ...base, executable: link })),
    'REVIEW_TRANSPORT_INVALID',
  );
  const shared = join(tempDir(t), 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o755);
  assert.equal(
    codeOf(() => createClaudeCodeTransport({ ...base, workDir: shared })),
    'REVIEW_TRANSPORT_INVALID',
  );
  assert.equal(
    codeOf(() => createClaudeCodeTransport({ ...base, env: { 'BAD=NAME': 'x' } })),
    'REVIEW_TRANSPORT_INVALID',
  );
  assert.equal(
    codeOf(() => createClaudeCodeTransport({ ...base, model: '--dangerously-skip-permissions' })),
    'REVIEW_TRANSPORT_INVALID',
  );
  assert.equal(fixture.calls().length, 0);
});

test('output past its bound kills the process and an answer larger than the output budget is not kept: output_limit, not passing', async (t) => {
  const flood = await run(t, [{ mode: 'flood' }, ANSWER, ANSWER]);
  assert.deepEqual(
    flood.record.calls.map((c) => c.observation.status),
    ['output_limit'],
  );
  assert.equal(flood.record.calls[0]?.observation.exit_code, null);
  assert.deepEqual(flood.record.reasons, ['coverage_incomplete', 'budget_exhausted']);
  const large = await run(t, [ANSWER, ANSWER, ANSWER], reviewAction(undefined, { output_bytes: 40 }));
  assert.deepEqual(
    large.record.calls.map((c) => c.observation.status),
    ['output_limit'],
  );
  assert.equal(large.record.calls[0]?.observation.response, null);
  assert.equal(large.record.outcome, 'incomplete');
});

test('an executable whose interpreter is missing is a failed call, not a crash of the controller', async (t) => {
  const { record } = await run(t, [ANSWER, ANSWER, ANSWER], reviewAction(), (inner, fixture) => {
    // The same file, rewritten before the transport is built, so that its digest is pinned.
    void inner;
    writeFileSync(fixture.executable, '#!/nonexistent/interpreter\n');
    return transportOf(fixture);
  });
  assert.deepEqual(
    record.calls.map((c) => c.observation.status),
    ['failed', 'failed', 'failed'],
  );
  assert.match(record.calls[0]?.observation.detail ?? '', /ENOENT/);
  assert.equal(record.outcome, 'incomplete');
});
