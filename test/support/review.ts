/**
 * Review test fixtures: a real native store with one immutable revision, a policy and an action,
 * canned model answers, and the fixture executable installed in a temporary directory.
 */
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { revisionReviewSources, type ReviewSources } from '../../src/collector/review/sources.js';
import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import type { ReviewAction, ReviewBudgets } from '../../src/contracts/review/policy.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { createRepository } from '../../src/native/repositories.js';
import { comparePaths, recordRevision, type RevisionEntry } from '../../src/native/revisions.js';
import { createAuthority, writeTransaction, type Authority } from '../../src/native/store.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

export interface ReviewStore {
  readonly dataDir: string;
  readonly auth: Authority;
  readonly repository: string;
  readonly revision: string;
  readonly sources: ReviewSources;
}

/** The revision reviewed by most tests. */
export const FILES: Readonly<Record<string, string>> = {
  'src/a.ts': 'export const a = 1;\n',
  'src/b.ts': 'export function b(): string {\n  return "naïve ✓";\n}\n',
  'src/c.ts': `${'// line\n'.repeat(40)}`,
  'secrets/key.pem': '-----BEGIN PRIVATE KEY-----\n',
};

/** A native store in a temporary data directory holding one revision of `files`. */
export function reviewStore(
  t: TestContext,
  files: Readonly<Record<string, string | Buffer>> = FILES,
  dataDir = tempDir(t),
): ReviewStore {
  const auth = createAuthority(dataDir);
  t.after(() => auth.close());
  const repository = createRepository(auth, 'review-demo').id;
  const entries: RevisionEntry[] = writeTransaction(auth, () =>
    Object.entries(files).map(([path, content]) => {
      const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
      return { path, mode: 'file' as const, size: BigInt(bytes.length), blob: putSmallBlob(auth, bytes).digest };
    }),
  );
  entries.sort((x, y) => comparePaths(x.path, y.path));
  const revision = recordRevision(auth, repository, null, entries).id;
  return { dataDir, auth, repository, revision, sources: revisionReviewSources(auth, repository, revision) };
}

export const POLICY: JsonObject = {
  version: 1,
  instructions: 'Review the excerpts against every criterion.',
  exposure: ['src'],
  max_excerpt_bytes: 256,
  max_call_excerpt_bytes: 300,
  call_timeout_ms: 20_000,
};

export function policyBytes(overrides: JsonObject = {}): Buffer {
  return encodeCanonical({ ...POLICY, ...overrides });
}

export const CRITERIA = [
  { criterion: 'correctness', description: 'The code does what its names say.' },
  { criterion: 'no-secrets', description: 'No credential is committed.' },
];

export const BUDGETS: ReviewBudgets = {
  model_calls: 8,
  input_bytes: 64 * 1024,
  output_bytes: 16 * 1024,
  files_exposed: 8,
  wall_time_ms: 60_000,
};

export function reviewAction(
  coverage: readonly string[] = ['src/a.ts', 'src/b.ts', 'src/c.ts'],
  budgets: Partial<ReviewBudgets> = {},
): ReviewAction {
  return {
    kind: 'review',
    policy: 'review-policy.json',
    coverage,
    criteria: CRITERIA,
    budgets: { ...BUDGETS, ...budgets },
  };
}

/** A model answer: one verdict per criterion (pass unless named in `failing`) and the given findings. */
export function answerText(failing: readonly string[] = [], findings: readonly JsonValue[] = []): string {
  return JSON.stringify(answerJson(failing, findings));
}

export function answerJson(failing: readonly string[] = [], findings: readonly JsonValue[] = []): JsonObject {
  return {
    version: 1,
    verdicts: CRITERIA.map((c) => ({
      criterion: c.criterion,
      verdict: failing.includes(c.criterion) ? 'fail' : 'pass',
    })),
    findings: [...findings],
  };
}

export interface InstalledFixture {
  readonly executable: string;
  readonly workDir: string;
  readonly plan: string;
  readonly log: string;
  readonly env: Record<string, string>;
  /** The invocations the fixture logged. */
  readonly calls: () => { call_index: number; argv: string[]; cwd: string; env: string[]; mode: string }[];
  readonly started: () => number;
}

/** Install the fixture executable (a copy, mode 0755) with a plan of per-call behaviours. */
export function installFixture(t: TestContext, plan: readonly JsonValue[]): InstalledFixture {
  const root = tempDir(t, 'agentscm-review-');
  const bin = join(root, 'bin');
  mkdirSync(bin);
  const executable = join(bin, 'claude');
  copyFileSync(join(REPO_ROOT, 'test', 'review', 'fixtures', 'claude'), executable);
  chmodSync(executable, 0o755);
  const workDir = join(root, 'work');
  mkdirSync(workDir, { mode: 0o700 });
  const planPath = join(root, 'plan.json');
  writeFileSync(planPath, JSON.stringify(plan));
  const log = join(root, 'calls.log');
  writeFileSync(log, '');
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  return {
    executable,
    workDir,
    plan: planPath,
    log,
    // PATH lets the shebang find node; nothing else of the test's environment is passed.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FIXTURE_PLAN: planPath, FIXTURE_LOG: log },
    calls: () =>
      read(log)
        .split('\n')
        .filter((line) => line !== '')
        .map(
          (line) =>
            JSON.parse(line) as { call_index: number; argv: string[]; cwd: string; env: string[]; mode: string },
        ),
    started: () =>
      read(`${log}.started`)
        .split('\n')
        .filter((line) => line !== '').length,
  };
}
