import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';

import { createClaudeCodeTransport } from '../../src/collector/review/claude-code-transport.js';
import { runReview, type ReviewTransport } from '../../src/collector/review/controller.js';
import { listJournalRequests, openReviewJournal } from '../../src/collector/review/journal.js';
import { replayReviewRecord } from '../../src/collector/review/replay.js';
import { createFixtureTransport, type FixtureAnswer } from '../../src/collector/review/transports.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { ReviewAction } from '../../src/contracts/review/policy.js';
import { reviewRecordToJson } from '../../src/contracts/review/record.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { tempDir } from '../helpers/tmp.js';
import {
  answerJson,
  answerText,
  FILES,
  installFixture,
  policyBytes,
  reviewAction,
  reviewStore,
  type ReviewStore,
} from '../support/review.js';

interface Recorded {
  readonly store: ReviewStore;
  readonly action: ReviewAction;
  readonly record: Buffer;
  readonly requests: Buffer[];
}

async function record(
  t: TestContext,
  transport: ReviewTransport,
  action: ReviewAction = reviewAction(),
  store = reviewStore(t),
): Promise<Recorded> {
  const journal = openReviewJournal(tempDir(t));
  try {
    const result = await runReview(
      { repository: store.repository, revision: store.revision, action, policyBytes: policyBytes() },
      { sources: store.sources, transport, journal },
    );
    return {
      store,
      action,
      record: encodeCanonical(reviewRecordToJson(result)),
      requests: listJournalRequests(journal, result.review_id),
    };
  } finally {
    journal.close();
  }
}

function replay(r: Recorded, changes: { record?: Buffer; requests?: Buffer[]; store?: ReviewStore } = {}) {
  const store = changes.store ?? r.store;
  return replayReviewRecord({
    repository: store.repository,
    revision: store.revision,
    action: r.action,
    policyBytes: policyBytes(),
    sources: store.sources,
    requests: changes.requests ?? r.requests,
    record: changes.record ?? r.record,
  });
}

function edit(r: Recorded, change: (json: JsonObject) => void): Buffer {
  const json = JSON.parse(r.record.toString('utf8')) as JsonObject;
  change(json);
  return encodeCanonical(json);
}

function calls(json: JsonObject): JsonObject[] {
  return json.calls as JsonObject[];
}

const PASS: FixtureAnswer = { response: answerText() };
const FAILING: FixtureAnswer = {
  response: answerText(
    ['no-secrets'],
    [{ criterion: 'no-secrets', path: 'src/a.ts', line: 1, severity: 'blocking', message: 'a token' }],
  ),
};

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code ?? 'not an AgentscmError';
  }
  return 'accepted';
}

test('replaying a recorded run of the Claude Code transport gives the byte-identical record without calling anything', async (t) => {
  const fixture = installFixture(t, [
    { mode: 'answer', response: answerJson() },
    { mode: 'garbage' },
    { mode: 'answer', response: answerJson(['correctness']) },
  ]);
  const transport = createClaudeCodeTransport({
    executable: fixture.executable,
    workDir: fixture.workDir,
    env: fixture.env,
    model: 'claude-sonnet-4-5',
    providerScope: 'team-a',
  });
  const recorded = await record(t, transport);
  assert.equal(fixture.calls().length, 3);
  const derived = await replay(recorded);
  assert.deepEqual(encodeCanonical(reviewRecordToJson(derived)), recorded.record);
  assert.equal(derived.outcome, 'failed');
  assert.equal(fixture.calls().length, 3);
});

test('an uncertain record (a reservation never answered) replays to the same uncertain record', async (t) => {
  const store = reviewStore(t);
  const stateDir = tempDir(t);
  const fixture = createFixtureTransport([PASS, PASS, PASS]);
  const input = {
    repository: store.repository,
    revision: store.revision,
    action: reviewAction(),
    policyBytes: policyBytes(),
  };
  const first = openReviewJournal(stateDir);
  await assert.rejects(
    runReview(input, {
      sources: store.sources,
      transport: { identity: fixture.identity, dispatch: () => Promise.reject(new Error('killed')) },
      journal: first,
    }),
  );
  first.close();
  const journal = openReviewJournal(stateDir);
  t.after(() => journal.close());
  const reopened = await runReview(input, { sources: store.sources, transport: fixture, journal });
  const recorded: Recorded = {
    store,
    action: reviewAction(),
    record: encodeCanonical(reviewRecordToJson(reopened)),
    requests: listJournalRequests(journal, reopened.review_id),
  };
  const derived = await replay(recorded);
  assert.equal(derived.outcome, 'uncertain');
  assert.deepEqual(encodeCanonical(reviewRecordToJson(derived)), recorded.record);
});

