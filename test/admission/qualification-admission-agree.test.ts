/**
 * Qualification and approval never disagree (issue #25 item 11; docs/qualification.md "One
 * decision"): over generated subjects on real stores — the command step required or optional,
 * the source-paths step required or optional and matching or not, the command collected by the
 * real claim/import chain with a passed or failed record (or not at all), the origin grant
 * revoked or not, and a completed server-executed run of the exact plan (its command attempt
 * recorded durably in the real journal by a recording runtime) passed, failed or absent —
 * `qualification` (the operator's read-only core, what `agentscm qualification` and the
 * agent routes answer from) and `approve` (the operator's
 * core, in its writer transaction) are asked about the same subject: qualified exactly when
 * approve admits, with the receipt approve binds; not qualified with at least one failure code
 * exactly when approve refuses.
 */
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';
import fc from 'fast-check';

import { isAgentscmError } from '../../src/contracts/errors.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { revokeGrantInStore } from '../../src/native/grants.js';
import { currentPolicyEpoch } from '../../src/native/policy.js';
import { getTargetRequirement } from '../../src/native/requirements.js';
import { openAuthority, readTransaction } from '../../src/native/store.js';
import { approveChange } from '../../src/tasks/admission/admission.js';
import { qualifyLocal } from '../../src/tasks/admission/qualification-local.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { finishCommandAttempt, reserveCommandAttempt } from '../../src/workflows/command-attempts.js';
import type { CommandStepRequest, CommandStepResult, CommandStepRuntime } from '../../src/workflows/command-step.js';
import { compileRequirementPlan } from '../../src/workflows/requirement.js';
import { runWorkflow } from '../../src/workflows/runner.js';
import { importEnvelope } from '../support/admission.js';
import { claim, envelopeOf, makeEvidence, transferParts, type Evidence } from '../support/evidence.js';
import { addRevision, CHANGE_ID, checkpoint, defaultFiles, PROFILE, type StepSpec } from '../support/tasks.js';

/** A command runtime that records one durable attempt in the real journal, passing or failing. */
class RecordingRuntime implements CommandStepRuntime {
  constructor(private readonly passes: boolean) {}

  run(request: CommandStepRequest): Promise<CommandStepResult> {
    // The runner's own journal connection, as the collector runtime uses it.
    const journal = request.store.requireJournal();
    const { attempt } = reserveCommandAttempt(journal.db, {
      repository: request.repository,
      runId: request.runId,
      stepId: request.stepId,
      generation: 1n,
      requestDigest: request.recipeDigest,
      requestJson: Buffer.from('{}'),
      snapshotPath: '/nonexistent',
      nowMs: Date.now(),
    });
    const record = Buffer.from(JSON.stringify({ exit_code: this.passes ? 0 : 1 }));
    const state = this.passes ? 'succeeded' : 'failed';
    const finished = finishCommandAttempt(journal.db, attempt.attempt_id, {
      state,
      outcome: this.passes ? 'passed' : 'exit_nonzero',
      recordJson: record,
      recordDigest: sha256Hex(record),
      summary: state,
      stdout: Buffer.alloc(0),
      stderr: Buffer.alloc(0),
      nowMs: Date.now(),
    });
    return Promise.resolve({
      state,
      attemptId: finished.attempt_id,
      generation: finished.generation,
      outcome: finished.outcome ?? '',
      recordDigest: finished.record_digest,
      summary: state,
    });
  }
}

interface Case {
  readonly unitRequired: boolean;
  readonly pathsRequired: boolean;
  readonly pathsMatch: boolean;
  readonly collected: 'none' | 'passed' | 'failed';
  readonly revokeOrigin: boolean;
  readonly serverRun: 'none' | 'passed' | 'failed';
}

const cases = fc.record({
  unitRequired: fc.boolean(),
  pathsRequired: fc.boolean(),
  pathsMatch: fc.boolean(),
  collected: fc.constantFrom('none', 'passed', 'failed'),
  revokeOrigin: fc.boolean(),
  serverRun: fc.constantFrom('none', 'passed', 'failed'),
}) as fc.Arbitrary<Case>;

/** Run the target's requirement for the current subject, as the server-executed loop does. */
async function serverRun(ev: Evidence, passes: boolean): Promise<void> {
  const auth = openAuthority(ev.store.dataDir, { mode: 'read' });
  let definition: Uint8Array;
  try {
    definition = readTransaction(auth, () => {
      const requirement = getTargetRequirement(auth, ev.store.repository, 'main');
      const compiled = compileRequirementPlan(auth, requirement, {
        revision: ev.store.revision,
        policyEpoch: currentPolicyEpoch(auth, ev.store.repository),
        change: { id: CHANGE_ID, version: ev.store.changeVersion, contextDigest: ev.store.contextDigest },
      });
      return compiled.plan.definitionBytes;
    });
  } finally {
    auth.close();
  }
  const store = openStore(ev.store.dataDir, { mode: 'write' });
  try {
    await runWorkflow(
      { store, runtime: new RecordingRuntime(passes) },
      `run-${passes ? 'pass' : 'fail'}`,
      definition,
      32,
    );
  } finally {
    store.close();
  }
}

