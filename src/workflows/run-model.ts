/**
 * A retained run as the runner and the status projection see it: the stored definition,
 * its structural order and the recorded steps, checked against each other on every load
 * (spec: "Local journal consistency checks bind retained definitions, ordered steps and
 * observations"), and the run state derived from the step states.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { JsonValue } from '../contracts/json/json-value.js';
import { parseStrictJson } from '../contracts/json/strict-json.js';
import { decodeWorkflowDefinition, type WorkflowDefinition } from '../contracts/workflow-definition.js';
import { sha256Hex } from '../crypto/sha256.js';
import {
  getRun,
  getRunHeader,
  listSteps,
  listStepStates,
  type Journal,
  type RunHeader,
  type RunRecord,
  type RunState,
  type StepRecord,
  type StepState,
} from './journal.js';
import { compileStructure } from './plan.js';

export interface RunModelStep extends StepRecord {
  readonly needs: readonly string[];
}

export interface RunModel {
  readonly run: RunRecord;
  readonly definition: WorkflowDefinition;
  /** Execution order. */
  readonly steps: readonly RunModelStep[];
}

/** Largest canonical step result the journal reads back (source_paths: 32 observations). */
const MAX_RESULT_BYTES = 1024 * 1024;

function inconsistent(runId: string, what: string): AgentscmError {
  return new AgentscmError('WORKFLOW_JOURNAL_INCONSISTENT', `run "${runId}": ${what}`, {
    hint: 'the retained records do not agree with each other; inspect the journal file, nothing was changed',
    details: { run_id: runId },
  });
}

interface DecodedDefinition {
  readonly definition: WorkflowDefinition;
  readonly order: readonly number[];
}

// Decoding and structurally compiling a stored definition is deterministic in its bytes; a
// controller reloads its run after every step, so the result is kept per definition SHA-256
// (checked against the stored bytes on every load) for the few runs a process touches.
const decodedCache = new Map<string, DecodedDefinition>();
const DECODED_CACHE_SIZE = 8;

function cacheDecoded(sha256: string, decoded: DecodedDefinition): void {
  if (decodedCache.size >= DECODED_CACHE_SIZE) decodedCache.delete(decodedCache.keys().next().value as string);
  decodedCache.set(sha256, decoded);
}

function decodeStored(runId: string, bytes: Buffer, sha256: string): DecodedDefinition {
  const cached = decodedCache.get(sha256);
  if (cached !== undefined) return cached;
  let definition: WorkflowDefinition;
  try {
    definition = decodeWorkflowDefinition(bytes);
  } catch (error) {
    throw inconsistent(runId, `the stored definition no longer decodes: ${(error as Error).message}`);
  }
  const decoded = { definition, order: compileStructure(definition).order };
  cacheDecoded(sha256, decoded);
  return decoded;
}

/**
 * Remember the decoded form of definition bytes this process just stored (a new run): the
 * caller decoded the same definition and encoded `sha256`'s bytes from it, so the first
 * reload need not decode them again. Loads still check the stored bytes against `sha256`.
 */
export function rememberStoredDefinition(
  sha256: string,
  definition: WorkflowDefinition,
  order: readonly number[],
): void {
  if (!decodedCache.has(sha256)) cacheDecoded(sha256, { definition, order });
}

// The definition bytes last found to hash to their stored SHA-256: a controller reloads the
// same (up to ~1 MiB) definition after every step, and comparing bytes is cheaper than hashing.
let verifiedDefinition: { readonly sha256: string; readonly bytes: Buffer } | null = null;

function definitionMatches(bytes: Buffer, sha256: string): boolean {
  if (verifiedDefinition !== null && verifiedDefinition.sha256 === sha256 && verifiedDefinition.bytes.equals(bytes))
    return true;
  if (sha256Hex(bytes) !== sha256) return false;
  verifiedDefinition = { sha256, bytes };
  return true;
}

