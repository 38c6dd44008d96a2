/**
 * The skill workflow definition (docs/skill-workflows.md "The definition"): strict
 * JSON, version 1, a source binding, a packaged skill and 1-32 steps whose actions are
 * source_paths, command, require_capability or review (src/contracts/review/policy.ts). Pure:
 * bounds, shapes and identifiers only; the graph, package and source checks are in src/workflows/.
 */
import { AgentscmError } from './errors.js';
import { encodeCanonical } from './json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json/json-value.js';
import { defineDecoder } from './json/schema.js';
import { parseStrictJson } from './json/strict-json.js';
import { checkReviewAction, REVIEW_ACTION_SCHEMA, reviewActionToJson, type ReviewAction } from './review/policy.js';

/** Every bound of the profile, in one place (docs/skill-workflows.md "The definition" and "Runs"). */
export const WORKFLOW_LIMITS = {
  /** Whole definition file; refused before parsing. */
  maxDefinitionBytes: 1024 * 1024,
  minSteps: 1,
  maxSteps: 32,
  maxNeeds: 32,
  minExpectations: 1,
  maxExpectations: 32,
  /** Explicit resources; the automatic SKILL.md makes 64 package entries. */
  maxResources: 63,
  maxPackageEntries: 64,
  maxPackagePathBytes: 512,
  /** Source paths named by expectations: the canonical relative path bound of paths.ts. */
  maxSourcePathBytes: 512,
  /** Sum of the sizes of the files one source_paths action reads. */
  maxAggregateContentBytes: 8 * 1024 * 1024,
  /** Sum of the stored (encoded) object bytes one source_paths action reads. */
  maxEncodedReadBytes: 16 * 1024 * 1024,
  /** One packaged skill file (SKILL.md or a resource); chosen here, the spec is silent. */
  maxSkillFileBytes: 1024 * 1024,
  /** Whole packaged skill; chosen here, the spec is silent. */
  maxSkillPackageBytes: 16 * 1024 * 1024,
  minBudget: 1,
  maxBudget: 32,
} as const;

export const WORKFLOW_DEFINITION_VERSION = 1;
export const SKILL_ENTRYPOINT_NAME = 'SKILL.md';

export interface SourcePathExpectation {
  readonly path: string;
  readonly sha256: string;
}

export interface SourcePathsAction {
  readonly kind: 'source_paths';
  readonly expectations: readonly SourcePathExpectation[];
}

export interface CommandAction {
  readonly kind: 'command';
  /** Recipe path relative to the skill directory. */
  readonly runner: string;
  readonly change: { readonly repository: string; readonly id: string };
  readonly change_version: bigint;
  readonly context_digest: string;
}

/** An operation this profile names but may not be able to perform (see docs/skill-workflows.md). */
export interface RequireCapabilityAction {
  readonly kind: 'require_capability';
  readonly capability: string;
}

export type WorkflowAction = SourcePathsAction | CommandAction | RequireCapabilityAction | ReviewAction;
export type WorkflowActionKind = WorkflowAction['kind'];

export interface WorkflowStepDefinition {
  readonly id: string;
  readonly needs: readonly string[];
  readonly required: boolean;
  readonly action: WorkflowAction;
}

export interface WorkflowSource {
  readonly repository: string;
  readonly revision: string;
  readonly policy_epoch: bigint;
}

export interface WorkflowSkill {
  readonly entrypoint: string;
  readonly resources: readonly string[];
}

export interface WorkflowDefinition {
  readonly version: 1;
  readonly name: string;
  readonly source: WorkflowSource;
  readonly skill: WorkflowSkill;
  readonly steps: readonly WorkflowStepDefinition[];
}

const ID = { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$', maxLength: 128, idKind: 'id' } as const;
const REPOSITORY = { type: 'string', pattern: '^[0-9a-f]{32}$', maxLength: 32, idKind: 'repository' } as const;
const DIGEST = { type: 'string', pattern: '^[0-9a-f]{64}$', maxLength: 64, idKind: 'digest' } as const;
const PACKAGE_PATH = { type: 'string', minLength: 1, maxUtf8Bytes: WORKFLOW_LIMITS.maxPackagePathBytes } as const;
const SOURCE_PATH = { type: 'string', minLength: 1, maxUtf8Bytes: WORKFLOW_LIMITS.maxSourcePathBytes } as const;

const SOURCE_PATHS_ACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'expectations'],
  properties: {
    kind: { const: 'source_paths' },
    expectations: {
      type: 'array',
      minItems: WORKFLOW_LIMITS.minExpectations,
      maxItems: WORKFLOW_LIMITS.maxExpectations,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'sha256'],
        properties: { path: SOURCE_PATH, sha256: DIGEST },
      },
    },
  },
} as const;

