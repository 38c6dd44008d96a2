/**
 * Building a command collector profile from the store instead of by hand (docs/collector-profiles.md
 * "Building a profile"): the recipe is read from the target's installed requirement (its pinned
 * revision, the bytes every subject reproduces), the runtime identity is observed on the recipe's
 * image, and the registration is the key's current enrollment for the step. `agent-task profile
 * create` prints the result; `agent-task collector add` (collector-setup.ts) installs it.
 */
import { resolve } from 'node:path';

import {
  commandRecipeDigest,
  decodeCommandRecipe,
  RECIPE_LIMITS,
  type CommandRecipe,
} from '../contracts/collector/command-recipe.js';
import { DEFAULT_TASK_PROFILE } from '../contracts/collector/executor-enrollment.js';
import { collectorProfileId, collectorProfileToJson, type CollectorProfile } from '../contracts/collector/profile.js';
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import { formatJson } from '../contracts/json/canonical-json.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { KEY_FILE_NAME, parsePublicKeyHex } from '../contracts/key-file.js';
import { verificationKeyId } from '../crypto/ed25519.js';
import { listRegistrations, type RegistrationState } from '../native/executor-registry.js';
import { createPrivateFileOnce } from '../native/private-files.js';
import { resolveRepository, type Repository } from '../native/repositories.js';
import { getTargetRequirement } from '../native/requirements.js';
import { readRevisionFile } from '../native/revisions.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction, type Authority } from '../native/store.js';
import { listTargets } from '../native/targets.js';
import { requirementDefinition } from '../workflows/requirement.js';
import { layoutSkillPackage, resolvePackagePath } from '../workflows/skill-package.js';
import { DEFAULT_DOCKER_SOCKET, dockerExecutable } from './docker-path.js';
import type { DockerTransport } from './docker-transport.js';
import { loadSigningKey } from './key-store.js';
import { probeRuntime } from './runtime-probe.js';

/** The command step a profile is built for, with its recipe as the target's requirement pins it. */
export interface CommandStepRecipe {
  readonly repository: Repository;
  readonly target: string;
  readonly step: string;
  readonly requirement_digest: string;
  readonly recipe_path: string;
  readonly recipe: CommandRecipe;
  readonly recipe_digest: string;
}

/**
 * Step STEP of TARGET's installed requirement, which must be a command step, and its recipe read from
 * the requirement's revision: REPOSITORY_NOT_FOUND, TARGET_NOT_FOUND, REQUIREMENT_NOT_FOUND,
 * COLLECTOR_SETUP_STEP_NOT_FOUND, COLLECTOR_SETUP_STEP_NOT_COMMAND. Read-only.
 */
export function readCommandStep(
  auth: Authority,
  input: { readonly repository: string | undefined; readonly target: string; readonly step: string },
): CommandStepRecipe {
  const stepId = validateId(input.step, 'step');
  return readTransaction(auth, () => {
    const repository = resolveRepository(auth, input.repository);
    if (!listTargets(auth, repository.id).some((t) => t.name === input.target)) {
      throw new AgentscmError('TARGET_NOT_FOUND', `repository ${repository.name} has no target ${input.target}`, {
        hint: 'pass --target with one of the targets `agentscm target list` shows (default main)',
      });
    }
    const requirement = getTargetRequirement(auth, repository.id, input.target);
    const definition = requirementDefinition(requirement);
    const step = definition.steps.find((s) => s.id === stepId);
    if (step === undefined) {
      throw new AgentscmError(
        'COLLECTOR_SETUP_STEP_NOT_FOUND',
        `the requirement of target ${input.target} (${definition.name}) has no step "${stepId}"; its steps: ` +
          definition.steps.map((s) => `${s.id} (${s.action.kind})`).join(', '),
        {
          hint: `pass --step with one of its command steps (\`agentscm requirement show --target ${input.target}\`)`,
          details: { step_id: stepId },
        },
      );
    }
    if (step.action.kind !== 'command') {
      throw new AgentscmError(
        'COLLECTOR_SETUP_STEP_NOT_COMMAND',
        `step "${stepId}" of the requirement of target ${input.target} is a ${step.action.kind} step, not a ` +
          'command step',
        {
          hint:
            step.action.kind === 'review'
              ? 'a review step needs a finite-review profile: write it by hand (docs/review.md "The finite-review ' +
                'collector profile") and install it with `agentscm agent-task profile install FILE`'
              : 'pass --step with a command step; only command and review steps have collectors',
          details: { step_id: stepId, kind: step.action.kind },
        },
      );
    }
    const recipePath = resolvePackagePath(layoutSkillPackage(definition.skill), step.action.runner);
    const bytes = readRevisionFile(auth, repository.id, requirement.revision, recipePath, {
      maxBytes: RECIPE_LIMITS.maxRecipeBytes,
    });
    return {
      repository,
      target: input.target,
      step: stepId,
      requirement_digest: requirement.requirement_digest,
      recipe_path: recipePath,
      recipe: decodeCommandRecipe(bytes),
      recipe_digest: commandRecipeDigest(bytes),
    };
  });
}

