/**
 * `agent-task collector add --remote` (docs/collect.md "A collector on another host"): the operator's
 * setup of a collector whose key lives on another host, in two steps with one string carried back.
 * 1. Without a public key: prints the key command to run ON the collector host (the key's state
 *    directory is created there and never leaves it) and the second step to run here. Nothing changes.
 * 2. With the collector's public key (as that key command printed it, or a file holding it): the
 *    runtime identity is observed on this host's engine, the key enrolled for the step (or its
 *    current enrollment reused) and the profile installed in one write transaction, exactly like
 *    `collector add`; then prints the claim an agent runs against the hub's store and the doctor and
 *    collect lines for the collector host, which name the hub with --endpoint and a token file.
 */
import { posix } from 'node:path';

import { DEFAULT_TASK_PROFILE } from '../contracts/collector/executor-enrollment.js';
import { validateId } from '../contracts/ids.js';
import { KEY_FILE_NAME, parsePublicKeyHex } from '../contracts/key-file.js';
import { verificationKeyId } from '../crypto/ed25519.js';
import { enrollExecutor } from '../native/executor-registry.js';
import { writeTransaction } from '../native/store.js';
import { installCollectorProfile } from '../tasks/collector/profiles.js';
import {
  buildCommandProfile,
  currentEnrollmentOfKey,
  defaultExecutorId,
  probeStepRuntime,
  readCommandStep,
} from './collector-profile-build.js';
import type { CollectorAddInput } from './collector-setup.js';

/** The placeholders of the printed lines of a remote collector: what is known only later or elsewhere. */
export const REMOTE_PLACEHOLDERS = {
  '<CHANGE>': 'the Change to collect for',
  '<TOKEN_FILE>': "the agent's grant token file (agentscm grant create), copied to the collector host",
  '<DESCRIPTOR_FILE>': 'the collector descriptor the claim wrote, copied to the collector host',
  '<PUBLIC_KEY>': 'the public_key the key command printed on the collector host',
  '<ENDPOINT>': "the hub's agent-tasks URL (…/v1/hub/workspace/repositories/OWNER/NAME/profiles/PROFILE/agent-tasks)",
} as const;

export interface RemoteCollectorInput extends CollectorAddInput {
  /** The collector's public key (64 lowercase hex); undefined for step 1. */
  readonly publicKey: string | undefined;
  /** The hub's agent-tasks URL printed into the collector host's lines (else <ENDPOINT>). */
  readonly endpoint: string | undefined;
  /** The argv prefix that names this store on the hub host (`agentscm --data-dir DIR`). */
  readonly hubBase: readonly string[];
}

/** Step 1: nothing enrolled yet; the lines to run on the collector host and then here. */
export interface RemoteKeyStep {
  readonly stage: 'key';
  readonly step_id: string;
  readonly collector_host: { readonly key: readonly string[] };
  readonly hub_host: { readonly add: readonly string[] };
  readonly placeholders: typeof REMOTE_PLACEHOLDERS;
}

/** Step 2: enrolled and installed; the lines of the hub host (claim) and of the collector host. */
export interface RemoteEnrolled {
  readonly stage: 'enrolled';
  readonly collector_profile_id: string;
  readonly installed: boolean;
  readonly verification_key_id: string;
  readonly registration: {
    readonly registration_id: string;
    readonly registration_epoch: bigint;
    readonly executor_id: string;
    readonly enrolled: boolean;
  };
  readonly runtime: { readonly image: string; readonly identity_sha256: string };
  readonly hub_host: { readonly claim: readonly string[] };
  readonly collector_host: { readonly doctor: readonly string[]; readonly collect: readonly string[] };
  readonly placeholders: typeof REMOTE_PLACEHOLDERS;
}

export type RemoteCollectorResult = RemoteKeyStep | RemoteEnrolled;