async function subjectOf(t: TestContext, c: Case): Promise<Evidence> {
  const steps: StepSpec[] = [
    { id: 'paths', kind: 'source_paths', required: c.pathsRequired },
    { id: 'unit', kind: 'command', needs: ['paths'], required: c.unitRequired },
  ];
  const ev = makeEvidence(t, steps);
  // Version 2 of the Change: the same a.txt (source paths match) or another one.
  const revision = addRevision(
    ev.store.dataDir,
    ev.store.repository,
    defaultFiles(c.pathsMatch ? { 'b.txt': 'beta' } : { 'a.txt': 'changed' }),
    ev.store.revision,
  );
  checkpoint(ev.store, revision);
  if (c.collected !== 'none') {
    let descriptor: ReturnType<typeof claim> | null = null;
    try {
      descriptor = claim(ev);
    } catch (error) {
      // A source-paths step that does not match keeps the command from being claimed at all.
      if (!(isAgentscmError(error) && error.code === 'TASK_DEPENDENCY_INCOMPLETE' && !c.pathsMatch)) throw error;
    }
    if (descriptor !== null) {
      const parts = transferParts(descriptor);
      if (c.collected === 'failed') parts.record = { ...parts.record, outcome: 'failed', exit_code: 1 };
      importEnvelope(ev, envelopeOf(ev.key, parts));
    }
  }
  if (c.serverRun !== 'none') await serverRun(ev, c.serverRun === 'passed');
  if (c.revokeOrigin) withStore(ev.store.dataDir, 'write', (s) => revokeGrantInStore(s, ev.grantId, Date.now()));
  return ev;
}

/** What approve does with the subject: the receipt it binds, or the refusal's code. */
function approveOutcome(ev: Evidence): { readonly receipt_digest: string } | { readonly refused: string } {
  try {
    const { approval } = withStore(ev.store.dataDir, 'write', (store) =>
      approveChange(store, { profile: PROFILE, target: 'main', change: CHANGE_ID, context: ev.store.contextDigest }),
    );
    return { receipt_digest: approval.receipt_digest };
  } catch (error) {
    if (isAgentscmError(error) && error.code.startsWith('ADMISSION_')) return { refused: error.code };
    throw error;
  }
}

test('qualification and approve agree on generated subjects: qualified exactly when approve admits, with its receipt; a refusal is always a failure code', async (t) => {
  const seen = new Set<string>();
  await fc.assert(
    fc.asyncProperty(cases, async (c) => {
      const ev = await subjectOf(t, c);
      // The operator's question (`agentscm qualification`): the revoked grant cannot ask any more.
      const answer = withStore(ev.store.dataDir, 'read', (store) =>
        qualifyLocal(store, { profile: PROFILE, target: 'main', change: CHANGE_ID, context: ev.store.contextDigest }),
      );
      const approved = approveOutcome(ev);
      seen.add('refused' in approved ? approved.refused : 'admitted');
      if ('receipt_digest' in approved) {
        assert.equal(
          answer.qualified,
          true,
          `approve admitted ${JSON.stringify(c)} but qualification says ${JSON.stringify(answer.failures)}`,
        );
        assert.equal(answer.receipt_digest, approved.receipt_digest);
        assert.deepEqual(answer.failures, []);
      } else {
        assert.equal(
          answer.qualified,
          false,
          `approve refused ${JSON.stringify(c)} with ${approved.refused} but qualification says qualified`,
        );
        assert.ok(
          answer.failures.length > 0,
          `approve refused ${JSON.stringify(c)} with ${approved.refused}; qualification must name a failure code`,
        );
      }
    }),
    {
      numRuns: Number(process.env.AGENTSCM_AGREE_RUNS ?? 14),
      // The reproducers of issue #25 item 11 always run: an optional command whose collected record
      // failed, and a completed server-executed run that approve admits.
      examples: [
        [
          {
            unitRequired: false,
            pathsRequired: false,
            pathsMatch: false,
            collected: 'passed',
            revokeOrigin: false,
            serverRun: 'none',
          },
        ],
        [
          {
            unitRequired: false,
            pathsRequired: true,
            pathsMatch: true,
            collected: 'failed',
            revokeOrigin: false,
            serverRun: 'none',
          },
        ],
        [
          {
            unitRequired: true,
            pathsRequired: true,
            pathsMatch: true,
            collected: 'none',
            revokeOrigin: false,
            serverRun: 'passed',
          },
        ],
        [
          {
            unitRequired: true,
            pathsRequired: true,
            pathsMatch: true,
            collected: 'passed',
            revokeOrigin: true,
            serverRun: 'passed',
          },
        ],
      ],
    },
  );
  assert.ok(
    seen.has('admitted') && seen.has('ADMISSION_COMMAND_REQUIRED'),
    `the generated subjects cover admission and the command check (${[...seen].join(', ')})`,
  );
});