/** Load a run and check its definition, order and results against each other (read snapshot of the caller). */
export function loadRunModel(journal: Journal, runId: string): RunModel {
  const run = getRun(journal, runId);
  if (!definitionMatches(run.definition, run.definition_sha256))
    throw inconsistent(runId, 'the stored definition does not match its SHA-256');
  const { definition, order } = decodeStored(runId, run.definition, run.definition_sha256);
  if (
    definition.name !== run.name ||
    definition.source.repository !== run.repository ||
    definition.source.revision !== run.revision ||
    definition.source.policy_epoch !== run.policy_epoch
  ) {
    throw inconsistent(runId, 'the run row does not match its stored definition');
  }
  const records = listSteps(journal, runId);
  if (records.length !== order.length || records.length !== run.step_count)
    throw inconsistent(runId, 'the number of recorded steps does not match the definition');
  const steps = records.map((record, position): RunModelStep => {
    const declared = definition.steps[order[position] ?? -1];
    if (
      declared === undefined ||
      record.position !== position ||
      record.step_id !== declared.id ||
      record.kind !== declared.action.kind ||
      record.required !== declared.required
    ) {
      throw inconsistent(runId, `step at position ${position} does not match the stored definition's order`);
    }
    const hasResult = record.result !== null;
    if (hasResult !== (record.result_sha256 !== null))
      throw inconsistent(runId, `step "${record.step_id}" has a result without its digest`);
    if (record.result !== null && sha256Hex(record.result) !== record.result_sha256)
      throw inconsistent(runId, `the result of step "${record.step_id}" does not match its SHA-256`);
    const open = record.state === 'pending' || record.state === 'running';
    if (open === hasResult)
      throw inconsistent(
        runId,
        `step "${record.step_id}" is ${record.state} but ${hasResult ? 'has' : 'has no'} recorded result`,
      );
    return { ...record, needs: declared.needs };
  });
  return { run, definition, steps };
}

/**
 * The run and its step states with their dependencies, without reading results: enough to
 * derive the run state inside a step commit (the full check runs on every loadRunModel).
 */
export function loadStepStates(
  journal: Journal,
  runId: string,
): { run: RunHeader; steps: { step_id: string; required: boolean; state: StepState; needs: readonly string[] }[] } {
  const run = getRunHeader(journal, runId);
  const { definition, order } =
    decodedCache.get(run.definition_sha256) ??
    decodeStored(runId, getRun(journal, runId).definition, run.definition_sha256);
  const states = listStepStates(journal, runId);
  if (states.length !== order.length)
    throw inconsistent(runId, 'the number of recorded steps does not match the definition');
  const steps = states.map((step, position) => {
    const declared = definition.steps[order[position] ?? -1];
    if (declared === undefined || declared.id !== step.step_id)
      throw inconsistent(runId, `step at position ${position} does not match the stored definition's order`);
    return { ...step, needs: declared.needs };
  });
  return { run, steps };
}

/** The recorded result of a step as a JSON value, or null. */
export function stepResultValue(step: StepRecord): JsonValue {
  if (step.result === null) return null;
  return parseStrictJson(step.result, { maxBytes: MAX_RESULT_BYTES });
}

type Class = 'ok' | 'failed' | 'blocked' | 'open';

function classOf(state: StepState): Class {
  switch (state) {
    case 'succeeded':
      return 'ok';
    case 'failed':
      return 'failed';
    case 'unavailable':
    case 'uncertain':
      return 'blocked';
    case 'pending':
    case 'running':
      return 'open';
    case 'skipped':
      return 'blocked';
  }
}

export interface DerivedState {
  readonly state: RunState;
  readonly reason: string | null;
}

/**
 * The run state implied by the step states (docs/skill-workflows.md "Run states and exit codes"): a failed
 * required step — or a required step skipped because a dependency failed — fails the run; an
 * unavailable, uncertain or otherwise unreachable required step blocks it; with required work
 * all succeeded, any optional step that did not succeed makes it completed_with_omissions.
 * A cancelled run stays cancelled; a run halted because its binding changed stays blocked.
 */
export function deriveRunState(
  current: RunState,
  steps: readonly {
    readonly step_id: string;
    readonly required: boolean;
    readonly state: StepState;
    readonly needs: readonly string[];
  }[],
  haltedReason: string | null = null,
): DerivedState {
  if (current === 'cancelled') return { state: 'cancelled', reason: null };
  if (haltedReason !== null) return { state: 'blocked', reason: haltedReason };
  const classes = new Map<string, Class>();
  let failed: string | null = null;
  let blocked: string | null = null;
  let open = false;
  let omissions = 0;
  for (const step of steps) {
    let cls = classOf(step.state);
    if (step.state === 'skipped') {
      cls = step.needs.some((need) => classes.get(need) === 'failed') ? 'failed' : 'blocked';
    }
    classes.set(step.step_id, cls);
    if (cls === 'open') open = true;
    else if (cls !== 'ok' && step.required) {
      const text =
        step.state === 'skipped'
          ? `required step "${step.step_id}" could not run (a dependency did not succeed)`
          : `required step "${step.step_id}" is ${step.state}`;
      if (cls === 'failed') failed ??= text;
      else blocked ??= text;
    } else if (cls !== 'ok') omissions++;
  }
  if (failed !== null) return { state: 'failed', reason: failed };
  if (blocked !== null) return { state: 'blocked', reason: blocked };
  if (open) return { state: 'running', reason: null };
  return omissions === 0
    ? { state: 'completed', reason: null }
    : { state: 'completed_with_omissions', reason: `${omissions} optional step(s) did not succeed` };
}
