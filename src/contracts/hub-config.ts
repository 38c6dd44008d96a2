/**
 * The hub's wire documents (docs/wire.md "Hub"; docs/hub.md "MCP" and
 * "Execution config"): the strict execution config v1 an operator starts
 * `agentscm hub serve` with, and the body of the agent-tasks route. Schemas only; the rules JSON
 * Schema cannot state (absolute data_dir, unique profiles, listen address) are in src/hub/config.ts.
 */
import { DIGEST_SCHEMA, ID_SCHEMA, REPOSITORY_ID_SCHEMA } from './ids.js';
import type { JsonValue } from './json/json-value.js';
import { defineDecoder, type Decoder } from './json/schema.js';

/** Largest execution config accepted, in bytes. */
export const HUB_CONFIG_MAX_BYTES = 256 * 1024;
/** Largest number of agent_task_profiles in one config. */
export const HUB_CONFIG_MAX_PROFILES = 256;
/** `OWNER/NAME` of a hub repository: two ids. */
export const HUB_REPOSITORY_PATTERN = '^[A-Za-z0-9._-]{1,128}/[A-Za-z0-9._-]{1,128}$';

export interface HubProfileConfig {
  readonly repository_id: string;
  readonly profile_id: string;
  readonly native_repository: string;
  readonly data_dir: string;
  readonly target: string;
  readonly requirement_digest: string;
  readonly publish_forge_status?: boolean;
  readonly forge?: HubForgeConfig;
}

/** The kinds of forge the hub publishes commit statuses to. */
export const FORGE_KINDS = ['github', 'gitlab'] as const;
export type ForgeKind = (typeof FORGE_KINDS)[number];

/**
 * Where a profile with `publish_forge_status: true` publishes (docs/hub.md "Forge status"): the
 * forge's API base URL (GitHub `https://api.github.com`, GitLab `https://HOST/api/v4`) and the
 * absolute path of a file holding the forge token. Required with publishing, refused without it.
 */
export interface HubForgeConfig {
  readonly kind: ForgeKind;
  readonly base_url: string;
  readonly token_file: string;
}

export const HUB_FORGE_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'base_url', 'token_file'],
  properties: {
    kind: { type: 'string', enum: [...FORGE_KINDS] },
    base_url: { type: 'string', minLength: 8, maxLength: 2048, pattern: '^https?://' },
    token_file: { type: 'string', minLength: 1, maxLength: 4096 },
  },
} as const;

export interface HubConfigDocument {
  readonly version: 1;
  readonly listen?: string;
  readonly agent_task_profiles: readonly HubProfileConfig[];
}

export const HUB_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'agent_task_profiles'],
  properties: {
    version: { type: 'integer', const: 1 },
    listen: { type: 'string', minLength: 1, maxLength: 300 },
    agent_task_profiles: {
      type: 'array',
      minItems: 1,
      maxItems: HUB_CONFIG_MAX_PROFILES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['repository_id', 'profile_id', 'native_repository', 'data_dir', 'target', 'requirement_digest'],
        properties: {
          repository_id: { type: 'string', minLength: 3, maxLength: 257, pattern: HUB_REPOSITORY_PATTERN },
          profile_id: ID_SCHEMA,
          native_repository: REPOSITORY_ID_SCHEMA,
          data_dir: { type: 'string', minLength: 1, maxLength: 4096 },
          target: ID_SCHEMA,
          requirement_digest: DIGEST_SCHEMA,
          publish_forge_status: { type: 'boolean' },
          forge: HUB_FORGE_CONFIG_SCHEMA,
        },
      },
    },
  },
} as const;

/** Strict decoder of the execution config v1 (`version` checked first). */
export const hubConfigDecoder: Decoder<HubConfigDocument> = defineDecoder<HubConfigDocument>(
  'hub.execution-config',
  HUB_CONFIG_SCHEMA,
  {
    versionField: 'version',
    supportedVersions: [1],
  },
);

/** Largest body of a JSON route (the agent-tasks route and both MCP endpoints), in bytes. */
export const HUB_JSON_BODY_MAX_BYTES = 512 * 1024;

/** The selection of the subject an operation derives tasks from (the CLI's --change and --context). */
export interface HubSubjectSelection {
  readonly change_id: string;
  readonly context_digest: string;
}

export const HUB_SUBJECT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['change_id', 'context_digest'],
  properties: { change_id: ID_SCHEMA, context_digest: DIGEST_SCHEMA },
} as const;

export interface HubTaskRequest {
  readonly operation: string;
  /** Null or an object: src/hub/ refuses anything else before the facade sees it. */
  readonly input: JsonValue;
  readonly subject?: HubSubjectSelection;
}

/**
 * The body of `POST …/agent-tasks`: the operation, its input document (checked by the
 * operation's own decoder afterwards) and, for operations that derive tasks, the subject.
 */
export const HUB_TASK_REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['operation', 'input'],
  properties: {
    operation: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z_]{1,64}$' },
    // Checked by the operation's own decoder after this envelope (null, or that operation's document).
    input: { $comment: "null, or the operation's input document (validated against that operation's schema)" },
    subject: HUB_SUBJECT_SCHEMA,
  },
} as const;

/** Strict decoder of the agent-tasks route body. */
export const hubTaskRequestDecoder: Decoder<HubTaskRequest> = defineDecoder<HubTaskRequest>(
  'hub.agent-task-request',
  HUB_TASK_REQUEST_SCHEMA,
);
