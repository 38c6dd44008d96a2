/**
 * Real stores for agent-task tests: a temp data directory with one repository, a revision that
 * holds a packaged skill, a command recipe and a source file; a Change at that revision with
 * its command/v1 review context; and an installed target requirement with a controller-only
 * source_paths step, a claimable command step that needs it, a second independent command step
 * and an optional require_capability step. Everything is built through the native and workflow
 * libraries (the code the CLI uses).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { AgentRef } from '../../src/contracts/task/common.js';
import { generateKeyPair } from '../../src/crypto/ed25519.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { appendChangeVersion } from '../../src/native/changes.js';
import { enrollExecutor, revokeRegistration, type EnrollResult } from '../../src/native/executor-registry.js';
import { bumpPolicyEpoch } from '../../src/native/policy.js';
import { createRepository } from '../../src/native/repositories.js';
import { createReviewContext } from '../../src/native/review-contexts.js';
import { comparePaths, recordRevision, type RevisionEntry } from '../../src/native/revisions.js';
import { createAuthority, openAuthority, writeTransaction, type Authority } from '../../src/native/store.js';
import { setTarget } from '../../src/native/targets.js';
import { trustedLocalGuard, type TaskContext, type TaskGuard } from '../../src/tasks/context.js';
import { openStore, withStore, type Store } from '../../src/tasks/store.js';
import { installRequirementFile } from '../../src/workflows/requirement.js';
import { RECIPE } from './workflows.js';

export const SKILL_DIR = 'skills/check';
export const SKILL_PATH = `${SKILL_DIR}/SKILL.md`;
export const RECIPE_PATH = `${SKILL_DIR}/runner.json`;
export const NOTES_PATH = `${SKILL_DIR}/notes.md`;
export const SKILL_TEXT = '---\nname: check\ndescription: test skill\n---\n\n# Run the unit tests\n';
/** The workflow tests' valid CommandRecipe, packaged as this fixture's runner.json. */
export { RECIPE };
export const CHANGE_ID = 'change-1';
export const PROFILE = 'default';

export interface TaskStore {
  readonly dataDir: string;
  readonly repository: string;
  revision: string;
  contextDigest: string;
  changeVersion: bigint;
}

export function sha256(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function withWrite<T>(dataDir: string, fn: (auth: Authority) => T): T {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return fn(auth);
  } finally {
    auth.close();
  }
}

export function defaultFiles(extra: Readonly<Record<string, string | Buffer>> = {}): Record<string, string | Buffer> {
  return {
    [SKILL_PATH]: SKILL_TEXT,
    [RECIPE_PATH]: JSON.stringify(RECIPE),
    [NOTES_PATH]: 'notes',
    'a.txt': 'alpha',
    ...extra,
  };
}

/** Record a revision of `files` in the repository (target main follows it). */
export function addRevision(
  dataDir: string,
  repository: string,
  files: Readonly<Record<string, string | Buffer>>,
  parent: string | null,
): string {
  return withWrite(dataDir, (auth) => {
    const entries: RevisionEntry[] = writeTransaction(auth, () =>
      Object.entries(files).map(([path, raw]) => {
        const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'utf8');
        const digest = sha256(bytes);
        putSmallBlob(auth, bytes, digest);
        return { path, mode: 'file' as const, size: BigInt(bytes.byteLength), blob: digest };
      }),
    );
    entries.sort((a, b) => comparePaths(a.path, b.path));
    const { id } = recordRevision(auth, repository, parent, entries);
    setTarget(auth, repository, 'main', id);
    return id;
  });
}

/** A new Change version at `revision` and its command/v1 context. */
export function checkpoint(store: TaskStore, revision: string): void {
  withWrite(store.dataDir, (auth) => {
    const version = appendChangeVersion(auth, store.repository, CHANGE_ID, {
      expectedCurrent: store.changeVersion === 0n ? null : store.changeVersion,
      revision,
      baseRevision: null,
    }).version;
    const context = createReviewContext(auth, {
      repository: store.repository,
      changeId: CHANGE_ID,
      runnerPath: RECIPE_PATH,
    });
    store.revision = revision;
    store.changeVersion = version;
    store.contextDigest = context.context_digest;
  });
}

export interface StepSpec {
  readonly id: string;
  readonly needs?: readonly string[];
  readonly required?: boolean;
  readonly kind: 'source_paths' | 'command' | 'require_capability';
}

