/**
 * The operations the hub serves, registered once and read by both transports (docs/wire.md "Hub":
 * the agent-tasks route takes `{"operation":NAME,...}`, the workspace MCP endpoint has one tool
 * `agentscm_task_<operation>` per operation). An entry holds transport facts only — what the
 * operation's input is and how to describe it to an agent — while the operation itself runs in
 * the task facade (src/tasks/facade.ts), so an operation the facade gains (qualification, for
 * one) joins the hub with one `registerHubOperation` call and no new code path, as the collector
 * operations did. Only operations the facade knows are served.
 */
import { HUB_SUBJECT_SCHEMA } from '../contracts/hub-config.js';
import { instructionRequestDecoder } from '../contracts/instruction-entrypoint.js';
import { referenceFetchRequestDecoder } from '../contracts/named-reference.js';
import { taskRecoveryRequestDecoder } from '../contracts/task/operations.js';
import {
  taskClaimRequestDecoder,
  taskMutationRequestDecoder,
  taskStatusRequestDecoder,
} from '../contracts/task/requests.js';
import { taskResultAssertionDecoder } from '../contracts/task/result.js';
import {
  collectorClaimRequestDecoder,
  collectorDescriptorRequestDecoder,
  collectorFinalizeRequestDecoder,
  isTaskOperation,
  subjectRequestDecoder,
} from '../tasks/facade.js';

/**
 * What an operation takes: nothing; the subject selection (the CLI's --change and --context),
 * which the hub hands to the facade as the context's subject; or a request document of the
 * operation's own published schema, which the facade decodes.
 */
export type HubOperationInput =
  | { readonly kind: 'none' }
  | { readonly kind: 'subject' }
  | { readonly kind: 'document'; readonly schemaId: string; readonly schema: object };

export interface HubOperation {
  readonly name: string;
  readonly input: HubOperationInput;
  /** For an agent: what the operation does, when to call it, what its answer's `next` means. */
  readonly description: string;
}

const registry = new Map<string, HubOperation>();

/** Add an operation to both transports (once per name). */
export function registerHubOperation(operation: HubOperation): void {
  if (registry.has(operation.name)) throw new Error(`hub operation ${operation.name} is registered twice`);
  if (!/^[a-z_]{1,64}$/.test(operation.name))
    throw new Error(`hub operation name ${JSON.stringify(operation.name)} is not ^[a-z_]{1,64}$`);
  registry.set(operation.name, operation);
}

