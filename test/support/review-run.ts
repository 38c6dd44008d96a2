/**
 * Shared setup of the review-step run and Stop tests: a store whose revision holds a skill with a
 * review policy, a review step action, and the review flags naming the stand-in executable.
 */
import { BUDGETS, CRITERIA, FILES, policyBytes, type InstalledFixture } from './review.js';
import {
  definition,
  makeStore,
  SKILL_DIR,
  SKILL_PATH,
  SKILL_TEXT,
  sourcePaths,
  writeDefinition,
  type Store,
} from './workflows.js';

export const POLICY_PATH = `${SKILL_DIR}/review-policy.json`;

/** A store whose revision holds the skill, its review policy and the reviewed sources. */
export function reviewRunStore(dataDir: string, files: Readonly<Record<string, string>> = FILES): Store {
  return makeStore(dataDir, { [SKILL_PATH]: SKILL_TEXT, [POLICY_PATH]: policyBytes(), ...files });
}

export function reviewStepAction(
  coverage: readonly string[] = ['src/a.ts', 'src/b.ts', 'src/c.ts'],
): Record<string, unknown> {
  return {
    kind: 'review',
    policy: 'review-policy.json',
    coverage: [...coverage],
    criteria: CRITERIA,
    budgets: BUDGETS,
  };
}

/** A workflow of a source_paths step and a review step that needs it. */
export function reviewWorkflow(store: Store, dir: string, coverage?: readonly string[]): string {
  return writeDefinition(
    dir,
    'wf.json',
    definition(
      store,
      [
        { id: 'sources', action: sourcePaths(store, ['src/a.ts']) },
        { id: 'review', needs: ['sources'], action: reviewStepAction(coverage) },
      ],
      { resources: [POLICY_PATH] },
    ),
  );
}

/** The review flags naming the installed stand-in executable and a fresh state directory. */
export function reviewArgs(fixture: InstalledFixture, stateDir: string): string[] {
  return [
    '--review-executable',
    fixture.executable,
    '--review-model',
    'claude-sonnet-4-5',
    '--review-provider-scope',
    'test-org',
    '--review-state-dir',
    stateDir,
    '--review-env',
    'PATH',
    '--review-env',
    'FIXTURE_PLAN',
    '--review-env',
    'FIXTURE_LOG',
  ];
}

export function fixtureEnv(fixture: InstalledFixture): Record<string, string> {
  return { FIXTURE_PLAN: fixture.plan, FIXTURE_LOG: fixture.log };
}