export const DEFAULT_STEPS: readonly StepSpec[] = [
  { id: 'paths', kind: 'source_paths' },
  { id: 'unit', kind: 'command', needs: ['paths'] },
  { id: 'lint', kind: 'command' },
  { id: 'cap', kind: 'require_capability', required: false },
];

/** Install the requirement for target main (definition bound to the store's current subject). */
export function installRequirement(
  store: TaskStore,
  dir: string,
  steps: readonly StepSpec[] = DEFAULT_STEPS,
  files: Record<string, string | Buffer> = defaultFiles(),
  target = 'main',
): void {
  const definition = {
    version: 1,
    name: 'checks',
    source: { repository: store.repository, revision: store.revision, policy_epoch: Number(currentEpoch(store)) },
    skill: { entrypoint: SKILL_PATH, resources: [RECIPE_PATH, NOTES_PATH] },
    steps: steps.map((step) => ({
      id: step.id,
      needs: [...(step.needs ?? [])],
      required: step.required ?? true,
      action:
        step.kind === 'source_paths'
          ? { kind: 'source_paths', expectations: [{ path: 'a.txt', sha256: sha256(files['a.txt'] ?? '') }] }
          : step.kind === 'command'
            ? {
                kind: 'command',
                runner: 'runner.json',
                change: { repository: store.repository, id: CHANGE_ID },
                change_version: Number(store.changeVersion),
                context_digest: store.contextDigest,
              }
            : { kind: 'require_capability', capability: 'human-review' },
    })),
  };
  const file = join(dir, `requirement-${Date.now()}-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(definition));
  withStore(store.dataDir, 'write', (s) => installRequirementFile(s, { target, file }));
}

let epochCache = new WeakMap<TaskStore, bigint>();

function currentEpoch(store: TaskStore): bigint {
  return epochCache.get(store) ?? 0n;
}

export function bumpPolicy(store: TaskStore): bigint {
  const epoch = withWrite(store.dataDir, (auth) => bumpPolicyEpoch(auth, store.repository).policy_epoch);
  epochCache.set(store, epoch);
  return epoch;
}

/** A store with repository, revision, Change version 1, context and the default requirement. */
export function makeTaskStore(
  dataDir: string,
  steps: readonly StepSpec[] = DEFAULT_STEPS,
  files: Record<string, string | Buffer> = defaultFiles(),
): TaskStore {
  epochCache = new WeakMap();
  const auth = createAuthority(dataDir);
  let repository: string;
  try {
    repository = writeTransaction(auth, () => createRepository(auth, 'demo')).id;
  } finally {
    auth.close();
  }
  const revision = addRevision(dataDir, repository, files, null);
  const store: TaskStore = { dataDir, repository, revision, contextDigest: '', changeVersion: 0n };
  checkpoint(store, revision);
  installRequirement(store, dataDir, steps, files);
  return store;
}

export interface Executor {
  readonly privateKey: Uint8Array;
  readonly publicKeyHex: string;
  readonly enrollment: EnrollResult;
}

/** Enroll a fresh key for `step` of the store's repository and profile. */
export function enroll(store: TaskStore, step: string, executor = 'box-1'): Executor {
  const pair = generateKeyPair();
  const publicKeyHex = Buffer.from(pair.publicKey).toString('hex');
  const enrollment = withWrite(store.dataDir, (auth) =>
    enrollExecutor(auth, { repository: store.repository, profile: PROFILE, step, executor, public_key: publicKeyHex }),
  );
  return { privateKey: pair.privateKey, publicKeyHex, enrollment };
}

export function revoke(store: TaskStore, registrationId: string): void {
  withWrite(store.dataDir, (auth) => revokeRegistration(auth, registrationId, 'test'));
}

/** A controllable clock (ms) injected into the core. */
export class FakeClock {
  constructor(public ms = 1_700_000_000_000) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * Stores of fixture contexts: `call` (requests.ts) replaces one by a Store of its own per call,
 * opened in the operation's mode and closed after it, as `agent-task call` does; a context that
 * carries another Store (a session) keeps it.
 */
export const PER_CALL_STORES = new WeakSet<Store>();

export function context(
  store: TaskStore,
  actor: AgentRef,
  clock: FakeClock,
  guard: TaskGuard = trustedLocalGuard,
): TaskContext {
  const handle = openStore(store.dataDir, { mode: 'write' });
  PER_CALL_STORES.add(handle);
  return {
    store: handle,
    actor,
    profile: PROFILE,
    target: 'main',
    subject: { change_id: CHANGE_ID, context_digest: store.contextDigest },
    guard,
    now: clock.now,
  };
}
