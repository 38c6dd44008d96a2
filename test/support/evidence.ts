/**
 * The evidence chain in tests: a real store with a command step, a real signing key from the
 * collector key store enrolled for it, an installed collector profile, a live grant, a real
 * collector claim (its descriptor), and envelopes built and signed with the transfer encoder.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { createSigningKey, loadSigningKey } from '../../src/collector/key-store.js';
import { validateCollectorDescriptor, type CollectorDescriptor } from '../../src/contracts/collector/descriptor.js';
import { decodeCollectorProfile } from '../../src/contracts/collector/profile.js';
import {
  encodeTransferEnvelope,
  transferRecordEntry,
  type TransferHeader,
} from '../../src/contracts/collector/transfer.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import type { SigningKey } from '../../src/contracts/key-file.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { enrollExecutor, type EnrollResult } from '../../src/native/executor-registry.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { openAuthority } from '../../src/native/store.js';
import { claimToFile } from '../../src/tasks/collector/claim-file.js';
import {
  transferExecutionRequest,
  transferIsolation,
  transferRuntimeIdentityDigest,
} from '../../src/tasks/collector/execution.js';
import { installCollectorProfile } from '../../src/tasks/collector/profiles.js';
import { authorizeTaskToken, type GrantAuthorization } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { tempDir } from '../helpers/tmp.js';
import { makeGrant } from './grants.js';
import {
  CHANGE_ID,
  makeTaskStore,
  PROFILE,
  RECIPE,
  RECIPE_PATH,
  sha256,
  type StepSpec,
  type TaskStore,
} from './tasks.js';

export const ALICE: AgentRef = { owner_id: 'alice', agent_id: 'agent-1' };

/** paths (source_paths) → unit (command, the collected step) ; cap optional. */
export const EVIDENCE_STEPS: readonly StepSpec[] = [
  { id: 'paths', kind: 'source_paths' },
  { id: 'unit', kind: 'command', needs: ['paths'] },
  { id: 'cap', kind: 'require_capability', required: false },
];

export const RUNTIME_IDENTITY: JsonObject = {
  version: 1,
  backend: 'docker-engine-api',
  engine_version: '27.0.0',
  api_version: '1.46',
  os: 'linux',
  arch: 'amd64',
  security_options: ['name=seccomp,profile=builtin'],
  cgroup_version: '2',
  image: { reference: 'busybox:1.36', id: `sha256:${'c'.repeat(64)}` },
  executable_sha256: 'd'.repeat(64),
};

export interface Evidence {
  readonly dir: string;
  readonly store: TaskStore;
  readonly key: SigningKey;
  readonly enrollment: EnrollResult;
  readonly profileId: string;
  readonly tokenFile: string;
  readonly grantId: string;
}

