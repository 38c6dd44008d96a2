import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';

import { runReview } from '../../src/collector/review/controller.js';
import { listJournalRequests, openReviewJournal } from '../../src/collector/review/journal.js';
import {
  assertQualifiedTransport,
  createFixtureTransport,
  isFixtureTransport,
  isQualifiedTransport,
  type FixtureAnswer,
} from '../../src/collector/review/transports.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { ReviewAction } from '../../src/contracts/review/policy.js';
import {
  decodeReviewRecord,
  reviewRecordPasses,
  reviewRecordToJson,
  type ReviewRecord,
} from '../../src/contracts/review/record.js';
import { decodeReviewRequest } from '../../src/contracts/review/request.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { answerText, policyBytes, reviewAction, reviewStore, type ReviewStore } from '../support/review.js';

async function review(
  t: TestContext,
  store: ReviewStore,
  action: ReviewAction,
  answers: readonly FixtureAnswer[],
  stateDir = tempDir(t),
  policy = policyBytes(),
) {
  const transport = createFixtureTransport(answers);
  const journal = openReviewJournal(stateDir);
  try {
    const record = await runReview(
      { repository: store.repository, revision: store.revision, action, policyBytes: policy },
      { sources: store.sources, transport, journal },
    );
    return { record, transport, stateDir, requests: listJournalRequests(journal, record.review_id) };
  } finally {
    journal.close();
  }
}

const bytesOf = (record: ReviewRecord): Buffer => encodeCanonical(reviewRecordToJson(record));
const PASS = { response: answerText() };

test('every coverage path exposed in bounded excerpts and answered pass: the record passes', async (t) => {
  const store = reviewStore(t);
  const { record, transport, requests } = await review(t, store, reviewAction(), [PASS, PASS, PASS, PASS]);
  assert.equal(record.outcome, 'passed');
  assert.ok(reviewRecordPasses(record));
  assert.deepEqual(record.reasons, []);
  assert.deepEqual(
    record.coverage.map((c) => c.state),
    ['covered', 'covered', 'covered'],
  );
  // src/c.ts (320 bytes) does not fit one 256-byte excerpt: it is cut, and every byte is covered.
  const excerpts = requests.map((bytes) => decodeReviewRequest(bytes).excerpts).flat();
  assert.ok(excerpts.every((e) => Buffer.byteLength(e.text) === e.length && e.length <= 256));
  assert.deepEqual(
    excerpts.filter((e) => e.path === 'src/c.ts').map((e) => [e.offset, e.length]),
    [
      [0, 256],
      [256, 64],
    ],
  );
  assert.equal(transport.dispatched.length, requests.length);
  // Each dispatched request is exactly the retained canonical request.
  transport.dispatched.forEach((call, index) => assert.deepEqual(call.request, requests[index]));
  assert.equal(record.usage.model_calls, requests.length);
  assert.equal(
    record.usage.input_bytes,
    requests.reduce((sum, r) => sum + r.length, 0),
  );
  // The record decodes strictly and re-encodes to the same bytes.
  assert.deepEqual(bytesOf(decodeReviewRecord(bytesOf(record))), bytesOf(record));
});

test('same sources, policy and recorded responses give byte-identical requests and a byte-identical record', async (t) => {
  const store = reviewStore(t);
  // Call 0 exposes src/a.ts and src/b.ts; calls 1 and 2 the two excerpts of src/c.ts.
  const failing = {
    response: answerText(
      ['correctness'],
      [{ criterion: 'correctness', path: 'src/b.ts', line: 2, severity: 'blocking', message: 'naïve ✓' }],
    ),
  };
  const first = await review(t, store, reviewAction(), [failing, PASS, PASS]);
  const second = await review(t, store, reviewAction(), [failing, PASS, PASS]);
  assert.deepEqual(second.requests, first.requests);
  assert.deepEqual(bytesOf(second.record), bytesOf(first.record));
  assert.equal(first.record.outcome, 'failed');
  assert.deepEqual(first.record.reasons, ['criterion_failed']);
  assert.deepEqual(
    first.record.findings.map((f) => [f.call_index, f.path, f.line]),
    [[0, 'src/b.ts', 2]],
  );
  assert.deepEqual(
    first.record.coverage.map((c) => c.state),
    ['covered', 'covered', 'covered'],
  );
});

test('a model-call budget that runs out stops the review: not passing, the remaining paths uncovered, never truncated', async (t) => {
  const store = reviewStore(t);
  const { record, transport } = await review(t, store, reviewAction(undefined, { model_calls: 1 }), [PASS, PASS, PASS]);
  assert.equal(transport.dispatched.length, 1);
  assert.equal(record.outcome, 'incomplete');
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'budget_exhausted']);
  assert.deepEqual(
    record.coverage.map((c) => c.state),
    ['covered', 'covered', 'not_covered'],
  );
});

