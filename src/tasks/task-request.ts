/**
 * `agent-task call heartbeat|cancel|reconcile --task ID` (docs/agent-tasks.md "Requests by task
 * id"): the request body built from the task's current attempt as the journal retains it, so an
 * agent or operator never copies digests, attempt ids, executor bindings and fences by hand. The
 * body is the one a hand-written document would hold (fresh request id, the grant's actor), and it
 * goes through the same strict decoder and transition as `--input`: a body built from a stale
 * read is refused by the transition exactly as a stale hand-written one would be.
 */
import { randomBytes } from 'node:crypto';

import { AgentscmError } from '../contracts/errors.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { agentToJson, executorToJson } from '../contracts/task/common.js';
import { MAX_REASON_BYTES } from '../contracts/task/requests.js';
import { readTokenFile } from '../native/grant-token-file.js';
import type { Store } from '../native/store-handle.js';
import { journalRead } from '../workflows/journal.js';
import { currentAttempt } from './attempt-rows.js';
import { authorizeTaskToken } from './grant-guard.js';
import { findRetainedTask } from './journal-rows.js';

/** The operations `--task` builds a body for. */
export const TASK_ID_OPERATIONS: readonly string[] = ['heartbeat', 'cancel', 'reconcile'];

export interface TaskRequestInput {
  readonly store: Store;
  readonly tokenFile: string;
  readonly operation: string;
  readonly taskId: string;
  readonly reason?: string | undefined;
  readonly repository?: string | undefined;
}

/** The canonical request body of `operation` for the current attempt of `taskId`. */
export function buildTaskRequest(input: TaskRequestInput): Uint8Array {
  if (!TASK_ID_OPERATIONS.includes(input.operation)) {
    throw new AgentscmError('USAGE', `--task builds no request for operation ${input.operation}`, {
      hint: `--task fills the request of ${TASK_ID_OPERATIONS.join(', ')}; pass --input FILE for the others`,
    });
  }
  const reason = input.reason ?? null;
  if (input.operation === 'heartbeat' && reason !== null) {
    throw new AgentscmError('USAGE', '--reason does not apply to heartbeat', { hint: 'leave out --reason' });
  }
  if (reason !== null && Buffer.byteLength(reason, 'utf8') > MAX_REASON_BYTES) {
    throw new AgentscmError('USAGE', `--reason is longer than ${MAX_REASON_BYTES} bytes`, {
      hint: `say why in at most ${MAX_REASON_BYTES} bytes of UTF-8`,
    });
  }
  const authorization = authorizeTaskToken({
    store: input.store,
    token: readTokenFile(input.tokenFile),
    repository: input.repository,
  });
  const journal = input.store.journal(false);
  const found =
    journal === null
      ? null
      : journalRead(journal, () => {
          const task = findRetainedTask(journal, input.taskId);
          return task === null ? null : { task, attempt: currentAttempt(journal, task) };
        });
  if (found === null || found.task.task.subject.repository !== authorization.repository) {
    throw new AgentscmError('TASK_NOT_FOUND', `no task ${input.taskId} has been claimed in this repository`, {
      hint: '`agentscm agent-task call next --change ID` lists the tasks of a Change; a claimed one has an attempt',
      details: { task_id: input.taskId },
    });
  }
  if (found.attempt === null) {
    throw new AgentscmError('TASK_ATTEMPT_NOT_FOUND', `task ${input.taskId} has no current attempt`, {
      hint: 'claim it first; a superseded attempt is not current',
    });
  }
  const attempt = found.attempt.attempt;
  const body: JsonObject = {
    version: 1,
    request_id: `r-${randomBytes(16).toString('hex')}`,
    action: input.operation,
    task_id: found.task.task.task_id,
    task_digest: found.task.digest,
    attempt_id: attempt.attempt_id,
    attempt_digest: found.attempt.digest,
    execution_operation_id: attempt.execution_operation_id,
    agent: agentToJson(authorization.actor),
    executor: attempt.executor === null ? null : executorToJson(attempt.executor),
    fence: attempt.fence,
    reason,
  };
  return new Uint8Array(encodeCanonical(body));
}
