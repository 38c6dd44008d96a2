/**
 * `agent-task collector add` (docs/collect.md "One command: collector add"): the operator's whole
 * collector setup for one command step, in an order that leaves nothing half-done:
 * 1. the state directory is checked (outside every workspace and the data directory, owner-private
 *    when it exists) and its key loaded when there is one;
 * 2. the step's recipe is read from the target's installed requirement (read-only);
 * 3. the runtime identity is observed on the recipe's image;
 * 4. only then is the key created, when absent;
 * 5. one authority write transaction reuses the key's current enrollment for the step or enrolls it,
 *    and installs the profile: a refused install rolls the enrollment back with it.
 * A refusal before step 4 changes nothing at all; a refusal in step 5 leaves at most the new key,
 * which a rerun reuses. A rerun finds the same enrollment and the same profile (same id).
 */
import { join, resolve } from 'node:path';

import { DEFAULT_TASK_PROFILE } from '../contracts/collector/executor-enrollment.js';
import { AgentscmError } from '../contracts/errors.js';
import { validateId } from '../contracts/ids.js';
import type { JsonObject } from '../contracts/json/json-value.js';
import { KEY_FILE_NAME } from '../contracts/key-file.js';
import { enrollExecutor } from '../native/executor-registry.js';
import type { Store } from '../native/store-handle.js';
import { writeTransaction } from '../native/store.js';
import { installCollectorProfile } from '../tasks/collector/profiles.js';
import { isWithin } from './collect-state.js';
import {
  buildCommandProfile,
  currentEnrollmentOfKey,
  defaultExecutorId,
  probeStepRuntime,
  readCommandStep,
  type ProbedRuntime,
} from './collector-profile-build.js';
import type { DockerTransport } from './docker-transport.js';
import { createSigningKey, inspectKeyStateDir, loadSigningKey, refuseStateDirInWorkspace } from './key-store.js';

export interface CollectorAddInput {
  /** A Store opened for writing (the enrollment and the profile). */
  readonly store: Store;
  readonly stateDir: string;
  readonly step: string;
  readonly target: string;
  readonly repository: string | undefined;
  readonly executor: string | undefined;
  readonly docker: string | undefined;
  readonly dockerSocket: string | undefined;
  readonly nowMs: number;
  readonly transport?: DockerTransport;
}

/** The placeholders of the printed agent commands: what only the agent knows at collection time. */
export const AGENT_PLACEHOLDERS = {
  '<CHANGE>': 'the Change to collect for',
  '<TOKEN_FILE>': "the agent's grant token file (agentscm grant create)",
  '<DESCRIPTOR_FILE>': 'a new file for the collector descriptor',
} as const;

/**
 * One argv as a line to paste into a POSIX shell: a word with a character the shell treats specially
 * is single-quoted; a placeholder stays bare, to be replaced.
 */
