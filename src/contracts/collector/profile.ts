/**
 * CollectorProfile v1 (docs/collector-profiles.md "CollectorProfile v1"; docs/wire.md "CollectorProfile
 * v1"): an operator-installed, immutable authorization for one exact executor registration
 * epoch, repository, workflow profile and command step to transfer original typed records. It
 * pins the complete CommandRecipe, the SHA-256 of the recipe file's exact bytes as a plan binds
 * it, and the digest of the OCI backend's observed runtime identity. Its identity is the
 * `agentscm.collector-profile.v1` digest of its canonical JSON in declared order. Pure.
 */
import { digestCanonical, DOMAINS } from '../digest.js';
import { AgentscmError } from '../errors.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { defineDecoder } from '../json/schema.js';
import { relativePathProblem } from '../paths.js';
import { HEX64_SCHEMA, ID_SCHEMA, POSITIVE_U64_SCHEMA, REPOSITORY_SCHEMA } from '../task/common.js';
import { COMMAND_RECIPE_SCHEMA, RECIPE_LIMITS, type CommandRecipe } from './command-recipe.js';
import { recipeToJson } from './descriptor.js';

export const COLLECTOR_PROFILE_VERSION = 1;
/** A profile holds one recipe (at most 64 KiB) and a few hundred bytes of bindings. */
export const MAX_COLLECTOR_PROFILE_BYTES = RECIPE_LIMITS.maxRecipeBytes + 16 * 1024;

export interface CollectorProfile {
  readonly version: 1;
  /** `command` (a finite-review kind comes later). */
  readonly kind: 'command';
  readonly repository_id: string;
  readonly workflow_profile: string;
  readonly step_id: string;
  readonly registration_id: string;
  readonly registration_epoch: bigint;
  readonly verification_key_id: string;
  /** The complete CommandRecipe, equal to the recipe that recipe_digest names, decoded. */
  readonly recipe: CommandRecipe;
  /** SHA-256 of the recipe file's exact bytes, as a plan binds it. */
  readonly recipe_digest: string;
  /** `identity_sha256` of `agent-task runtime-probe`: the OCI backend the records must come from. */
  readonly runtime_identity_digest: string;
}

// The recipe schema as it sits inside another document: its `$id` names the standalone file only.
const { $id: _recipeId, ...EMBEDDED_RECIPE_SCHEMA } = COMMAND_RECIPE_SCHEMA;

/**
 * What every collector profile binds, in declared order after `version` and `kind`: the
 * repository, workflow profile and step, and the one enrollment epoch and key that may collect it.
 */
export const PROFILE_BINDING_PROPERTIES = {
  repository_id: REPOSITORY_SCHEMA,
  workflow_profile: ID_SCHEMA,
  step_id: ID_SCHEMA,
  registration_id: ID_SCHEMA,
  registration_epoch: POSITIVE_U64_SCHEMA,
  verification_key_id: HEX64_SCHEMA,
} as const;

/** The published JSON Schema (docs/schemas/agent-task.collector-profile.schema.json). */
export const COLLECTOR_PROFILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'kind',
    'repository_id',
    'workflow_profile',
    'step_id',
    'registration_id',
    'registration_epoch',
    'verification_key_id',
    'recipe',
    'recipe_digest',
    'runtime_identity_digest',
  ],
  properties: {
    version: { type: 'integer', const: COLLECTOR_PROFILE_VERSION },
    kind: { const: 'command' },
    ...PROFILE_BINDING_PROPERTIES,
    recipe: EMBEDDED_RECIPE_SCHEMA,
    recipe_digest: HEX64_SCHEMA,
    runtime_identity_digest: HEX64_SCHEMA,
  },
} as const;

const profileDecoder = defineDecoder<CollectorProfile>('agent-task.collector-profile', COLLECTOR_PROFILE_SCHEMA, {
  versionField: 'version',
  supportedVersions: [COLLECTOR_PROFILE_VERSION],
});

function checkProfile(profile: CollectorProfile): CollectorProfile {
  const workdir = profile.recipe.workdir;
  const problem = workdir === '.' ? undefined : relativePathProblem(workdir);
  if (problem !== undefined) {
    throw new AgentscmError(
      'PATH_INVALID',
      `profile recipe workdir ${JSON.stringify(workdir.slice(0, 80))} is not "." or a canonical relative path: ` +
        `${problem}`,
      {
        hint: 'copy the recipe of the requirement step unchanged',
        details: { pointer: '/recipe/workdir' },
      },
    );
  }
  return profile;
}

/** Strict decoding of a profile file (docs/wire.md "CollectorProfile v1"); registration_epoch comes out as bigint. */
export function decodeCollectorProfile(bytes: Uint8Array): CollectorProfile {
  return checkProfile(profileDecoder.decode(bytes, MAX_COLLECTOR_PROFILE_BYTES));
}

/** Strict validation of an already parsed profile (a stored profile read back, a vector). */
export function validateCollectorProfile(value: JsonValue): CollectorProfile {
  return checkProfile(profileDecoder.validate(value));
}

/** Canonical JSON of a profile in declared order (the recipe in CommandRecipe order, env in its own order). */
export function collectorProfileToJson(profile: CollectorProfile): JsonObject {
  return {
    version: profile.version,
    kind: profile.kind,
    repository_id: profile.repository_id,
    workflow_profile: profile.workflow_profile,
    step_id: profile.step_id,
    registration_id: profile.registration_id,
    registration_epoch: profile.registration_epoch,
    verification_key_id: profile.verification_key_id,
    recipe: recipeToJson(profile.recipe),
    recipe_digest: profile.recipe_digest,
    runtime_identity_digest: profile.runtime_identity_digest,
  };
}

/** `collector_profile_id`: the `agentscm.collector-profile.v1` digest of the canonical profile. */
export function collectorProfileId(profile: CollectorProfile): string {
  return digestCanonical(DOMAINS.collectorProfile, collectorProfileToJson(profile));
}
