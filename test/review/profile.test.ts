import assert from 'node:assert/strict';
import test from 'node:test';

import { createClaudeCodeTransport } from '../../src/collector/review/claude-code-transport.js';
import { runReview, type ReviewTransport } from '../../src/collector/review/controller.js';
import { openReviewJournal } from '../../src/collector/review/journal.js';
import { createFixtureTransport } from '../../src/collector/review/transports.js';
import { digestCanonical, DOMAINS } from '../../src/contracts/digest.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { reviewPolicyDigest } from '../../src/contracts/review/policy.js';
import {
  checkRecordAgainstProfile,
  decodeReviewCollectorProfile,
  reviewCollectorProfileId,
  reviewCollectorProfileToJson,
  type ReviewCollectorProfile,
} from '../../src/contracts/review/profile.js';
import { codeOf } from '../helpers/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { SEED_PROFILE } from '../support/review-seeds.js';
import {
  answerJson,
  answerText,
  BUDGETS,
  installFixture,
  policyBytes,
  reviewAction,
  reviewStore,
} from '../support/review.js';

const bytes = (value: JsonObject): Buffer => encodeCanonical(value);

test('a finite-review profile decodes strictly, re-encodes to its bytes and is identified in the collector-profile domain', () => {
  const profile = decodeReviewCollectorProfile(bytes(SEED_PROFILE));
  assert.deepEqual(bytes(reviewCollectorProfileToJson(profile)), bytes(SEED_PROFILE));
  assert.equal(reviewCollectorProfileId(profile), digestCanonical(DOMAINS.collectorProfile, SEED_PROFILE));
  assert.equal(
    codeOf(() => decodeReviewCollectorProfile(bytes({ ...SEED_PROFILE, fallback: 'http' }))),
    'SCHEMA_UNKNOWN_FIELD',
  );
  assert.equal(
    codeOf(() => decodeReviewCollectorProfile(bytes({ ...SEED_PROFILE, coverage: ['src/a.ts', 'src/a.ts'] }))),
    'SCHEMA_TYPE',
  );
});

test('fixture, HTTP and every other basis than claude-code are refused at installation with REVIEW_TRANSPORT_NOT_QUALIFIED', () => {
  const transport = SEED_PROFILE.transport as JsonObject;
  for (const basis of ['fixture', 'http', 'https-api', 'replay']) {
    assert.equal(
      codeOf(() => decodeReviewCollectorProfile(bytes({ ...SEED_PROFILE, transport: { ...transport, basis } }))),
      'REVIEW_TRANSPORT_NOT_QUALIFIED',
      basis,
    );
  }
  // A claude-code profile must pin an executable digest.
  assert.equal(
    codeOf(() =>
      decodeReviewCollectorProfile(bytes({ ...SEED_PROFILE, transport: { ...transport, executable_sha256: null } })),
    ),
    'SCHEMA_TYPE',
  );
});

test('a record made under the pinned transport, policy, coverage and budgets matches its profile; any other pin is REVIEW_PROFILE_MISMATCH', async (t) => {
  const store = reviewStore(t);
  const fixture = installFixture(t, [
    { mode: 'answer', response: answerJson() },
    { mode: 'answer', response: answerJson() },
    { mode: 'answer', response: answerJson() },
  ]);
  const claude = createClaudeCodeTransport({
    executable: fixture.executable,
    workDir: fixture.workDir,
    env: fixture.env,
    model: 'claude-sonnet-4-5',
    providerScope: 'team-a',
  });
  const action = reviewAction();
  const recordWith = async (transport: ReviewTransport) => {
    const journal = openReviewJournal(tempDir(t));
    try {
      return await runReview(
        { repository: store.repository, revision: store.revision, action, policyBytes: policyBytes() },
        { sources: store.sources, transport, journal },
      );
    } finally {
      journal.close();
    }
  };
  const profile: ReviewCollectorProfile = decodeReviewCollectorProfile(
    bytes({
      ...SEED_PROFILE,
      repository_id: store.repository,
      transport: {
        basis: 'claude-code',
        executable_sha256: claude.identity.executable_sha256,
        provider_scope: 'team-a',
        model: 'claude-sonnet-4-5',
      },
      policy_sha256: reviewPolicyDigest(policyBytes()),
      coverage: [...action.coverage],
      budgets: { ...BUDGETS },
    }),
  );
  const record = await recordWith(claude);
  assert.equal(record.outcome, 'passed');
  checkRecordAgainstProfile(profile, record);
  const field = (fn: () => void): unknown => {
    try {
      fn();
    } catch (error) {
      return [(error as { code?: string }).code, (error as { details?: { field?: string } }).details?.field];
    }
    return 'accepted';
  };
  const fromFixture = await recordWith(
    createFixtureTransport(
      [{ response: answerText() }, { response: answerText() }, { response: answerText() }],
      'claude-sonnet-4-5',
    ),
  );
  assert.deepEqual(
    field(() => checkRecordAgainstProfile(profile, fromFixture)),
    ['REVIEW_PROFILE_MISMATCH', 'transport.basis'],
  );
  assert.deepEqual(
    field(() => checkRecordAgainstProfile({ ...profile, budgets: { ...profile.budgets, model_calls: 32 } }, record)),
    ['REVIEW_PROFILE_MISMATCH', 'budgets.model_calls'],
  );
  assert.deepEqual(
    field(() =>
      checkRecordAgainstProfile({ ...profile, transport: { ...profile.transport, model: 'claude-opus-4' } }, record),
    ),
    ['REVIEW_PROFILE_MISMATCH', 'transport.model'],
  );
  assert.deepEqual(
    field(() => checkRecordAgainstProfile({ ...profile, coverage: ['src/a.ts'] }, record)),
    ['REVIEW_PROFILE_MISMATCH', 'coverage'],
  );
  assert.deepEqual(
    field(() => checkRecordAgainstProfile({ ...profile, policy_sha256: '0'.repeat(64) }, record)),
    ['REVIEW_PROFILE_MISMATCH', 'policy_sha256'],
  );
});
