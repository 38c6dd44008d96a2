/**
 * The answer of the read-only `qualification` operation (docs/qualification.md "The answer", the
 * qualification paragraph; docs/qualification.md): whether the exact subject qualifies now, the
 * per-task states, at most 32 typed failures and a typed `next` — data, never a command. The
 * strict decoder is what Stop hooks and other clients validate an answer with: `next.operation`
 * is one of five names, `task_id` is present exactly for collector_claim and reconcile, ids and
 * codes match the general id rule, digests are 64 lowercase hex characters. A failure code is
 * any id-shaped string (spec: "ids and codes match [A-Za-z0-9._-]{1,128}"), not only today's
 * stable codes, so that a client keeps reading the answers of a newer hub that adds codes.
 */
import { OUTPUT_TAIL_LIMITS, type ShownOutputTail } from '../collector/output-tail.js';
import { AgentscmError } from '../errors.js';
import type { JsonObject } from '../json/json-value.js';
import { defineTaskDecoder, HEX64_SCHEMA, ID_SCHEMA, type TaskDecoder } from './common.js';

/** At most this many failures in one answer (the first ones, in plan order). */
export const MAX_QUALIFICATION_FAILURES = 32;
/** At most this many tasks (a plan has at most 32 steps). */
export const MAX_QUALIFICATION_TASKS = 32;
/** Largest accepted answer in bytes. */
export const MAX_QUALIFICATION_BYTES = 64 * 1024;

export const QUALIFICATION_TASK_STATES = ['pending', 'claimed', 'succeeded', 'failed', 'uncertain', 'blocked'] as const;
export type QualificationTaskState = (typeof QUALIFICATION_TASK_STATES)[number];

/**
 * The stable failure codes (docs/qualification.md "Failure codes"). A code is data a client
 * matches on; its meaning never changes, new ones may be added.
 */
export const QUALIFICATION_FAILURE_CODES = [
  'attempt_in_progress',
  'attempt_uncertain',
  'authorization_changed',
  'capability_unavailable',
  'collector_not_passed',
  'dependency_incomplete',
  'deps_lockfile_changed',
  'prior_subject_unresolved',
  'profile_changed',
  'receipt_invalid',
  'receipt_missing',
  'result_failed',
  'result_not_qualifying',
  'review_not_passed',
  'source_paths_failed',
  'task_pending',
] as const;
export type QualificationFailureCode = (typeof QUALIFICATION_FAILURE_CODES)[number];

export const QUALIFICATION_NEXT_OPERATIONS = [
  'collector_claim',
  'reconcile',
  'collector_finalize',
  'checkpoint',
  'none',
] as const;

/** At most this many command lines in `next.commands`, of at most this many words of this many characters. */
export const MAX_NEXT_COMMANDS = 4;
export const MAX_NEXT_COMMAND_WORDS = 64;
export const MAX_NEXT_COMMAND_WORD_CHARS = 4096;

/**
 * `next`: typed data (operation, task_id). A collector_claim names the step's installed collector profile
 * (`collector_profile_id`) when it has one; `commands`, optional, holds the argv of the exact command lines
 * (each starting with `agentscm`) a client prints for the agent — it is never required to act on `next`.
 */
export type QualificationNext =
  | {
      readonly operation: 'collector_claim';
      readonly task_id: string;
      readonly collector_profile_id?: string;
      readonly commands?: readonly (readonly string[])[];
    }
  | { readonly operation: 'reconcile'; readonly task_id: string; readonly commands?: readonly (readonly string[])[] }
  | {
      readonly operation: 'collector_finalize' | 'checkpoint' | 'none';
      readonly commands?: readonly (readonly string[])[];
    };

export interface QualificationTask {
  readonly task_id: string;
  readonly task_digest: string;
  readonly step_id: string;
  readonly required: boolean;
  readonly state: QualificationTaskState;
}

export interface QualificationFailure {
  readonly task_id: string;
  /**
   * One of QUALIFICATION_FAILURE_CODES when this hub wrote it; a decoded answer may carry any id-shaped code (a newer
   * hub's).
   */
  readonly code: string;
  /**
   * A `collector_not_passed` failure's command output tail (docs/agent-tasks.md "Status and recovery"): the last
   * lines of stdout and stderr, at most 40 lines and 4 KiB together, control characters shown as `\xNN`. Optional:
   * absent when the transfer carries none, and in older answers.
   */
  readonly output_tail?: ShownOutputTail;
}

export interface QualificationAnswer {
  readonly qualified: boolean;
  readonly subject_current: boolean;
  readonly receipt_digest: string | null;
  readonly revision: string;
  readonly tasks: readonly QualificationTask[];
  readonly failures: readonly QualificationFailure[];
  readonly next: QualificationNext;
}

/** `next.commands`: argv arrays, each starting with `agentscm`. */
const NEXT_COMMANDS_SCHEMA = {
  type: 'array',
  maxItems: MAX_NEXT_COMMANDS,
  items: {
    type: 'array',
    minItems: 2,
    maxItems: MAX_NEXT_COMMAND_WORDS,
    items: { type: 'string', minLength: 1, maxLength: MAX_NEXT_COMMAND_WORD_CHARS },
  },
} as const;