/** The runtime a profile pins: the docker executable and socket used and the identity observed through them. */
export interface ProbedRuntime {
  readonly docker: string;
  readonly docker_socket: string;
  readonly image: string;
  readonly identity_sha256: string;
}

/**
 * Observe the runtime identity on the recipe's image (never pulled): `--docker` or the docker on
 * PATH, `--docker-socket` or /var/run/docker.sock. RUNTIME_FLAGS_INVALID, RUNTIME_UNAVAILABLE,
 * IMAGE_NOT_FOUND as `agent-task runtime-probe`.
 */
export async function probeStepRuntime(input: {
  readonly docker: string | undefined;
  readonly dockerSocket: string | undefined;
  readonly image: string;
  readonly transport?: DockerTransport;
}): Promise<ProbedRuntime> {
  const docker = dockerExecutable(input.docker);
  if (input.dockerSocket === '')
    throw new AgentscmError('RUNTIME_FLAGS_INVALID', '--docker-socket needs a path, not an empty value', {
      hint: `pass --docker-socket PATH, or leave it out for ${DEFAULT_DOCKER_SOCKET}`,
    });
  const socket = resolve(input.dockerSocket ?? DEFAULT_DOCKER_SOCKET);
  const probed = await probeRuntime({
    docker,
    dockerSocket: socket,
    image: input.image,
    ...(input.transport === undefined ? {} : { transport: input.transport }),
  });
  return { docker, docker_socket: socket, image: input.image, identity_sha256: probed.identity_sha256 };
}

/** The default executor id of a key: stable, so that a rerun finds the same enrollment. */
export function defaultExecutorId(keyId: string): string {
  return `collector-${keyId.slice(0, 12)}`;
}

/**
 * The newest current (unrevoked, newest-epoch) enrollment of `publicKey` for the repository, the default
 * workflow profile and the step (of `executor` when given), or null. Runs in the caller's transaction.
 */
export function currentEnrollmentOfKey(
  auth: Authority,
  scope: {
    readonly repository: string;
    readonly step: string;
    readonly publicKey: string;
    readonly executor: string | undefined;
  },
): RegistrationState | null {
  const matching = listRegistrations(auth, scope.repository).filter(
    (r) =>
      r.current &&
      r.profile === DEFAULT_TASK_PROFILE &&
      r.step === scope.step &&
      r.public_key === scope.publicKey &&
      (scope.executor === undefined || r.executor_id === scope.executor),
  );
  return matching.at(-1) ?? null;
}

/** The command profile of one step, registration epoch and runtime identity (not yet installed). */
export function buildCommandProfile(
  step: CommandStepRecipe,
  registration: Pick<RegistrationState, 'registration_id' | 'registration_epoch' | 'verification_key_id'>,
  runtimeIdentityDigest: string,
): CollectorProfile {
  return {
    version: 1,
    kind: 'command',
    repository_id: step.repository.id,
    workflow_profile: DEFAULT_TASK_PROFILE,
    step_id: step.step,
    registration_id: registration.registration_id,
    registration_epoch: registration.registration_epoch,
    verification_key_id: registration.verification_key_id,
    recipe: step.recipe,
    recipe_digest: step.recipe_digest,
    runtime_identity_digest: runtimeIdentityDigest,
  };
}