const COMMAND_ACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'runner', 'change', 'change_version', 'context_digest'],
  properties: {
    kind: { const: 'command' },
    runner: PACKAGE_PATH,
    change: {
      type: 'object',
      additionalProperties: false,
      required: ['repository', 'id'],
      properties: { repository: REPOSITORY, id: ID },
    },
    change_version: { u64: true },
    context_digest: DIGEST,
  },
} as const;

const REQUIRE_CAPABILITY_ACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'capability'],
  properties: {
    kind: { const: 'require_capability' },
    capability: ID,
  },
} as const;

const ACTION_SCHEMAS = {
  source_paths: SOURCE_PATHS_ACTION_SCHEMA,
  command: COMMAND_ACTION_SCHEMA,
  require_capability: REQUIRE_CAPABILITY_ACTION_SCHEMA,
  review: REVIEW_ACTION_SCHEMA,
} as const;

/** The published JSON Schema (docs/schemas/skill-workflow-definition.schema.json). */
export const WORKFLOW_DEFINITION_SCHEMA = {
  $id: 'skill-workflow-definition',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'name', 'source', 'skill', 'steps'],
  properties: {
    version: { type: 'integer', const: WORKFLOW_DEFINITION_VERSION },
    name: ID,
    source: {
      type: 'object',
      additionalProperties: false,
      required: ['repository', 'revision', 'policy_epoch'],
      properties: { repository: REPOSITORY, revision: DIGEST, policy_epoch: { u64: true } },
    },
    skill: {
      type: 'object',
      additionalProperties: false,
      required: ['entrypoint', 'resources'],
      properties: {
        entrypoint: PACKAGE_PATH,
        resources: { type: 'array', maxItems: WORKFLOW_LIMITS.maxResources, items: PACKAGE_PATH },
      },
    },
    steps: {
      type: 'array',
      minItems: WORKFLOW_LIMITS.minSteps,
      maxItems: WORKFLOW_LIMITS.maxSteps,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'needs', 'required', 'action'],
        properties: {
          id: ID,
          needs: { type: 'array', maxItems: WORKFLOW_LIMITS.maxNeeds, items: ID },
          required: { type: 'boolean' },
          action: {
            oneOf: [
              SOURCE_PATHS_ACTION_SCHEMA,
              COMMAND_ACTION_SCHEMA,
              REQUIRE_CAPABILITY_ACTION_SCHEMA,
              REVIEW_ACTION_SCHEMA,
            ],
          },
        },
      },
    },
  },
} as const;

const DEFINITION_DECODER = defineDecoder<WorkflowDefinition>('skill-workflow-definition', WORKFLOW_DEFINITION_SCHEMA, {
  versionField: 'version',
  supportedVersions: [WORKFLOW_DEFINITION_VERSION],
});

// One decoder per action kind: with oneOf, ajv reports every branch's failure, and the branch
// that names the action's own kind is the one that says what the author got wrong.
const ACTION_DECODERS = {
  source_paths: defineDecoder<SourcePathsAction>('skill-workflow-action-source-paths', ACTION_SCHEMAS.source_paths),
  command: defineDecoder<CommandAction>('skill-workflow-action-command', ACTION_SCHEMAS.command),
  require_capability: defineDecoder<RequireCapabilityAction>(
    'skill-workflow-action-require-capability',
    ACTION_SCHEMAS.require_capability,
  ),
  review: defineDecoder<ReviewAction>('skill-workflow-action-review', ACTION_SCHEMAS.review),
} as const;

const ACTION_POINTER = /^\/steps\/(\d+)\/action(\/.*)?$/;