/** The registered operations the facade serves, sorted by name. */
export function hubOperations(): readonly HubOperation[] {
  return [...registry.values()]
    .filter((operation) => isTaskOperation(operation.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One served operation by name, or undefined. */
export function hubOperation(name: string): HubOperation | undefined {
  const operation = registry.get(name);
  return operation !== undefined && isTaskOperation(name) ? operation : undefined;
}

/** The MCP tool name of an operation. */
export function toolNameOf(operation: string): string {
  return `agentscm_task_${operation}`;
}

const document = (decoder: { readonly id: string; readonly schema: object }): HubOperationInput => ({
  kind: 'document',
  schemaId: decoder.id,
  schema: decoder.schema,
});

const SUBJECT_NOTE =
  'The subject is the Change and the digest of the review context of its current version ' +
  '({"change_id","context_digest"}).';
/** The read tools (requirements, next, qualification) also take the Change id alone (docs/hub.md "MCP"). */
const CHANGE_ONLY_NOTE =
  'Over MCP {"change_id"} alone also works: the Change\'s current context is used (see agentscm_task_subject).';
/**
 * The one path of an agent whose task has a collector profile (docs/agent-tasks.md "One path for the agent"): who
 * runs what, with which key and state directory. Every tool that can lead there says it the same way.
 */
const COLLECTOR_STORY =
  "The agent runs the collector itself, on the operator's machine: `agentscm agent-task claim --profile ID " +
  '--change C --context D --task T --token-file F --out DESCRIPTOR` (or this collector_claim tool, writing the ' +
  "answer's descriptor to DESCRIPTOR), then `agentscm agent-task collect --descriptor DESCRIPTOR --key K " +
  '--state-dir S --token-file F` with the key and state directory the operator configured with ' +
  '`agentscm agent-task collector add`. qualification with a token file, `agentscm qualification --change C ' +
  '--token-file F`, and the Stop feedback print both lines with every argument filled in.';
const AGENT_NOTE =
  "The agent field must be your own actor (the grant's owner and agent); the hub never lets a request choose another.";

const PHASE_TWO: readonly HubOperation[] = [
  {
    name: 'capabilities',
    input: { kind: 'none' },
    description:
      'Schema discovery: the capability name, the schema versions this service speaks and the sorted operation ' +
      'names. Call it first, with no arguments; it needs no subject and changes nothing.',
  },
  {
    name: 'requirements',
    input: { kind: 'subject' },
    description:
      `Every task the installed requirement derives for a subject, with each task's id, digest, step, ` +
      `whether it is required and its state. Read-only. ${SUBJECT_NOTE} ${CHANGE_ONLY_NOTE}`,
  },
  {
    name: 'next',
    input: { kind: 'subject' },
    description:
      'The one next thing to do for a subject, as data: {"operation":"claim","task_id",...} to claim a ' +
      'pending task, {"operation":"collector_claim","task_id","collector_profile_id",...} when its step has an ' +
      'installed collector profile (a plain claim of it is refused: TASK_COLLECTOR_CLAIM_REQUIRED), ' +
      '{"operation":"reconcile","task_id",...} to resolve an unresolved attempt, or {"operation":"none"} when ' +
      'nothing is left. Call it after every step and follow "next"; it never runs anything itself. ' +
      `${COLLECTOR_STORY} ${SUBJECT_NOTE} ${CHANGE_ONLY_NOTE}`,
  },
  {
    name: 'instructions',
    input: document(instructionRequestDecoder),
    description:
      'The instructions of a task: the skill entrypoint with its required criteria inline and the named references ' +
      'it may fetch. Call it after claiming, before working. An unsupported expected schema version answers ' +
      'status schema_mismatch with the versions the server speaks, not an error.',
  },
  {
    name: 'reference',
    input: document(referenceFetchRequestDecoder),
    description:
      'Fetch one named reference of a task by name and sha256 (status available with the bytes, denied, uncertain, ' +
      'or schema_mismatch with server_schema_versions). Call it only when the instructions name a reference ' +
      'you need.',
  },
  {
    name: 'claim',
    input: document(taskClaimRequestDecoder),
    description:
      'Claim a task that next offered with "claim" (a task next offers as collector_claim is refused here: use ' +
      'collector_claim): creates one attempt with a lease and a fence. Exactly one of ' +
      'concurrent claimers wins; the others are refused with a conflict code. Use a fresh request_id and ' +
      `execution_operation_id per claim; retrying the identical request returns the same answer. ${AGENT_NOTE}`,
  },
  {
    name: 'heartbeat',
    input: document(taskMutationRequestDecoder),
    description:
      `Extend the lease of your live attempt (action "heartbeat", the attempt's fence). Call it before ` +
      'the lease expires while you work; an expired lease leaves the attempt uncertain until reconciled. ' +
      `${AGENT_NOTE}`,
  },
  {
    name: 'result',
    input: document(taskResultAssertionDecoder),
    description:
      'Record the outcome of your attempt (passed, failed or uncertain, with the criteria). An agent ' +
      'assertion is always non-passing for admission: it records what you claim, not evidence. Then call next. ' +
      `${AGENT_NOTE}`,
  },
  {
    name: 'status',
    input: document(taskStatusRequestDecoder),
    description:
      'Read one exact attempt: its state, lease, fence and outcome. Read-only; use it to check an attempt after a ' +
      'lost answer.',
  },
  {
    name: 'cancel',
    input: document(taskMutationRequestDecoder),
    description:
      'Give up your live attempt (action "cancel", with a reason); the task becomes claimable again ' +
      `only through reconcile or a new subject. ${AGENT_NOTE}`,
  },
  {
    name: 'reconcile',
    input: document(taskMutationRequestDecoder),
    description:
      'Resolve an attempt that next reported as unresolved (expired, cancelled, or of an older ' +
      'subject), with a reason, so that the task can move on. Call it when next says {"operation":"reconcile"}. ' +
      `${AGENT_NOTE}`,
  },
  {
    name: 'recovery',
    input: document(taskRecoveryRequestDecoder),
    description:
      'Recover the answer of a claim, heartbeat, cancel, reconcile or result whose response was lost: send the ' +
      'request kind and the exact original request; the answer says whether it committed and whether it still ' +
      'applies. Changes nothing.',
  },
];

/** The collector operations (spec capability matrix: "Claim/descriptor through HTTP, MCP or typed CLI"). */
const COLLECTOR: readonly HubOperation[] = [
  {
    name: 'collector_claim',
    input: document(collectorClaimRequestDecoder),
    description:
      'Claim a command task that next offered for an operator-installed collector profile ' +
      `(collector_profile_id) instead of an agent claim: the attempt is leased to the profile's enrolled ` +
      'executor and the exact collector descriptor is recorded and returned. The hub never runs the collector. ' +
      `${COLLECTOR_STORY} ${AGENT_NOTE}`,
  },
  {
    name: 'collector_descriptor',
    input: document(collectorDescriptorRequestDecoder),
    description:
      'Re-read the exact collector descriptor of an earlier collector_claim (task_id, attempt_id): write it to a ' +
      'file and pass that file to `agentscm agent-task collect --descriptor FILE`. Read-only.',
  },
  {
    name: 'collector_finalize',
    input: document(collectorFinalizeRequestDecoder),
    description:
      `After the collector's signed transfers were uploaded, write the receipt of the subject from the ` +
      'retained transfers (status written, retained or incomplete); it runs nothing. Needs the subject. Then ' +
      `call next. ${AGENT_NOTE}`,
  },
];

for (const operation of [...PHASE_TWO, ...COLLECTOR]) registerHubOperation(operation);
registerHubOperation({
  name: 'subject',
  input: document(subjectRequestDecoder),
  description:
    'Read-only: the current subject of a Change from its id ({"change_id"}): change_id, change_version, revision, ' +
    'context_digest (the review context of its current version at the current policy epoch, the one the ' +
    "target's requirement binds), target, requirement_digest and the other subject fields. Call it when you " +
    'know only the Change id, then pass {"change_id","context_digest"} as the subject of claim or ' +
    'collector_claim. A new checkpoint makes a new subject: read it again after one.',
});
registerHubOperation({
  name: 'qualification',
  input: { kind: 'subject' },
  description:
    'Read-only, advisory: whether the exact subject qualifies now — qualified, subject_current, ' +
    `receipt_digest (null unless qualified), revision, each task's state (pending, claimed, succeeded, failed, ` +
    'uncertain, blocked), at most 32 typed failures {task_id, code} and next as data: collector_claim or ' +
    'reconcile with a task_id (collector_claim naming collector_profile_id), collector_finalize, checkpoint or ' +
    'none. Call it after every collection and upload; it never finalizes, writes a receipt or changes a task. ' +
    `${COLLECTOR_STORY} ${SUBJECT_NOTE} ${CHANGE_ONLY_NOTE}`,
});

/** The subject selection schema (requirements and next). */
export const SUBJECT_INPUT_SCHEMA: object = HUB_SUBJECT_SCHEMA;