export function shellLine(argv: readonly string[], placeholders: object = AGENT_PLACEHOLDERS): string {
  return argv
    .map((word) =>
      word in placeholders || /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`,
    )
    .join(' ');
}

export interface CollectorAddResult {
  readonly collector_profile_id: string;
  /** False when exactly this profile was installed before (a rerun). */
  readonly installed: boolean;
  readonly profile: JsonObject;
  readonly key: {
    readonly key_file: string;
    readonly public_key: string;
    readonly verification_key_id: string;
    readonly created: boolean;
  };
  readonly registration: {
    readonly registration_id: string;
    readonly registration_epoch: bigint;
    readonly executor_id: string;
    /** False when the key's current enrollment for the step was reused. */
    readonly enrolled: boolean;
  };
  readonly bound_by: { readonly target: string; readonly requirement_digest: string; readonly recipe_path: string };
  readonly runtime: ProbedRuntime;
  /** argv of the claim and collect an agent runs, each starting with `agentscm`. */
  readonly agent_commands: { readonly claim: readonly string[]; readonly collect: readonly string[] };
  readonly placeholders: typeof AGENT_PLACEHOLDERS;
}

interface ExistingKey {
  readonly key_file: string;
  readonly public_key: string;
  readonly verification_key_id: string;
}

/**
 * The state directory before anything is created: outside every workspace (KEY_STATE_DIR_IN_WORKSPACE)
 * and the data directory (COLLECT_STATE_UNSAFE, as collect would refuse it); when it exists it must
 * be owner-private and its key file, when present, valid (KEY_PERMISSIONS, KEY_FILE_INVALID).
 * Answers the existing key, or null when there is none yet.
 */
function checkStateDir(dir: string, store: Pick<Store, 'dataDir'>): ExistingKey | null {
  const dataDir = store.dataDir;
  refuseStateDirInWorkspace(dir);
  if (isWithin(dir, dataDir) || isWithin(dataDir, dir)) {
    throw new AgentscmError(
      'COLLECT_STATE_UNSAFE',
      `the state directory ${dir} and the data directory ${resolve(dataDir)} overlap`,
      { hint: 'pass a --state-dir outside every workspace and data directory, e.g. ~/.agentscm-collector' },
    );
  }
  const inspected = inspectKeyStateDir(dir);
  if (inspected.state === 'ok')
    return {
      key_file: inspected.keyFile,
      public_key: inspected.publicKey,
      verification_key_id: inspected.verificationKeyId,
    };
  if (inspected.state === 'dir_missing' || inspected.state === 'key_missing') return null;
  // Reading the key again raises the typed refusal (KEY_PERMISSIONS, KEY_FILE_INVALID) with its fix.
  loadSigningKey(join(dir, KEY_FILE_NAME));
  throw new AgentscmError('KEY_PERMISSIONS', inspected.problem, {
    ...(inspected.hint === undefined ? {} : { hint: inspected.hint }),
  });
}

function agentCommands(
  store: Pick<Store, 'dataDir'>,
  profileId: string,
  target: string,
  keyFile: string,
  stateDir: string,
  runtime: ProbedRuntime,
): CollectorAddResult['agent_commands'] {
  const base = ['agentscm', '--data-dir', resolve(store.dataDir), 'agent-task'];
  return {
    claim: [
      ...base,
      'claim',
      '--profile',
      profileId,
      '--change',
      '<CHANGE>',
      ...(target === 'main' ? [] : ['--target', target]),
      '--token-file',
      '<TOKEN_FILE>',
      '--out',
      '<DESCRIPTOR_FILE>',
    ],
    collect: [
      ...base,
      'collect',
      '--descriptor',
      '<DESCRIPTOR_FILE>',
      '--key',
      keyFile,
      '--state-dir',
      stateDir,
      '--docker',
      runtime.docker,
      '--docker-socket',
      runtime.docker_socket,
      '--token-file',
      '<TOKEN_FILE>',
    ],
  };
}

/** `agentscm agent-task collector add` (see module comment). */
export async function addCollector(input: CollectorAddInput): Promise<CollectorAddResult> {
  const stateDir = resolve(input.stateDir);
  const executor = input.executor === undefined ? undefined : validateId(input.executor, 'executor');
  const existing = checkStateDir(stateDir, input.store);
  const auth = input.store.authority();
  const step = readCommandStep(auth, input);
  const runtime = await probeStepRuntime({ ...input, image: step.recipe.image });
  const key = existing ?? createSigningKey(stateDir);
  const done = writeTransaction(auth, () => {
    const current = currentEnrollmentOfKey(auth, {
      repository: step.repository.id,
      step: step.step,
      publicKey: key.public_key,
      executor,
    });
    const registration =
      current ??
      enrollExecutor(auth, {
        repository: step.repository.id,
        profile: DEFAULT_TASK_PROFILE,
        step: step.step,
        executor: executor ?? defaultExecutorId(key.verification_key_id),
        public_key: key.public_key,
      });
    const installed = installCollectorProfile(
      auth,
      buildCommandProfile(step, registration, runtime.identity_sha256),
      input.nowMs,
    );
    return { current, registration, installed };
  });
  const { installed, registration } = done;
  return {
    collector_profile_id: installed.collector_profile_id,
    installed: installed.installed,
    profile: installed.profile,
    key: { ...key, created: existing === null },
    registration: {
      registration_id: registration.registration_id,
      registration_epoch: registration.registration_epoch,
      executor_id: registration.executor_id,
      enrolled: done.current === null,
    },
    bound_by: { target: step.target, requirement_digest: step.requirement_digest, recipe_path: step.recipe_path },
    runtime,
    agent_commands: agentCommands(
      input.store,
      installed.collector_profile_id,
      step.target,
      key.key_file,
      stateDir,
      runtime,
    ),
    placeholders: AGENT_PLACEHOLDERS,
  };
}
