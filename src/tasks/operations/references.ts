/**
 * The entrypoint reads of a task: `instructions` and `reference` (one named reference of the
 * stored canonical task, bounded and digest-checked).
 */
import { AgentscmError } from '../../contracts/errors.js';
import {
  entrypointToJson,
  offersSupportedSchema,
  type InstructionEntrypointResponse,
  type InstructionRequest,
} from '../../contracts/instruction-entrypoint.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import {
  REFERENCE_MAX_BYTES,
  referenceResponseForBody,
  schemaMismatch,
  type ReferenceFetchRequest,
  type ReferenceFetchResponse,
} from '../../contracts/named-reference.js';
import { sameAgent, SUPPORTED_SCHEMA_VERSIONS, TASK_CONTRACT_VERSION } from '../../contracts/task/common.js';
import type { WorkflowTask } from '../../contracts/task/task.js';
import { readRevisionFile, statRevisionPath } from '../../native/revisions.js';
import type { TaskContext } from '../context.js';
import { readAuthority } from '../transition.js';
import { locateTask } from './lookups.js';

/** `instructions`: the task's entrypoint, or an explicit schema mismatch (never an empty task). */
export function instructionsOperation(
  ctx: TaskContext,
  request: InstructionRequest,
): InstructionEntrypointResponse | JsonValue {
  return ctx.guard(ctx.actor, 'instructions', () => {
    if (!offersSupportedSchema(request.supported_schema_versions))
      return schemaMismatch(
        request.supported_schema_versions,
        TASK_CONTRACT_VERSION,
        SUPPORTED_SCHEMA_VERSIONS,
      ) as unknown as JsonValue;
    const { task } = locateTask(ctx, request.task_id);
    return { status: 'entrypoint', entrypoint: entrypointToJson(task.entrypoint) };
  });
}

/**
 * The task a reference read names, or the bounded answer when there is none: an id that is
 * neither retained nor a task of the current subject is `denied/not_in_task`, and a subject that
 * is no longer current is `uncertain/subject_changed` (docs/agent-tasks.md "One core, thin
 * adapters": every `reference` outcome distinct and bounded).
 */
function locateReferencedTask(
  ctx: TaskContext,
  request: ReferenceFetchRequest,
): { readonly found: { task: WorkflowTask; digest: string } } | { readonly answer: ReferenceFetchResponse } {
  try {
    return { found: locateTask(ctx, request.task_id) };
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'TASK_NOT_FOUND')
      return { answer: { status: 'denied', name: request.name, code: 'not_in_task' } };
    if (error instanceof AgentscmError && error.code === 'TASK_STALE')
      return { answer: { status: 'uncertain', name: request.name, code: 'subject_changed' } };
    throw error;
  }
}

/**
 * `reference`: one named reference of the stored canonical task. Repository, revision and path
 * come from the task, never from the caller; the stored size is checked against 128 KiB before
 * anything is read; the body's SHA-256 must equal both the stored reference and the request
 * (`denied/digest_mismatch` otherwise) and the body must be UTF-8 (`denied/not_utf8`): a retry
 * cannot change immutable bytes, so neither is `uncertain`.
 */
export function referenceOperation(
  ctx: TaskContext,
  request: ReferenceFetchRequest,
): ReferenceFetchResponse | JsonValue {
  const name = request.name;
  const denied = (code: 'not_authorized' | 'not_in_task' | 'digest_mismatch'): JsonValue => ({
    status: 'denied',
    name,
    code,
  });
  const uncertain = (code: 'source_unavailable' | 'store_busy' | 'subject_changed'): JsonValue => ({
    status: 'uncertain',
    name,
    code,
  });
  if (!sameAgent(request.agent, ctx.actor)) return denied('not_authorized');
  try {
    return ctx.guard(ctx.actor, 'reference', (): JsonValue => {
      if (!SUPPORTED_SCHEMA_VERSIONS.includes(request.expected_schema_version)) {
        return schemaMismatch(
          [request.expected_schema_version],
          TASK_CONTRACT_VERSION,
          SUPPORTED_SCHEMA_VERSIONS,
        ) as unknown as JsonValue;
      }
      const located = locateReferencedTask(ctx, request);
      if ('answer' in located) return located.answer as JsonValue;
      const { task, digest } = located.found;
      if (digest !== request.task_digest) return uncertain('subject_changed');
      const reference = task.entrypoint.references.find((r) => r.name === name);
      if (reference === undefined) return denied('not_in_task');
      if (reference.sha256 !== request.expected_sha256) return denied('digest_mismatch');
      return readAuthority(ctx, (auth): JsonValue => {
        const entry = statRevisionPath(auth, task.subject.repository, task.subject.revision, reference.path);
        if (entry === null || entry.mode === 'symlink') return { status: 'missing', name };
        if (entry.size > BigInt(REFERENCE_MAX_BYTES))
          return { status: 'limit', name, byte_length: Number(entry.size), limit_bytes: REFERENCE_MAX_BYTES };
        const bytes = readRevisionFile(auth, task.subject.repository, task.subject.revision, reference.path, {
          maxBytes: REFERENCE_MAX_BYTES,
        });
        return referenceResponseForBody(reference, request, bytes) as JsonValue;
      });
    });
  } catch (error) {
    if (error instanceof AgentscmError && error.code === 'TASK_NOT_AUTHORIZED') return denied('not_authorized');
    if (error instanceof AgentscmError && error.code === 'STORE_BUSY') return uncertain('store_busy');
    throw error;
  }
}