test('replay refuses a tampered response: REVIEW_REPLAY_RESPONSE_TAMPERED, or REVIEW_REPLAY_RECORD_MISMATCH when its digest was fixed too', async (t) => {
  const recorded = await record(t, createFixtureTransport([FAILING, PASS, PASS]));
  const passing = answerText();
  const tampered = edit(recorded, (json) => {
    const observation = calls(json)[0]?.observation as JsonObject;
    observation.response = passing;
  });
  assert.equal(await refusal(replay(recorded, { record: tampered })), 'REVIEW_REPLAY_RESPONSE_TAMPERED');
  const consistent = edit(recorded, (json) => {
    const observation = calls(json)[0]?.observation as JsonObject;
    observation.response = passing;
    observation.response_sha256 = sha256Hex(Buffer.from(passing));
    observation.response_bytes = Buffer.byteLength(passing);
  });
  assert.equal(await refusal(replay(recorded, { record: consistent })), 'REVIEW_REPLAY_RECORD_MISMATCH');
});

test('replay refuses a reordered call, a changed request, a missing request and an extra recorded call', async (t) => {
  const recorded = await record(t, createFixtureTransport([PASS, PASS, PASS]));
  const [r0, r1, r2] = recorded.requests as [Buffer, Buffer, Buffer];
  assert.equal(await refusal(replay(recorded, { requests: [r1, r0, r2] })), 'REVIEW_REPLAY_REQUEST_MISMATCH');
  const reordered = edit(recorded, (json) => {
    const list = calls(json);
    json.calls = [list[1] ?? null, list[0] ?? null, list[2] ?? null];
  });
  assert.equal(
    await refusal(replay(recorded, { record: reordered, requests: [r1, r0, r2] })),
    'REVIEW_REPLAY_REQUEST_MISMATCH',
  );
  const changed = Buffer.from(r0.toString('utf8').replace('Review the excerpts', 'Approve the excerpts'));
  assert.equal(await refusal(replay(recorded, { requests: [changed, r1, r2] })), 'REVIEW_REPLAY_REQUEST_MISMATCH');
  assert.equal(await refusal(replay(recorded, { requests: [r0, r1] })), 'REVIEW_REPLAY_TRACE_MISMATCH');
  // A record that names a call the controller stops before (the model-call budget is 2).
  const short = await record(
    t,
    createFixtureTransport([PASS, PASS, PASS]),
    reviewAction(undefined, { model_calls: 2 }),
  );
  const extra = edit(short, (json) => {
    json.calls = [...calls(json), calls(JSON.parse(recorded.record.toString('utf8')) as JsonObject)[2] ?? null];
  });
  assert.equal(
    await refusal(replay(short, { record: extra, requests: [...short.requests, r2] })),
    'REVIEW_REPLAY_TRACE_MISMATCH',
  );
});

test('replay refuses a changed outcome, coverage or usage, a record that is not canonical, and other sources', async (t) => {
  const recorded = await record(t, createFixtureTransport([FAILING, PASS, PASS]));
  const flipped = edit(recorded, (json) => {
    json.outcome = 'passed';
    json.reasons = [];
  });
  assert.equal(await refusal(replay(recorded, { record: flipped })), 'REVIEW_REPLAY_RECORD_MISMATCH');
  const usage = edit(recorded, (json) => {
    (json.usage as JsonObject).model_calls = 1;
  });
  assert.equal(await refusal(replay(recorded, { record: usage })), 'REVIEW_REPLAY_RECORD_MISMATCH');
  const pretty = Buffer.from(formatJson(JSON.parse(recorded.record.toString('utf8')) as JsonObject));
  assert.equal(await refusal(replay(recorded, { record: pretty })), 'REVIEW_REPLAY_RECORD_MISMATCH');
  const other = reviewStore(t, { ...FILES, 'src/b.ts': 'export function b(): string { return "changed"; }\n' });
  assert.equal(await refusal(replay(recorded, { store: other })), 'REVIEW_REPLAY_REQUEST_MISMATCH');
  // The untouched record still replays.
  assert.deepEqual(encodeCanonical(reviewRecordToJson(await replay(recorded))), recorded.record);
});

test('replay refuses coverage outside the installed policy and a record naming another transport than its requests', async (t) => {
  const recorded = await record(t, createFixtureTransport([PASS, PASS, PASS]));
  const narrow = policyBytes({ exposure: ['src/a.ts'] });
  const outside = replayReviewRecord({
    repository: recorded.store.repository,
    revision: recorded.store.revision,
    action: recorded.action,
    policyBytes: narrow,
    sources: recorded.store.sources,
    requests: recorded.requests,
    record: recorded.record,
  });
  assert.equal(await refusal(outside), 'REVIEW_COVERAGE_OUTSIDE_POLICY');
  const otherModel = edit(recorded, (json) => {
    (json.transport as JsonObject).model = 'another-model';
  });
  assert.equal(await refusal(replay(recorded, { record: otherModel })), 'REVIEW_REPLAY_REQUEST_MISMATCH');
  const otherAction = { ...recorded, action: reviewAction(undefined, { model_calls: 7 }) };
  assert.equal(await refusal(replay(otherAction)), 'REVIEW_REPLAY_REQUEST_MISMATCH');
});