test('input-bytes, files-exposed, output-bytes and wall-time budgets each stop the review before the call that would exceed them', async (t) => {
  const store = reviewStore(t);
  const input = await review(t, store, reviewAction(undefined, { input_bytes: 100 }), [PASS, PASS, PASS]);
  assert.equal(input.transport.dispatched.length, 0);
  assert.deepEqual(input.record.reasons, ['coverage_incomplete', 'budget_exhausted']);
  const files = await review(t, store, reviewAction(undefined, { files_exposed: 2 }), [PASS, PASS, PASS]);
  assert.equal(files.transport.dispatched.length, 1);
  assert.equal(files.record.usage.files_exposed, 2);
  assert.equal(files.record.outcome, 'incomplete');
  // The answer is larger than the output budget: the call reports output_limit, nothing is kept.
  const output = await review(t, store, reviewAction(undefined, { output_bytes: 20 }), [PASS, PASS, PASS]);
  assert.equal(output.record.calls[0]?.observation.status, 'output_limit');
  assert.equal(output.record.calls[0]?.observation.response, null);
  assert.deepEqual(output.record.reasons, ['coverage_incomplete', 'budget_exhausted']);
  const wall = await review(t, store, reviewAction(undefined, { wall_time_ms: 50 }), [
    { response: answerText(), elapsedMs: 60 },
    PASS,
    PASS,
  ]);
  assert.equal(wall.transport.dispatched.length, 1);
  assert.deepEqual(wall.record.reasons, ['coverage_incomplete', 'budget_exhausted']);
  assert.equal(wall.record.outcome, 'incomplete');
});

test('a missing path, a non-UTF-8 file and an invalid answer leave coverage incomplete and the record not passing', async (t) => {
  const store = reviewStore(t, {
    'src/a.ts': 'a\n',
    'src/bin.dat': Buffer.from([0xff, 0xfe, 0x00]),
    'src/c.ts': 'c\n',
  });
  const { record } = await review(t, store, reviewAction(['src/a.ts', 'src/bin.dat', 'src/gone.ts', 'src/c.ts']), [
    { response: '```json\n{"version":1}\n```' },
  ]);
  assert.deepEqual(
    record.coverage.map((c) => c.state),
    ['not_covered', 'not_utf8', 'missing', 'not_covered'],
  );
  assert.deepEqual(
    record.calls.map((c) => c.effect),
    ['response_invalid'],
  );
  assert.equal(record.outcome, 'incomplete');
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'response_invalid']);
  assert.deepEqual(
    record.criteria.map((c) => c.outcome),
    ['not_assessed', 'not_assessed'],
  );
});

test('model output is data: a finding on a path outside its request, a missing verdict or an extra field is not accepted', async (t) => {
  const store = reviewStore(t);
  const outside = await review(t, store, reviewAction(['src/a.ts']), [
    {
      response: answerText(
        [],
        [{ criterion: 'correctness', path: 'secrets/key.pem', line: null, severity: 'advisory', message: 'see also' }],
      ),
    },
  ]);
  assert.deepEqual(
    outside.record.calls.map((c) => c.effect),
    ['out_of_policy'],
  );
  assert.deepEqual(outside.record.reasons, ['coverage_incomplete', 'out_of_policy']);
  assert.deepEqual(outside.record.findings, []);
  const oneVerdict = await review(t, store, reviewAction(['src/a.ts']), [
    {
      response: JSON.stringify({ version: 1, verdicts: [{ criterion: 'correctness', verdict: 'pass' }], findings: [] }),
    },
  ]);
  assert.deepEqual(
    oneVerdict.record.calls.map((c) => c.effect),
    ['response_invalid'],
  );
  const extended = await review(t, store, reviewAction(['src/a.ts']), [
    { response: JSON.stringify({ ...JSON.parse(answerText()), budgets: { model_calls: 64 } }) },
  ]);
  assert.deepEqual(
    extended.record.calls.map((c) => c.effect),
    ['response_invalid'],
  );
  assert.equal(extended.record.action.budgets.model_calls, 8);
});

test('reopening retained state never repeats a model call and derives the identical record', async (t) => {
  const store = reviewStore(t);
  const stateDir = tempDir(t);
  const first = await review(t, store, reviewAction(), [PASS, PASS, PASS], stateDir);
  const again = await review(
    t,
    store,
    reviewAction(),
    [{ status: 'failed' }, { status: 'failed' }, { status: 'failed' }],
    stateDir,
  );
  assert.equal(again.transport.dispatched.length, 0);
  assert.deepEqual(bytesOf(again.record), bytesOf(first.record));
});

