/**
 * Real native stores for workflow tests: a temp data directory with one repository and one
 * revision built through the native library (the same code init-repo and checkpoint use).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { BLOB_CHUNK_BYTES, putChunkedBlob, putSmallBlob } from '../../src/native/blobs.js';
import { appendChangeVersion } from '../../src/native/changes.js';
import { bumpPolicyEpoch } from '../../src/native/policy.js';
import { createRepository } from '../../src/native/repositories.js';
import { comparePaths, recordRevision, type EntryMode, type RevisionEntry } from '../../src/native/revisions.js';
import { createAuthority, openAuthority, writeTransaction } from '../../src/native/store.js';
import { setTarget } from '../../src/native/targets.js';
import { openStore, type Store as StoreHandle } from '../../src/tasks/store.js';

export type FileSpec = string | Buffer | { readonly bytes: string | Buffer; readonly mode: EntryMode };

export interface Store {
  readonly dataDir: string;
  readonly repository: string;
  readonly revision: string;
  readonly digests: Readonly<Record<string, string>>;
}

/**
 * Run `body` with a Store opened for writing on `dataDir` and closed after it, as a command's
 * `run` method does around one runner call.
 */
export async function inStore<T>(dataDir: string, body: (store: StoreHandle) => Promise<T>): Promise<T> {
  const store = openStore(dataDir, { mode: 'write' });
  try {
    return await body(store);
  } finally {
    store.close();
  }
}

export function sha256(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Record a revision of `files` (and make it the `main` target) in the store's repository. */
export function addRevision(
  dataDir: string,
  repository: string,
  files: Readonly<Record<string, FileSpec>>,
  parent: string | null = null,
): { revision: string; digests: Record<string, string> } {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    const digests: Record<string, string> = {};
    const entries: RevisionEntry[] = writeTransaction(auth, () =>
      Object.entries(files).map(([path, spec]) => {
        const raw = typeof spec === 'string' || Buffer.isBuffer(spec) ? spec : spec.bytes;
        const mode: EntryMode = typeof spec === 'string' || Buffer.isBuffer(spec) ? 'file' : spec.mode;
        const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'utf8');
        const digest = sha256(bytes);
        if (bytes.byteLength <= BLOB_CHUNK_BYTES) putSmallBlob(auth, bytes, digest);
        else {
          const chunks: Buffer[] = [];
          for (let at = 0; at < bytes.byteLength; at += BLOB_CHUNK_BYTES)
            chunks.push(bytes.subarray(at, at + BLOB_CHUNK_BYTES));
          putChunkedBlob(auth, digest, BigInt(bytes.byteLength), chunks);
        }
        digests[path] = digest;
        return { path, mode, size: BigInt(bytes.byteLength), blob: digest };
      }),
    );
    entries.sort((a, b) => comparePaths(a.path, b.path));
    const { id } = recordRevision(auth, repository, parent, entries);
    setTarget(auth, repository, 'main', id);
    return { revision: id, digests };
  } finally {
    auth.close();
  }
}

/** A fresh store in `dataDir` holding one repository with one revision of `files`. */
export function makeStore(dataDir: string, files: Readonly<Record<string, FileSpec>>): Store {
  const auth = createAuthority(dataDir);
  let repository: string;
  try {
    repository = writeTransaction(auth, () => createRepository(auth, 'demo')).id;
  } finally {
    auth.close();
  }
  const { revision, digests } = addRevision(dataDir, repository, files);
  return { dataDir, repository, revision, digests };
}

export function bumpPolicy(dataDir: string, repository: string): bigint {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return bumpPolicyEpoch(auth, repository).policy_epoch;
  } finally {
    auth.close();
  }
}

export function addChangeVersion(
  dataDir: string,
  repository: string,
  changeId: string,
  revision: string,
  expectedCurrent: bigint | null,
): bigint {
  const auth = openAuthority(dataDir, { mode: 'write' });
  try {
    return appendChangeVersion(auth, repository, changeId, { expectedCurrent, revision, baseRevision: null }).version;
  } finally {
    auth.close();
  }
}

export const SKILL_DIR = 'skills/native-workflow';
export const SKILL_PATH = `${SKILL_DIR}/SKILL.md`;
export const SKILL_TEXT = '---\nname: native-workflow\ndescription: test skill\n---\n\n# test skill\n';

export interface StepSpec {
  readonly id: string;
  readonly needs?: readonly string[];
  readonly required?: boolean;
  readonly action: Record<string, unknown>;
}

/** A definition object (plain JSON) bound to the store. */
export function definition(
  store: Store,
  steps: readonly StepSpec[],
  extra: { name?: string; resources?: readonly string[]; policyEpoch?: number; entrypoint?: string } = {},
): Record<string, unknown> {
  return {
    version: 1,
    name: extra.name ?? 'test-workflow',
    source: { repository: store.repository, revision: store.revision, policy_epoch: extra.policyEpoch ?? 0 },
    skill: { entrypoint: extra.entrypoint ?? SKILL_PATH, resources: [...(extra.resources ?? [])] },
    steps: steps.map((step) => ({
      id: step.id,
      needs: [...(step.needs ?? [])],
      required: step.required ?? true,
      action: step.action,
    })),
  };
}

export function sourcePaths(
  store: Store,
  paths: readonly string[],
  override: Record<string, string> = {},
): Record<string, unknown> {
  return {
    kind: 'source_paths',
    expectations: paths.map((path) => ({ path, sha256: override[path] ?? store.digests[path] ?? '0'.repeat(64) })),
  };
}

export function writeDefinition(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/** A valid CommandRecipe (the collector's strict format). */
export const RECIPE = {
  version: 1,
  image: 'busybox:1.36',
  argv: ['sh', '-c', 'test -f /src/a.txt'],
  env: {},
  workdir: '.',
  timeout_ms: 60000,
  limits: { memory_bytes: 67108864, pids: 64, cpu_millis: 1000, output_bytes: 65536, scratch_bytes: 1048576 },
  toolchain: 'busybox-1.36',
  environment: 'posix-sh-offline',
};
export const RECIPE_PATH = `${SKILL_DIR}/runner.json`;

/** Create Change `changeId` at the store's revision and its command/v1 context for RECIPE_PATH. */
export async function makeCommandBinding(
  store: Store,
  changeId = 'change-1',
): Promise<{ changeVersion: bigint; contextDigest: string }> {
  const changeVersion = addChangeVersion(store.dataDir, store.repository, changeId, store.revision, null);
  const { createReviewContext } = await import('../../src/native/review-contexts.js');
  const auth = openAuthority(store.dataDir, { mode: 'write' });
  try {
    const created = createReviewContext(auth, { repository: store.repository, changeId, runnerPath: RECIPE_PATH });
    return { changeVersion, contextDigest: created.context_digest };
  } finally {
    auth.close();
  }
}

export function commandAction(
  store: Store,
  binding: { changeVersion: bigint; contextDigest: string },
  changeId = 'change-1',
): Record<string, unknown> {
  return {
    kind: 'command',
    runner: 'runner.json',
    change: { repository: store.repository, id: changeId },
    change_version: Number(binding.changeVersion),
    context_digest: binding.contextDigest,
  };
}