function rediagnoseAction(value: JsonValue, error: AgentscmError): AgentscmError {
  const pointer = error.details?.pointer;
  if (typeof pointer !== 'string') return error;
  const match = ACTION_POINTER.exec(pointer);
  if (match === null) return error;
  const steps = isJsonObject(value) ? value.steps : undefined;
  const action = Array.isArray(steps) ? steps[Number(match[1])] : undefined;
  const raw = isJsonObject(action) ? action.action : undefined;
  const prefix = `/steps/${match[1]}/action`;
  // An absent action is the required field missing (docs/strict-json.md), not a wrong type.
  if (isJsonObject(action) && !Object.hasOwn(action, 'action')) {
    return new AgentscmError(
      'SCHEMA_MISSING_FIELD',
      `skill-workflow-definition: ${prefix} missing required field "action"`,
      {
        hint: 'add the field',
        details: { schema: 'skill-workflow-definition', pointer: prefix },
      },
    );
  }
  if (!isJsonObject(raw)) {
    return new AgentscmError('SCHEMA_TYPE', `skill-workflow-definition: ${prefix} must be an object with a kind`, {
      hint: 'use an action object: source_paths, command, require_capability or review',
      details: { schema: 'skill-workflow-definition', pointer: prefix },
    });
  }
  const kind = raw.kind;
  if (kind !== 'source_paths' && kind !== 'command' && kind !== 'require_capability' && kind !== 'review') {
    const pointerOfKind = `${prefix}/kind`;
    return new AgentscmError(
      kind === undefined ? 'SCHEMA_MISSING_FIELD' : 'SCHEMA_TYPE',
      `skill-workflow-definition: ${pointerOfKind} must be one of "source_paths", "command", "require_capability", ` +
        `"review"`,
      {
        hint: 'use one of the four action kinds of this profile',
        details: { schema: 'skill-workflow-definition', pointer: pointerOfKind },
      },
    );
  }
  try {
    ACTION_DECODERS[kind].validate(raw);
  } catch (inner) {
    if (!(inner instanceof AgentscmError)) throw inner;
    const innerPointer =
      typeof inner.details?.pointer === 'string' && inner.details.pointer !== '/' ? inner.details.pointer : '';
    const full = `${prefix}${innerPointer}`;
    const text = inner.message.replace(/^[^:]*: \S+ /, '');
    return new AgentscmError(inner.code, `skill-workflow-definition: ${full} ${text}`, {
      ...(inner.hint === undefined ? {} : { hint: inner.hint }),
      details: { schema: 'skill-workflow-definition', pointer: full },
    });
  }
  return error;
}

/** Strictly decode definition bytes (docs/skill-workflows.md "The definition": unknown fields are rejected). */
export function decodeWorkflowDefinition(bytes: Uint8Array): WorkflowDefinition {
  const value = parseStrictJson(bytes, { maxBytes: WORKFLOW_LIMITS.maxDefinitionBytes });
  return validateWorkflowDefinition(value);
}

/**
 * Validate an already parsed definition value (docs/skill-workflows.md "The definition"); the
 * caller's value is not modified.
 */
export function validateWorkflowDefinition(value: JsonValue): WorkflowDefinition {
  let definition: WorkflowDefinition;
  try {
    definition = DEFINITION_DECODER.validate(value);
  } catch (error) {
    if (error instanceof AgentscmError) throw rediagnoseAction(value, error);
    throw error;
  }
  definition.steps.forEach((step, index) => {
    if (step.action.kind === 'review') checkReviewAction(step.action, `/steps/${index}/action`);
  });
  return definition;
}

/**
 * An action as a JSON value in declared field order (docs/skill-workflows.md "The definition",
 * docs/wire.md canonical encoding).
 */
export function workflowActionToJson(action: WorkflowAction): JsonObject {
  switch (action.kind) {
    case 'source_paths':
      return { kind: action.kind, expectations: action.expectations.map((e) => ({ path: e.path, sha256: e.sha256 })) };
    case 'command':
      return {
        kind: action.kind,
        runner: action.runner,
        change: { repository: action.change.repository, id: action.change.id },
        change_version: action.change_version,
        context_digest: action.context_digest,
      };
    case 'require_capability':
      return { kind: action.kind, capability: action.capability };
    case 'review':
      return reviewActionToJson(action);
  }
}

/**
 * The definition as a JSON value in declared field order (docs/skill-workflows.md "The
 * definition"); what is stored and re-decoded.
 */
export function workflowDefinitionToJson(definition: WorkflowDefinition): JsonObject {
  return {
    version: definition.version,
    name: definition.name,
    source: {
      repository: definition.source.repository,
      revision: definition.source.revision,
      policy_epoch: definition.source.policy_epoch,
    },
    skill: { entrypoint: definition.skill.entrypoint, resources: [...definition.skill.resources] },
    steps: definition.steps.map((step) => ({
      id: step.id,
      needs: [...step.needs],
      required: step.required,
      action: workflowActionToJson(step.action),
    })),
  };
}

/**
 * Canonical bytes of a definition (docs/skill-workflows.md "Runs": resume revalidates the stored definition); retained
 * in the journal and the authority.
 */
export function encodeWorkflowDefinition(definition: WorkflowDefinition): Uint8Array {
  return encodeCanonical(workflowDefinitionToJson(definition));
}

/** The skill directory of an entrypoint: everything up to and including its last `/` ("" at the root). */
export function skillDirectory(entrypoint: string): string {
  return entrypoint.slice(0, entrypoint.lastIndexOf('/') + 1);
}

/**
 * The recipe path of a definition's first command step — its skill directory joined with the
 * step's runner, the path its command/v1 context binds — or null without a command step. The
 * subject context of a Change version is that recipe's (docs/checks.md "Several command checks").
 */
export function firstCommandRecipePath(definition: WorkflowDefinition): string | null {
  for (const step of definition.steps) {
    if (step.action.kind === 'command') return `${skillDirectory(definition.skill.entrypoint)}${step.action.runner}`;
  }
  return null;
}