export const QUALIFICATION_ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['qualified', 'subject_current', 'receipt_digest', 'revision', 'tasks', 'failures', 'next'],
  properties: {
    qualified: { type: 'boolean' },
    subject_current: { type: 'boolean' },
    receipt_digest: { anyOf: [{ type: 'null' }, HEX64_SCHEMA] },
    revision: HEX64_SCHEMA,
    tasks: {
      type: 'array',
      maxItems: MAX_QUALIFICATION_TASKS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['task_id', 'task_digest', 'step_id', 'required', 'state'],
        properties: {
          task_id: ID_SCHEMA,
          task_digest: HEX64_SCHEMA,
          step_id: ID_SCHEMA,
          required: { type: 'boolean' },
          state: { enum: [...QUALIFICATION_TASK_STATES] },
        },
      },
    },
    failures: {
      type: 'array',
      maxItems: MAX_QUALIFICATION_FAILURES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['task_id', 'code'],
        properties: {
          task_id: ID_SCHEMA,
          code: ID_SCHEMA,
          output_tail: {
            type: 'object',
            additionalProperties: false,
            required: ['stdout', 'stderr', 'truncated'],
            properties: {
              stdout: { type: 'string', maxUtf8Bytes: OUTPUT_TAIL_LIMITS.shownBytes },
              stderr: { type: 'string', maxUtf8Bytes: OUTPUT_TAIL_LIMITS.shownBytes },
              truncated: { type: 'boolean' },
            },
          },
        },
      },
    },
    next: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['operation', 'task_id'],
          properties: {
            operation: { enum: ['collector_claim'] },
            task_id: ID_SCHEMA,
            collector_profile_id: HEX64_SCHEMA,
            commands: NEXT_COMMANDS_SCHEMA,
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['operation', 'task_id'],
          properties: { operation: { enum: ['reconcile'] }, task_id: ID_SCHEMA, commands: NEXT_COMMANDS_SCHEMA },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['operation'],
          properties: {
            operation: { enum: ['collector_finalize', 'checkpoint', 'none'] },
            commands: NEXT_COMMANDS_SCHEMA,
          },
        },
      ],
    },
  },
} as const;

function invalid(message: string): AgentscmError {
  return new AgentscmError('QUALIFICATION_ANSWER_INVALID', message, {
    hint: 'the answer is not a qualification answer; treat the subject as not qualified',
  });
}

/**
 * Rules the schema cannot express: a qualified answer is current, names a receipt and has no failures; a superseded one
 * has no tasks and says checkpoint.
 */
export function checkQualificationAnswer(answer: QualificationAnswer): void {
  if (
    answer.qualified &&
    (!answer.subject_current ||
      answer.receipt_digest === null ||
      answer.failures.length > 0 ||
      answer.next.operation !== 'none')
  ) {
    throw invalid('a qualified answer must be current, name its receipt_digest, list no failures and have next none');
  }
  if (!answer.qualified && answer.receipt_digest !== null)
    throw invalid('receipt_digest must be null unless qualified');
  if (!answer.subject_current && (answer.tasks.length > 0 || answer.next.operation !== 'checkpoint')) {
    throw invalid('a superseded subject has no tasks and next checkpoint');
  }
  for (const argv of answer.next.commands ?? []) {
    if (argv[0] !== 'agentscm') throw invalid('every command line in next.commands starts with agentscm');
  }
  let tailBytes = 0;
  for (const failure of answer.failures) {
    const tail = failure.output_tail;
    if (tail === undefined) continue;
    const bytes = Buffer.byteLength(tail.stdout, 'utf8') + Buffer.byteLength(tail.stderr, 'utf8');
    const lines = [tail.stdout, tail.stderr].reduce((n, text) => n + (text === '' ? 0 : text.split('\n').length), 0);
    if (bytes > OUTPUT_TAIL_LIMITS.shownBytes || lines > OUTPUT_TAIL_LIMITS.shownLines)
      throw invalid(
        `the output tail of task ${failure.task_id} has ${lines} lines and ${bytes} bytes; at most ` +
          `${OUTPUT_TAIL_LIMITS.shownLines} lines and ${OUTPUT_TAIL_LIMITS.shownBytes} bytes are shown`,
      );
    tailBytes += bytes;
  }
  if (tailBytes > OUTPUT_TAIL_LIMITS.answerBytes)
    throw invalid(
      `the output tails hold ${tailBytes} bytes; an answer shows at most ${OUTPUT_TAIL_LIMITS.answerBytes}`,
    );
  const ids = new Set<string>();
  for (const task of answer.tasks) {
    if (ids.has(task.task_id)) throw invalid(`task ${task.task_id} is listed twice`);
    ids.add(task.task_id);
  }
}

/** Strict decoder of a qualification answer (clients, Stop hooks). */
export const qualificationAnswerDecoder: TaskDecoder<QualificationAnswer> = defineTaskDecoder<QualificationAnswer>(
  'agent-task.qualification-answer',
  QUALIFICATION_ANSWER_SCHEMA,
  {
    maxBytes: MAX_QUALIFICATION_BYTES,
    versionField: null,
    check: checkQualificationAnswer,
  },
);

/** The JSON of an answer (every field; no u64 inside). */
export function qualificationToJson(answer: QualificationAnswer): JsonObject {
  return {
    qualified: answer.qualified,
    subject_current: answer.subject_current,
    receipt_digest: answer.receipt_digest,
    revision: answer.revision,
    tasks: answer.tasks.map((task) => ({ ...task })),
    failures: answer.failures.map((failure): JsonObject => {
      const json: JsonObject = { task_id: failure.task_id, code: failure.code };
      if (failure.output_tail !== undefined) json.output_tail = { ...failure.output_tail };
      return json;
    }),
    next: nextToJson(answer.next),
  };
}

/** The JSON of `next` (commands copied word by word). */
export function nextToJson(next: QualificationNext): JsonObject {
  const { commands, ...rest } = next;
  return commands === undefined ? { ...rest } : { ...rest, commands: commands.map((argv) => [...argv]) };
}
