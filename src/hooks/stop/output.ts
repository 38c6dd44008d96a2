/**
 * What a Stop hook prints (docs/stop-hooks.md "Output"). Claude Code: to
 * block, exit 0 with {"decision":"block","reason":TEXT}; to pass, exit 0 with nothing on
 * stdout. Codex: the same block object and `{}` to pass, each checked against Codex's own output
 * schema before it is printed. TEXT is feedback for the agent and ends with one line of JSON
 * {"failures":[{task_id,code}],"next_action":SENTENCE,"next":{operation[,task_id][,collector_profile_id]}}
 * (the JSON line is inside the reason string, so the clients' output schemas are unaffected). Every human
 * line goes through displayLines: a name with a control or bidirectional formatting character
 * (a file of the workspace, a line of a command's output) reaches the agent and its transcript
 * escaped (`\u202e`) and marked `[!]`, never raw.
 */
import { externalSchemaProblem } from '../../agent-state/external-schema.js';
import { displayLines } from '../../contracts/display-text.js';
import { AgentscmError } from '../../contracts/errors.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { CODEX_STOP_OUTPUT_SCHEMA } from './codex-schemas.js';
import type { StopClient } from './payload.js';

/** next.operation (spec: typed data, never a command). */
export const STOP_NEXT_OPERATIONS = [
  'collector_claim',
  'reconcile',
  'collector_finalize',
  'checkpoint',
  'none',
] as const;
export type StopNextOperation = (typeof STOP_NEXT_OPERATIONS)[number];

export interface StopNext {
  readonly operation: StopNextOperation;
  /** Present exactly for collector_claim and reconcile. */
  readonly task_id?: string;
  /** A collector_claim's installed collector profile (64 hex), when its step has one. */
  readonly collector_profile_id?: string;
}

export interface StopFailure {
  readonly task_id: string;
  readonly code: string;
}

export interface StopFeedback {
  /** Human lines before the JSON line (what failed and why, bounded). */
  readonly lines: readonly string[];
  readonly failures: readonly StopFailure[];
  readonly next_action: string;
  readonly next: StopNext;
}

export type StopDecision =
  { readonly decision: 'pass' } | { readonly decision: 'block'; readonly feedback: StopFeedback };

export interface StopOutput {
  readonly stdout: string;
  readonly exitCode: 0;
}

/** At most this many failures in the JSON line (the spec's bound for an answer). */
export const MAX_STOP_FAILURES = 32;
const ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A code or id as the JSON line carries it: the pattern of ids, anything else replaced. */
export function stopToken(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 128);
  return ID.test(cleaned) ? cleaned : 'unknown';
}

/** The feedback TEXT: the lines, then the one JSON line. */
export function stopReasonText(feedback: StopFeedback): string {
  const failures = feedback.failures
    .slice(0, MAX_STOP_FAILURES)
    .map((f) => ({ task_id: stopToken(f.task_id), code: stopToken(f.code) }));
  const next: JsonObject = { operation: feedback.next.operation };
  if (feedback.next.task_id !== undefined) next.task_id = feedback.next.task_id;
  const profileId = feedback.next.collector_profile_id;
  if (feedback.next.operation === 'collector_claim' && profileId !== undefined)
    next.collector_profile_id = stopToken(profileId);
  const line = JSON.stringify({ failures, next_action: feedback.next_action, next });
  // The human lines as a reader must see them: a path or output line with a control or bidi
  // character is shown escaped and marked (display-text.ts); the JSON line is escaped already.
  return [...feedback.lines.map(displayLines), line].join('\n');
}

/** The stdout of a decision for a client (exit status 0 either way). */
export function renderStopOutput(client: StopClient, decision: StopDecision): StopOutput {
  if (decision.decision === 'pass') {
    if (client === 'claude-code') return { stdout: '', exitCode: 0 };
    return { stdout: `${checkedCodex({})}\n`, exitCode: 0 };
  }
  const answer = { decision: 'block', reason: stopReasonText(decision.feedback) };
  if (client === 'codex') return { stdout: `${checkedCodex(answer)}\n`, exitCode: 0 };
  return { stdout: `${JSON.stringify(answer)}\n`, exitCode: 0 };
}

function checkedCodex(answer: JsonObject): string {
  const problem = externalSchemaProblem(CODEX_STOP_OUTPUT_SCHEMA, answer);
  if (problem !== null)
    throw new AgentscmError('INTERNAL', `the Codex Stop answer does not conform to Codex's output schema (${problem})`);
  return JSON.stringify(answer);
}