function withWrite<T>(dataDir: string, fn: (auth: ReturnType<typeof openAuthority>) => T): T {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

/** Enroll `key` for step unit and install a profile for that epoch; returns the profile id. */
export function enrollAndInstall(
  store: TaskStore,
  key: SigningKey,
  executor = 'box-1',
): { enrollment: EnrollResult; profileId: string } {
  return withWrite(store.dataDir, (auth) => {
    const enrollment = enrollExecutor(auth, {
      repository: store.repository,
      profile: PROFILE,
      step: 'unit',
      executor,
      public_key: key.publicKeyHex,
    });
    const profile = decodeCollectorProfile(
      encodeCanonical({
        version: 1,
        kind: 'command',
        repository_id: store.repository,
        workflow_profile: PROFILE,
        step_id: 'unit',
        registration_id: enrollment.registration_id,
        registration_epoch: enrollment.registration_epoch,
        verification_key_id: enrollment.verification_key_id,
        recipe: RECIPE,
        recipe_digest: sha256(JSON.stringify(RECIPE)),
        runtime_identity_digest: transferRuntimeIdentityDigest(RUNTIME_IDENTITY),
      }),
    );
    return { enrollment, profileId: installCollectorProfile(auth, profile, Date.now()).collector_profile_id };
  });
}

export function makeEvidence(t: TestContext, steps: readonly StepSpec[] = EVIDENCE_STEPS): Evidence {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const store = makeTaskStore(dataDir, steps);
  const created = createSigningKey(join(dir, 'state'));
  const key = loadSigningKey(created.key_file);
  const { enrollment, profileId } = enrollAndInstall(store, key);
  const grant = makeGrant(dataDir, dir, ALICE);
  return { dir, store, key, enrollment, profileId, tokenFile: grant.token_file, grantId: grant.grant.grant_id };
}

let outs = 0;
/** A real collector claim through the core of `agent-task claim`; the descriptor as written. */
export function claim(ev: Evidence, tokenFile = ev.tokenFile): CollectorDescriptor {
  outs += 1;
  const out = join(ev.dir, `descriptor-${outs}.json`);
  withStore(ev.store.dataDir, 'write', (held) =>
    claimToFile({
      store: held,
      tokenFile,
      profileId: ev.profileId,
      change: CHANGE_ID,
      context: ev.store.contextDigest,
      leaseMs: 3_600_000n,
      out,
      target: 'main',
    }),
  );
  return validateCollectorDescriptor(JSON.parse(readFileSync(out, 'utf8')) as JsonObject);
}

export function authorization(ev: Evidence, tokenFile = ev.tokenFile): GrantAuthorization {
  // The grant's guard reads through this Store on every later check: it stays open for the test.
  return authorizeTaskToken({ store: openStore(ev.store.dataDir, { mode: 'write' }), token: readTokenFile(tokenFile) });
}

export interface TransferParts {
  request: JsonObject;
  record: JsonObject;
  header: TransferHeader;
}

/** The request, a passing record and the header a collector would send for `descriptor`. */
export function transferParts(descriptor: CollectorDescriptor): TransferParts {
  const request = transferExecutionRequest({
    descriptor,
    step_id: 'unit',
    recipe_path: RECIPE_PATH,
    recipe_digest: sha256(JSON.stringify(RECIPE)),
    runtime_identity: RUNTIME_IDENTITY,
  });
  const requestBytes = encodeCanonical(request);
  const record: JsonObject = {
    version: 1,
    kind: 'command/v1',
    attempt_id: descriptor.attempt.attempt_id,
    generation: descriptor.attempt.fence,
    request_digest: sha256(requestBytes),
    outcome: 'passed',
    exit_code: 0,
    oom_killed: false,
    timed_out: false,
    cancelled: false,
    output_limited: false,
    output_limit_bytes: RECIPE.limits.output_bytes,
    stdout: { retained_bytes: 3, observed_bytes: 3, truncated: false, sha256: sha256('ok\n') },
    stderr: { retained_bytes: 0, observed_bytes: 0, truncated: false, sha256: sha256('') },
    container_name: 'agentscm-test',
    container_id: 'e'.repeat(64),
    image_id: (RUNTIME_IDENTITY.image as JsonObject).id as string,
    started_at: '2026-12-01T00:00:00.000Z',
    finished_at: '2026-12-01T00:00:01.000Z',
    duration_ms: 1000,
    cleanup: { container: 'removed', snapshot: 'removed', confirmed: true },
    recovered: false,
    previous_record_digest: null,
    error: null,
    isolation: transferIsolation(descriptor.recipe),
  };
  return { request, record, header: headerFor(descriptor, requestBytes, encodeCanonical(record)) };
}

function headerFor(descriptor: CollectorDescriptor, requestBytes: Buffer, recordBytes: Buffer): TransferHeader {
  return {
    version: 1,
    audience: descriptor.authority_id,
    repository_id: descriptor.repository_id,
    collector_profile_id: descriptor.collector_profile_id,
    task_id: descriptor.task.task_id,
    task_digest: descriptor.task.task_digest,
    attempt_id: descriptor.attempt.attempt_id,
    attempt_digest: descriptor.attempt.attempt_digest,
    execution_operation_id: descriptor.attempt.execution_operation_id,
    fence: descriptor.attempt.fence,
    origin: descriptor.origin,
    executor: descriptor.executor,
    request_digest: sha256(requestBytes),
    collector: { agentscm_version: '0.2.0', runtime_identity_digest: descriptor.runtime_identity_digest },
    upload_request_id: descriptor.upload_request_id,
    records: [
      transferRecordEntry('execution_request', requestBytes),
      transferRecordEntry('execution_record', recordBytes),
    ],
  };
}

/** Sign and frame: the header's record entries are recomputed from the (possibly changed) records unless `keepHeaderRecords`. */
export function envelopeOf(
  key: SigningKey,
  parts: TransferParts,
  headerOverride: Partial<TransferHeader> = {},
): Buffer {
  const requestBytes = encodeCanonical(parts.request);
  const recordBytes = encodeCanonical(parts.record);
  const header: TransferHeader = {
    ...parts.header,
    records: [
      transferRecordEntry('execution_request', requestBytes),
      transferRecordEntry('execution_record', recordBytes),
    ],
    ...headerOverride,
  };
  return encodeTransferEnvelope(header, [requestBytes, recordBytes], key.privateKey);
}