test('a reservation without an observation is uncertain on reopening and is never called again', async (t) => {
  const store = reviewStore(t);
  const stateDir = tempDir(t);
  // The transport fails inside the call (after the reservation committed) as a crash would.
  const crashing = createFixtureTransport([PASS]);
  const journal = openReviewJournal(stateDir);
  const input = {
    repository: store.repository,
    revision: store.revision,
    action: reviewAction(),
    policyBytes: policyBytes(),
  };
  await assert.rejects(
    runReview(input, {
      sources: store.sources,
      transport: { identity: crashing.identity, dispatch: () => Promise.reject(new Error('process died')) },
      journal,
    }),
  );
  journal.close();
  const { record, transport } = await review(t, store, reviewAction(), [PASS, PASS, PASS], stateDir);
  assert.equal(transport.dispatched.length, 0);
  assert.equal(record.calls.length, 1);
  assert.equal(record.calls[0]?.observation.status, 'uncertain');
  assert.equal(record.outcome, 'uncertain');
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'call_uncertain']);
});

test('coverage outside the policy is refused before the journal exists; the fixture transport never qualifies', async (t) => {
  const store = reviewStore(t);
  const stateDir = join(tempDir(t), 'state');
  const transport = createFixtureTransport([PASS]);
  const action = reviewAction(['src/a.ts', 'secrets/key.pem']);
  await assert.rejects(
    (async () =>
      runReview(
        { repository: store.repository, revision: store.revision, action, policyBytes: policyBytes() },
        { sources: store.sources, transport, journal: openReviewJournal(tempDir(t)) },
      ))(),
    (error: { code?: string }) => error.code === 'REVIEW_COVERAGE_OUTSIDE_POLICY',
  );
  assert.equal(transport.dispatched.length, 0);
  assert.equal(existsSync(stateDir), false);
  assert.ok(isFixtureTransport(transport));
  assert.equal(isQualifiedTransport(transport.identity), false);
  assert.equal(
    codeOf(() => assertQualifiedTransport(transport.identity)),
    'REVIEW_TRANSPORT_NOT_QUALIFIED',
  );
});

test('a second controller on the same journal never makes a call another controller has reserved', async (t) => {
  const store = reviewStore(t);
  const stateDir = tempDir(t);
  const input = {
    repository: store.repository,
    revision: store.revision,
    action: reviewAction(),
    policyBytes: policyBytes(),
  };
  const first = createFixtureTransport([PASS, PASS, PASS]);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered: () => void = () => undefined;
  const inCall = new Promise<void>((resolve) => (entered = resolve));
  const journalA = openReviewJournal(stateDir);
  const journalB = openReviewJournal(stateDir);
  t.after(() => {
    journalA.close();
    journalB.close();
  });
  const running = runReview(input, {
    sources: store.sources,
    transport: {
      identity: first.identity,
      dispatch: async (call) => {
        entered();
        await gate;
        return first.dispatch(call);
      },
    },
    journal: journalA,
  });
  await inCall;
  const second = createFixtureTransport([PASS, PASS, PASS]);
  const seen = await runReview(input, { sources: store.sources, transport: second, journal: journalB });
  assert.equal(second.dispatched.length, 0);
  assert.equal(seen.outcome, 'uncertain');
  release();
  const finished = await running;
  assert.equal(finished.outcome, 'passed');
  assert.equal(first.dispatched.length, 3);
});

test('answers and sources of control characters (six bytes each when encoded) stay within the record, observation and request bounds', async (t) => {
  const control = '\u0001'.repeat(250 * 1024);
  const ctl = '\u0002'.repeat(250 * 1024);
  const store = reviewStore(t, { 'src/a.ts': 'a\n', 'src/ctl1.txt': ctl, 'src/ctl2.txt': ctl, 'src/ctl3.txt': ctl });
  const stateDir = tempDir(t);
  const action = reviewAction(['src/a.ts', 'src/ctl1.txt', 'src/ctl2.txt', 'src/ctl3.txt'], {
    output_bytes: 1024 * 1024,
    input_bytes: 6 * 1024 * 1024,
  });
  const policy = policyBytes({ max_excerpt_bytes: 256 * 1024, max_call_excerpt_bytes: 256 * 1024 });
  const answers = [{ response: control }, { response: control }, { response: control }];
  const first = await review(t, store, action, answers, stateDir, policy);
  assert.deepEqual(
    first.record.calls.map((c) => c.effect),
    ['response_invalid', 'response_invalid', 'response_invalid'],
  );
  assert.ok(bytesOf(first.record).length > 4 * 1024 * 1024);
  // The record, every retained request and (on reopening) every retained observation decode.
  assert.deepEqual(bytesOf(decodeReviewRecord(bytesOf(first.record))), bytesOf(first.record));
  for (const request of first.requests) decodeReviewRequest(request);
  assert.ok(Math.min(...first.requests.map((r) => r.length)) > 1024 * 1024);
  const reopened = await review(t, store, action, answers, stateDir, policy);
  assert.equal(reopened.transport.dispatched.length, 0);
  assert.deepEqual(bytesOf(reopened.record), bytesOf(first.record));
});
