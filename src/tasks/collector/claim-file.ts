/**
 * `agentscm agent-task claim --profile ID --change ID --context DIGEST [--task ID] --token-file F
 * --out FILE` (docs/agent-tasks.md "agent-task claim"): the typed collector claim for one subject
 * as the grant's actor, writing the descriptor (0600, exclusive create: an existing file is
 * never overwritten). The task is `--task` or the subject's command task of the profile's step;
 * the request id and execution operation id are fresh random ids.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, rmSync, writeSync } from 'node:fs';

import { AgentscmError } from '../../contracts/errors.js';
import { encodeCanonical } from '../../contracts/json/canonical-json.js';
import {
  decodeAnyCollectorDescriptor,
  encodeAnyCollectorDescriptor,
} from '../../contracts/review/collector-descriptor.js';
import {
  getCollectorProfile,
  resolveCollectorProfileRef,
  type InstalledCollectorProfile,
} from '../../native/collector-profiles.js';
import { readTokenFile } from '../../native/grant-token-file.js';
import { targetSubjectRecipe } from '../../native/requirements.js';
import { resolveContextFlag } from '../../native/review-contexts.js';
import type { Store } from '../../native/store-handle.js';
import { readTransaction } from '../../native/store.js';
import type { TaskContext } from '../context.js';
import { authorizeTaskToken } from '../grant-guard.js';
import { deriveCurrent } from '../operations/lookups.js';
import { collectorClaimOperation, type CollectorClaimAnswer } from './claim.js';
import { selectCollectorProfile } from './profile-select.js';

export interface ClaimToFileInput {
  /** Opened for writing by the root. */
  readonly store: Store;
  readonly tokenFile: string;
  /** --profile; left out: the profile of --step, else the only step's (profile-select.ts). */
  readonly profileId?: string | undefined;
  readonly step?: string | undefined;
  readonly change: string;
  /** --context; left out: the Change's sole current context. */
  readonly context?: string | undefined;
  readonly taskId?: string | undefined;
  readonly leaseMs: bigint;
  readonly out: string;
  readonly target: string;
}

function freshId(prefix: string): string {
  return `${prefix}-${randomBytes(16).toString('hex')}`;
}

/** Create `path` 0600 with O_EXCL before anything is claimed: an existing file is never replaced (IO_ERROR). */
function createExclusive(path: string): number {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AgentscmError(
      'IO_ERROR',
      code === 'EEXIST'
        ? `--out ${path} already exists; a descriptor file is never overwritten`
        : `cannot create --out ${path}: ${(error as Error).message}`,
      {
        hint: 'name a new file; re-read an earlier descriptor with the collector_descriptor operation',
        details: { errno: code ?? null },
      },
    );
  }
}

function readProfile(store: Store, profileId: string): InstalledCollectorProfile {
  const auth = store.authority();
  return readTransaction(auth, () => getCollectorProfile(auth, resolveCollectorProfileRef(auth, profileId)));
}

/** What `agent-task claim` answers: the collector claim's answer and the descriptor file written. */
export type ClaimFileAnswer = CollectorClaimAnswer & { readonly out: string };

/** Claim and write the descriptor; answers the claim's JSON (with the descriptor) and the file written. */
export function claimToFile(input: ClaimToFileInput): ClaimFileAnswer {
  const token = readTokenFile(input.tokenFile);
  const store = input.store;
  const authorization = authorizeTaskToken({ store, token });
  const installed =
    input.profileId !== undefined
      ? readProfile(store, input.profileId)
      : selectCollectorProfile(store, { repository: authorization.repository, step: input.step });
  const ctx: TaskContext = {
    store,
    actor: authorization.actor,
    repository: authorization.repository,
    profile: installed.profile.workflow_profile,
    target: input.target,
    subject: {
      change_id: input.change,
      context_digest: resolveContextFlag(store, {
        repository: authorization.repository,
        change: input.change,
        context: input.context,
        subjectRecipe: (auth, repository) => targetSubjectRecipe(auth, repository, input.target),
      }),
    },
    guard: authorization.guard,
    origin: authorization.origin,
  };
  const derived = deriveCurrent(ctx);
  const candidates = derived.tasks.filter(
    (t) =>
      t.task.subject.step_id === installed.profile.step_id &&
      (input.taskId === undefined || t.task.task_id === input.taskId),
  );
  const entry = candidates[0];
  if (entry === undefined) {
    throw new AgentscmError(
      'TASK_NOT_FOUND',
      input.taskId === undefined
        ? `the subject has no task of step "${installed.profile.step_id}" (the profile's step)`
        : `the subject has no task ${input.taskId} of step "${installed.profile.step_id}"`,
      {
        hint: "requirements lists the subject's tasks; the profile binds one command step",
      },
    );
  }
  const fd = createExclusive(input.out);
  let answer: CollectorClaimAnswer;
  try {
    // Fresh request ids: never a retry, so the answer is this claim's own CollectorClaimAnswer.
    answer = collectorClaimOperation(ctx, {
      version: 1,
      request_id: freshId('r'),
      agent: authorization.actor,
      collector_profile_id: installed.collector_profile_id,
      task_id: entry.task.task_id,
      task_digest: entry.digest,
      execution_operation_id: freshId('x'),
      requested_lease_ms: input.leaseMs,
    }) as CollectorClaimAnswer;
    const descriptor = decodeAnyCollectorDescriptor(encodeCanonical(answer.descriptor));
    writeSync(fd, encodeAnyCollectorDescriptor(descriptor));
  } catch (error) {
    // A refused claim leaves no file behind (the claim itself changed nothing).
    closeSync(fd);
    rmSync(input.out, { force: true });
    throw error;
  }
  closeSync(fd);
  return { ...answer, out: input.out };
}