/** The state directory as the collector host names it: kept as given (it is a path on that host). */
function remoteKeyFile(stateDir: string): string {
  return stateDir.endsWith('/') ? `${stateDir}${KEY_FILE_NAME}` : posix.join(stateDir, KEY_FILE_NAME);
}

/** `agentscm agent-task collector add --remote` (see module comment). */
export async function addRemoteCollector(input: RemoteCollectorInput): Promise<RemoteCollectorResult> {
  const executor = input.executor === undefined ? undefined : validateId(input.executor, 'executor');
  const auth = input.store.authority();
  const step = readCommandStep(auth, input);
  const endpoint = input.endpoint ?? '<ENDPOINT>';
  const target = step.target === 'main' ? [] : ['--target', step.target];
  if (input.publicKey === undefined) {
    return {
      stage: 'key',
      step_id: step.step,
      collector_host: { key: ['agentscm', 'agent-task', 'key', '--state-dir', input.stateDir] },
      hub_host: {
        add: [
          ...input.hubBase,
          'agent-task',
          'collector',
          'add',
          '--step',
          step.step,
          ...target,
          '--state-dir',
          input.stateDir,
          '--remote',
          '--public-key',
          '<PUBLIC_KEY>',
          ...(input.endpoint === undefined ? [] : ['--endpoint', input.endpoint]),
          ...(input.docker === undefined ? [] : ['--docker', input.docker]),
          ...(input.dockerSocket === undefined ? [] : ['--docker-socket', input.dockerSocket]),
        ],
      },
      placeholders: REMOTE_PLACEHOLDERS,
    };
  }
  const publicKey = input.publicKey;
  const keyId = verificationKeyId(parsePublicKeyHex(publicKey));
  const runtime = await probeStepRuntime({ ...input, image: step.recipe.image });
  const done = writeTransaction(auth, () => {
    const current = currentEnrollmentOfKey(auth, {
      repository: step.repository.id,
      step: step.step,
      publicKey,
      executor,
    });
    const registration =
      current ??
      enrollExecutor(auth, {
        repository: step.repository.id,
        profile: DEFAULT_TASK_PROFILE,
        step: step.step,
        executor: executor ?? defaultExecutorId(keyId),
        public_key: publicKey,
      });
    const installed = installCollectorProfile(
      auth,
      buildCommandProfile(step, registration, runtime.identity_sha256),
      input.nowMs,
    );
    return { current, registration, installed };
  });
  const { installed, registration } = done;
  const runtimeFlags = ['--docker', runtime.docker, '--docker-socket', runtime.docker_socket];
  const hubFlags = ['--endpoint', endpoint, '--token-file', '<TOKEN_FILE>'];
  return {
    stage: 'enrolled',
    collector_profile_id: installed.collector_profile_id,
    installed: installed.installed,
    verification_key_id: keyId,
    registration: {
      registration_id: registration.registration_id,
      registration_epoch: registration.registration_epoch,
      executor_id: registration.executor_id,
      enrolled: done.current === null,
    },
    runtime: { image: runtime.image, identity_sha256: runtime.identity_sha256 },
    hub_host: {
      claim: [
        ...input.hubBase,
        'agent-task',
        'claim',
        '--profile',
        installed.collector_profile_id,
        '--change',
        '<CHANGE>',
        ...target,
        '--token-file',
        '<TOKEN_FILE>',
        '--out',
        '<DESCRIPTOR_FILE>',
      ],
    },
    collector_host: {
      doctor: [
        'agentscm',
        'doctor',
        ...hubFlags,
        '--state-dir',
        input.stateDir,
        '--image',
        runtime.image,
        ...runtimeFlags,
      ],
      collect: [
        'agentscm',
        'agent-task',
        'collect',
        '--descriptor',
        '<DESCRIPTOR_FILE>',
        '--key',
        remoteKeyFile(input.stateDir),
        '--state-dir',
        input.stateDir,
        ...runtimeFlags,
        ...hubFlags,
      ],
    },
    placeholders: REMOTE_PLACEHOLDERS,
  };
}
