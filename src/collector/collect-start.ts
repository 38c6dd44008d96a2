/**
 * What both kinds of collection (a command's, collect.ts; a review's, collect-review.ts) start
 * from: the input of `agent-task collect`, the descriptor's bytes, the signing key (it must be
 * the key the descriptor's executor names), the owner-private state directory and the upload
 * target.
 */
import { dirname, resolve } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { encodeAnyCollectorDescriptor, type AnyCollectorDescriptor } from '../contracts/review/collector-descriptor.js';
import { readTokenFile } from '../native/grant-token-file.js';
import type { Store } from '../native/store-handle.js';
import { findEnclosingWorkspace } from '../workspace/locate.js';
import { openCollectState, type CollectState } from './collect-state.js';
import type { UploadTarget } from './collect-upload.js';
import type { DockerTransport } from './docker-transport.js';
import { loadSigningKey } from './key-store.js';

export interface CollectInput {
  /** The Store of --data-dir opened for reading: the descriptor is checked against its authority and journal. */
  readonly store: Store;
  /** The Store of --data-dir opened for writing, which a local upload imports into (untouched with --endpoint). */
  readonly uploadStore: Store;
  readonly descriptorFile: string;
  readonly keyFile: string;
  readonly stateDir: string;
  /** A command descriptor needs both (USAGE without them); a review descriptor neither. */
  readonly docker?: string | undefined;
  readonly dockerSocket?: string | undefined;
  readonly tokenFile: string;
  readonly endpoint?: string | undefined;
  /** The agentscm version written into the transfer header. */
  readonly agentscmVersion: string;
  readonly onProgress?: (message: string) => void;
  /** Replaces the engine transport (fault injection in tests). */
  readonly transport?: DockerTransport;
  /** A review descriptor: the operator-selected Claude Code executable (absolute path) the profile pins by digest. */
  readonly reviewExecutable?: string | undefined;
  /** A review descriptor: names of the variables passed to the executable (nothing else is). */
  readonly reviewEnv?: readonly string[] | undefined;
}

function keyOf(keyFile: string, descriptor: AnyCollectorDescriptor): Uint8Array {
  const workspace = findEnclosingWorkspace(dirname(resolve(keyFile)));
  if (workspace !== null) {
    throw new AgentscmError(
      'COLLECT_STATE_UNSAFE',
      `the key file ${resolve(keyFile)} is inside the agentscm workspace ${workspace}, where a checkpoint would ` +
        'record it',
      {
        hint: 'keep the key in a state directory outside every workspace',
      },
    );
  }
  const key = loadSigningKey(keyFile);
  const keyId = key.keyId;
  if (keyId !== descriptor.executor.verification_key_id) {
    throw new AgentscmError(
      'COLLECT_KEY_MISMATCH',
      `the key file holds key ${keyId}, not the key ${descriptor.executor.verification_key_id} of registration ` +
        `${descriptor.executor.registration_id} the descriptor names`,
      {
        hint:
          'pass the key file that was enrolled for this registration (agentscm agent-task key --state-dir, ' +
          'then enroll its public key)',
        details: { registration_id: descriptor.executor.registration_id },
      },
    );
  }
  return key.privateKey;
}
/** A collection's starting point. */
export interface OpenedCollection {
  readonly descriptorBytes: Buffer;
  readonly privateKey: Uint8Array;
  readonly state: CollectState;
  readonly target: UploadTarget;
  readonly id: string;
}

/**
 * What both kinds of collection start from: the descriptor's bytes, the key, the state directory and the upload target.
 */
export function openCollection(input: CollectInput, descriptor: AnyCollectorDescriptor): OpenedCollection {
  const descriptorBytes = encodeAnyCollectorDescriptor(descriptor);
  const privateKey = keyOf(input.keyFile, descriptor);
  const token = readTokenFile(input.tokenFile);
  const state = openCollectState(input.stateDir, input.store);
  return {
    descriptorBytes,
    privateKey,
    state,
    target: { store: input.uploadStore, endpoint: input.endpoint, token },
    id: descriptor.upload_request_id,
  };
}
