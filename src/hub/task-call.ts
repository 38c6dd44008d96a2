/**
 * The one call path of both hub transports into the task facade
 * (docs/agent-tasks.md "One core, thin adapters": every route and tool goes through the same
 * facade). The HTTP route and the MCP tools differ only in how they frame the operation, its input
 * and the subject; from here on the context is built from the profile and the authenticated grant
 * alone — request JSON never selects the actor, the data directory, the repository, the profile or
 * the target.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { HubSubjectSelection } from '../contracts/hub-config.js';
import { encodeCanonical } from '../contracts/json/canonical-json.js';
import { isJsonObject, type JsonValue } from '../contracts/json/json-value.js';
import { TASK_CAPABILITY, TASK_CONTRACT_VERSION } from '../contracts/task/common.js';
import type { Store } from '../native/store-handle.js';
import type { TaskContext } from '../tasks/context.js';
import { callTaskOperation } from '../tasks/facade.js';
import type { GrantAuthorization } from '../tasks/grant-guard.js';
import { currentContextDigest } from '../tasks/operations/subject.js';
import type { HubProfile } from './config.js';
import { hubOperation } from './operations.js';

export interface HubTaskCall {
  readonly operation: string;
  /** The operation's request document, or null. */
  readonly input: JsonValue;
  /**
   * The subject; over MCP a read tool (requirements, next, qualification) may give the Change id alone, and the
   * Change's current context is used (docs/hub.md "MCP").
   */
  readonly subject?: { readonly change_id: string; readonly context_digest?: string | undefined } | undefined;
}

/** The answer envelope of the agent-tasks route (docs/wire.md "Hub"). */
export interface HubTaskAnswer {
  readonly capability: typeof TASK_CAPABILITY;
  readonly schema_version: number;
  readonly result: JsonValue;
}

/** Run one operation for the authenticated grant on the profile; the facade's answer, unchanged. */
export function callHubTask(
  profile: HubProfile,
  authorization: GrantAuthorization,
  call: HubTaskCall,
  store: Store,
): JsonValue {
  const operation = hubOperation(call.operation);
  if (operation === undefined) {
    // The facade names the operations it knows; an unregistered one is refused the same way.
    return callTaskOperation(contextOf(profile, authorization, undefined, store), call.operation, null);
  }
  if (call.input !== null && !isJsonObject(call.input)) {
    throw new AgentscmError('SCHEMA_TYPE', `the input of ${operation.name} must be an object or null`, {
      hint: 'send "input": {…} or "input": null',
    });
  }
  if (operation.input.kind !== 'document' && call.input !== null) {
    throw new AgentscmError('USAGE', `operation ${operation.name} takes no input document`, {
      hint:
        operation.input.kind === 'subject'
          ? 'send "input": null and the subject as "subject": {"change_id","context_digest"}'
          : 'send "input": null',
    });
  }
  const bytes = call.input === null ? null : encodeCanonical(call.input);
  const given = call.subject;
  let subject: HubSubjectSelection | undefined;
  if (given === undefined || given.context_digest === undefined) {
    subject = given === undefined ? undefined : currentSubjectOf(profile, authorization, store, given.change_id);
  } else {
    subject = { change_id: given.change_id, context_digest: given.context_digest };
  }
  return callTaskOperation(contextOf(profile, authorization, subject, store), operation.name, bytes);
}

/** A Change's current subject (its sole current context for the profile's target), read under the grant's guard. */
function currentSubjectOf(
  profile: HubProfile,
  authorization: GrantAuthorization,
  store: Store,
  changeId: string,
): HubSubjectSelection {
  const ctx = contextOf(profile, authorization, undefined, store);
  return {
    change_id: changeId,
    context_digest: ctx.guard(ctx.actor, 'subject', () => currentContextDigest(ctx, changeId)),
  };
}

function contextOf(
  profile: HubProfile,
  authorization: GrantAuthorization,
  subject: HubSubjectSelection | undefined,
  store: Store,
): TaskContext {
  return {
    store,
    actor: authorization.actor,
    repository: profile.nativeRepository,
    profile: profile.profileId,
    target: profile.target,
    subject:
      subject === undefined ? undefined : { change_id: subject.change_id, context_digest: subject.context_digest },
    guard: authorization.guard,
    origin: authorization.origin,
  };
}

/** Wrap a facade answer as the route answers it. */
export function taskAnswer(result: JsonValue): HubTaskAnswer {
  return { capability: TASK_CAPABILITY, schema_version: TASK_CONTRACT_VERSION, result };
}