export interface ProfileCreateInput {
  /** A Store opened for reading: profile create changes nothing. */
  readonly store: Store;
  readonly step: string;
  readonly target: string;
  readonly repository: string | undefined;
  /** The collector state directory holding signing-key.json (or publicKey). */
  readonly stateDir: string | undefined;
  /** The enrolled public key, 64 lowercase hex (or stateDir). */
  readonly publicKey: string | undefined;
  readonly executor: string | undefined;
  readonly docker: string | undefined;
  readonly dockerSocket: string | undefined;
  /** A new file to write the profile to (never overwritten), or undefined. */
  readonly out: string | undefined;
  readonly transport?: DockerTransport;
}

export interface ProfileCreateResult {
  readonly collector_profile_id: string;
  readonly profile: JsonObject;
  readonly registration_id: string;
  readonly executor_id: string;
  readonly recipe_path: string;
  readonly runtime: ProbedRuntime;
  /** The absolute file written, or null when the profile went to stdout. */
  readonly out: string | null;
}

function publicKeyOf(input: ProfileCreateInput): string {
  if ((input.stateDir === undefined) === (input.publicKey === undefined)) {
    throw new AgentscmError('USAGE', 'profile create needs exactly one of --state-dir and --public-key', {
      hint: 'pass --state-dir DIR (the collector key in DIR) or --public-key HEX (the enrolled public key)',
    });
  }
  if (input.publicKey !== undefined) {
    parsePublicKeyHex(input.publicKey);
    return input.publicKey;
  }
  return loadSigningKey(resolve(input.stateDir ?? '', KEY_FILE_NAME)).publicKeyHex;
}

/**
 * `agent-task profile create` (docs/collector-profiles.md "Building a profile"): the command profile
 * of STEP for the key's current enrollment, not installed. Writes only `out` (a new file).
 */
export async function createCollectorProfile(input: ProfileCreateInput): Promise<ProfileCreateResult> {
  const publicKey = publicKeyOf(input);
  const executor = input.executor === undefined ? undefined : validateId(input.executor, 'executor');
  const out = input.out === undefined ? null : resolve(input.out);
  const auth = input.store.authority();
  const step = readCommandStep(auth, input);
  const registration = readTransaction(auth, () =>
    currentEnrollmentOfKey(auth, { repository: step.repository.id, step: step.step, publicKey, executor }),
  );
  if (registration === null) {
    const keyId = verificationKeyId(parsePublicKeyHex(publicKey));
    throw new AgentscmError(
      'COLLECTOR_SETUP_NOT_ENROLLED',
      `the key ${keyId} has no current enrollment for step "${step.step}" of repository ${step.repository.name}` +
        (executor === undefined ? '' : ` as executor ${executor}`),
      {
        hint:
          `enroll it first: \`agentscm agent-task enroll --step ${step.step} --executor NAME --public-key ` +
          `${publicKey}\`, or let \`agentscm agent-task collector add --step ${step.step} --state-dir DIR\` do ` +
          'everything',
        details: { verification_key_id: keyId, step_id: step.step },
      },
    );
  }
  const runtime = await probeStepRuntime({ ...input, image: step.recipe.image });
  const profile = buildCommandProfile(step, registration, runtime.identity_sha256);
  const json = collectorProfileToJson(profile);
  if (out !== null && createPrivateFileOnce(out, `${formatJson(json)}\n`) === 'exists') {
    throw new AgentscmError('IO_ERROR', `--out ${out} already exists; a profile file is never overwritten`, {
      hint: 'name a new file, or leave --out out to print the profile',
    });
  }
  return {
    collector_profile_id: collectorProfileId(profile),
    profile: json,
    registration_id: registration.registration_id,
    executor_id: registration.executor_id,
    recipe_path: step.recipe_path,
    runtime,
    out,
  };
}
