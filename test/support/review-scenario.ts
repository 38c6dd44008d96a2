/**
 * The review world of the collect tests (docs/review.md "Collecting a review"): the scenario whose
 * requirement's one step reviews src/a.ts (the Change edits it), optionally followed by a command
 * step that waits for the review; the collector key enrolled for the review step; the stand-in
 * Claude Code executable answering `plan`; and the finite-review profile file pinning it, written
 * but not installed.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { encodeCanonical, encodeCanonicalText, formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import { buildScenario, commandStepAction, SCENARIO_REVIEW_POLICY, type Scenario } from '../helpers/scenario.js';
import { reviewStepAction } from './review-run.js';
import { answerJson, BUDGETS, installFixture, POLICY, type InstalledFixture } from './review.js';

export interface ReviewScenario {
  readonly scenario: Scenario;
  /** The enrollment of the collector key for the review step. */
  readonly registration: NonNullable<Scenario['registration']>;
  readonly fixture: InstalledFixture;
  /** The finite-review profile, as written to `profileFile`. */
  readonly profile: JsonObject;
  readonly profileFile: string;
}

export interface ReviewScenarioOptions {
  /** What the stand-in answers, call by call (installFixture's plan); one passing answer by default. */
  readonly plan?: readonly JsonValue[];
  /** A required command step `check` after the review, waiting for its import. */
  readonly withCheck?: boolean;
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

export async function buildReviewScenario(
  t: TestContext,
  options: ReviewScenarioOptions = {},
): Promise<ReviewScenario> {
  const scenario = await buildScenario(t, {
    argv: ['true'],
    timeoutMs: 1000,
    name: 'reviewed',
    files: { 'src/a.ts': 'export const a = 0;\n', [SCENARIO_REVIEW_POLICY]: encodeCanonicalText(POLICY) },
    edits: { 'src/a.ts': 'export const a = 2;\n' },
    resources: [SCENARIO_REVIEW_POLICY],
    steps: (binding) => [
      { id: 'review', needs: [], required: true, action: reviewStepAction(['src/a.ts']) },
      ...(options.withCheck === true
        ? [{ id: 'check', needs: ['review'], required: true, action: commandStepAction(binding) }]
        : []),
    ],
    enrollStep: 'review',
    executor: 'reviewer-1',
  });
  const registration = scenario.registration;
  assert.ok(registration !== null, 'the review step has an enrolled key');
  const fixture = installFixture(t, options.plan ?? [{ mode: 'answer', response: answerJson() }]);
  const profile = {
    version: 1,
    kind: 'finite_review',
    repository_id: scenario.repository,
    workflow_profile: 'default',
    step_id: 'review',
    registration_id: registration.registration_id,
    registration_epoch: registration.registration_epoch,
    verification_key_id: registration.verification_key_id,
    transport: {
      basis: 'claude-code',
      executable_sha256: sha256(readFileSync(fixture.executable)),
      provider_scope: 'test-org',
      model: 'claude-sonnet-4-5',
    },
    policy_sha256: sha256(encodeCanonical(POLICY)),
    coverage: ['src/a.ts'],
    budgets: BUDGETS as unknown as JsonObject,
  } satisfies JsonObject;
  const profileFile = join(scenario.root, 'review-profile.json');
  writeFileSync(profileFile, formatJson(profile));
  return { scenario, registration, fixture, profile, profileFile };
}
