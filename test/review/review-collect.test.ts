/**
 * Collecting a review on the agent-owned path (docs/review.md "Collecting a review"), the way an
 * operator and a collector run it: real bin/dev.js processes against a real store, the stand-in
 * Claude Code executable, a requirement whose only step is a review. The operator enrolls a key
 * and installs a finite-review profile; the collector claims the review task, collects (the
 * controller over the Claude Code transport, every call reserved first) and uploads; the
 * authority imports by validation-only replay; qualification, approve and land follow.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { loadSigningKey } from '../../src/collector/key-store.js';
import {
  encodeTransferEnvelope,
  readTransferEnvelope,
  transferRecordEntry,
  type TransferHeader,
} from '../../src/contracts/collector/transfer.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonValue } from '../../src/contracts/json/json-value.js';
import { decodeReviewRecord, reviewRecordToJson } from '../../src/contracts/review/record.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { fixtureEnv } from '../support/review-run.js';
import { buildReviewScenario } from '../support/review-scenario.js';
import { answerJson, BUDGETS, type InstalledFixture } from '../support/review.js';

interface Demo {
  readonly root: string;
  readonly dataDir: string;
  readonly ws: string;
  /** The revision init-repo made main point at. */
  readonly base: string;
  readonly contextDigest: string;
  readonly stateDir: string;
  readonly keyFile: string;
  readonly tokenFile: string;
  readonly profileFile: string;
  readonly profile: Record<string, unknown>;
  readonly fixture: InstalledFixture;
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

function errorCode(result: CliResult): string {
  return jsonOf<{ error: { code: string } }>(result).error.code;
}

/** The review world (test/support/review-scenario.ts) as this file's tests use it. */
async function makeDemo(t: TestContext, plan?: readonly JsonValue[], withCheck = false): Promise<Demo> {
  const {
    scenario: s,
    fixture,
    profile,
    profileFile,
  } = await buildReviewScenario(t, {
    ...(plan === undefined ? {} : { plan }),
    withCheck,
  });
  return {
    root: s.root,
    dataDir: s.dataDir,
    ws: s.ws,
    base: s.base,
    contextDigest: s.contextDigest,
    stateDir: s.stateDir,
    keyFile: s.keyFile,
    tokenFile: s.tokenFile,
    profileFile,
    profile,
    fixture,
  };
}

function cli(demo: Demo, args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(['--data-dir', demo.dataDir, ...args], { env });
}

async function installProfile(demo: Demo): Promise<string> {
  return jsonOf<{ collector_profile_id: string }>(
    ok(await cli(demo, ['agent-task', 'profile', 'install', demo.profileFile, '--json'])),
  ).collector_profile_id;
}

async function claim(demo: Demo, profileId: string, out: string): Promise<Record<string, unknown>> {
  return jsonOf(
    ok(
      await cli(demo, [
        'agent-task',
        'claim',
        '--profile',
        profileId,
        '--change',
        'c1',
        '--context',
        demo.contextDigest,
        '--token-file',
        demo.tokenFile,
        '--out',
        out,
        '--json',
      ]),
    ),
  );
}

function collectArgs(demo: Demo, descriptorFile: string, extra: readonly string[] = []): string[] {
  return [
    'agent-task',
    'collect',
    '--descriptor',
    descriptorFile,
    '--key',
    demo.keyFile,
    '--state-dir',
    demo.stateDir,
    '--token-file',
    demo.tokenFile,
    '--review-executable',
    demo.fixture.executable,
    '--review-env',
    'PATH',
    '--review-env',
    'FIXTURE_PLAN',
    '--review-env',
    'FIXTURE_LOG',
    '--json',
    ...extra,
  ];
}

test(
  'a finite-review collector claims, collects and uploads; the import replays it; the subject ' +
    'qualifies, is approved and lands',
  async (t) => {
    const demo = await makeDemo(t);
    const profileId = await installProfile(demo);
    const shown = jsonOf<{ profile: { kind: string } }>(
      ok(await cli(demo, ['agent-task', 'profile', 'show', profileId.slice(0, 12), '--json'])),
    );
    assert.equal(shown.profile.kind, 'finite_review');

    // Before any claim the review task is pending, and the next step is a collector claim.
    const before = jsonOf<{ qualified: boolean; tasks: { step_id: string; state: string }[] }>(
      await cli(demo, ['qualification', '--change', 'c1', '--json']),
    );
    assert.equal(before.qualified, false);
    assert.equal(before.tasks.find((task) => task.step_id === 'review')?.state, 'pending');

    const descriptorFile = join(demo.root, 'review.descriptor.json');
    const claimed = await claim(demo, profileId, descriptorFile);
    const descriptor = JSON.parse(readFileSync(descriptorFile, 'utf8')) as {
      subject: { revision: string };
      review: { policy_path: string; action: { coverage: string[] } };
      transport: { model: string };
    };
    assert.equal(descriptor.review.policy_path, 'skills/check/review-policy.json');
    assert.deepEqual(descriptor.review.action.coverage, ['src/a.ts']);
    assert.equal(descriptor.transport.model, 'claude-sonnet-4-5');
    assert.ok(claimed);

    const collected = jsonOf<{
      ran: boolean;
      outcome: string;
      upload: { answer: { status: string; outcome: string; receipt: { status: string } } };
    }>(ok(await cli(demo, collectArgs(demo, descriptorFile), fixtureEnv(demo.fixture))));
    assert.equal(collected.ran, true);
    assert.equal(collected.outcome, 'passed');
    assert.equal(collected.upload.answer.status, 'imported');
    assert.equal(collected.upload.answer.outcome, 'passed');
    assert.equal(collected.upload.answer.receipt.status, 'written');
    assert.equal(demo.fixture.calls().length, 1);
    // The executable saw only the variables the operator named, in a private working directory.
    assert.deepEqual(demo.fixture.calls()[0]?.env.sort(), ['FIXTURE_LOG', 'FIXTURE_PLAN', 'PATH']);

    // Collecting again never calls the model again: the retained envelope is uploaded as it is.
    const again = jsonOf<{ ran: boolean; upload: { answer: { status: string } } }>(
      ok(await cli(demo, collectArgs(demo, descriptorFile), fixtureEnv(demo.fixture))),
    );
    assert.equal(again.ran, false);
    assert.equal(again.upload.answer.status, 'retained');
    assert.equal(demo.fixture.calls().length, 1);

    const qualification = jsonOf<{ qualified: boolean; receipt_digest: string | null }>(
      ok(await cli(demo, ['qualification', '--change', 'c1', '--json'])),
    );
    assert.equal(qualification.qualified, true);
    assert.ok(qualification.receipt_digest);
    const approved = jsonOf<{ receipt_kind: string; receipt_digest: string }>(
      ok(await cli(demo, ['approve', '--change', 'c1', '--json'])),
    );
    assert.equal(approved.receipt_kind, 'imported');
    assert.equal(approved.receipt_digest, qualification.receipt_digest);
    ok(await cli(demo, ['land', '--change', 'c1', '--target', 'main', '--json']));
    const targets = jsonOf<{ targets: { name: string; revision: string }[] }>(
      ok(await cli(demo, ['target', 'list', '--json'])),
    );
    const landed = targets.targets.find((x) => x.name === 'main')?.revision;
    assert.notEqual(landed, demo.base);
    assert.equal(landed, descriptor.subject.revision);

    // The offline bundle verifies the review transfer without the store.
    const bundle = join(demo.root, 'receipt.agscmrb');
    ok(await cli(demo, ['receipt', 'export', approved.receipt_digest, '--out', bundle]));
    const verified = await runCli(['receipt', 'verify', bundle, '--allow-unpinned', '--json']);
    assert.equal(verified.code, 0, verified.stderr);
  },
);

test('a step that needs the review waits for its replayed import, then is offered to its collector', async (t) => {
  const demo = await makeDemo(t, undefined, true);
  const profileId = await installProfile(demo);
  type Answer = {
    qualified: boolean;
    tasks: { task_id: string; step_id: string; state: string }[];
    failures: { task_id: string; code: string }[];
    next: { operation: string; task_id?: string };
  };
  const failuresOf = (answer: Answer, step: string): string[] => {
    const id = answer.tasks.find((task) => task.step_id === step)?.task_id;
    return answer.failures.filter((f) => f.task_id === id).map((f) => f.code);
  };
  const before = jsonOf<Answer>(await cli(demo, ['qualification', '--change', 'c1', '--json']));
  assert.equal(before.tasks.find((task) => task.step_id === 'check')?.state, 'blocked');
  assert.deepEqual(failuresOf(before, 'check'), ['dependency_incomplete']);

  const descriptorFile = join(demo.root, 'review.descriptor.json');
  await claim(demo, profileId, descriptorFile);
  const collected = jsonOf<{ upload: { answer: { status: string; outcome: string } } }>(
    ok(await cli(demo, collectArgs(demo, descriptorFile), fixtureEnv(demo.fixture))),
  );
  assert.equal(collected.upload.answer.status, 'imported');
  assert.equal(collected.upload.answer.outcome, 'passed');

  // The review is complete by its import: the command step is the one left, and it is pending.
  const after = jsonOf<Answer>(await cli(demo, ['qualification', '--change', 'c1', '--json']));
  assert.equal(after.qualified, false);
  assert.equal(after.tasks.find((task) => task.step_id === 'review')?.state, 'succeeded');
  assert.equal(after.tasks.find((task) => task.step_id === 'check')?.state, 'pending');
  assert.deepEqual(failuresOf(after, 'check'), ['task_pending']);
  assert.deepEqual(failuresOf(after, 'review'), []);
  assert.deepEqual(after.next, {
    operation: 'collector_claim',
    task_id: after.tasks.find((task) => task.step_id === 'check')?.task_id,
  });

  // Revoking the reviewer's registration takes the review's evidence, and so the dependency, back.
  ok(await cli(demo, ['agent-task', 'revoke', String(demo.profile.registration_id), '--reason', 'key rotated']));
  const revoked = jsonOf<Answer>(await cli(demo, ['qualification', '--change', 'c1', '--json']));
  assert.deepEqual(failuresOf(revoked, 'review'), ['authorization_changed']);
  assert.equal(revoked.tasks.find((task) => task.step_id === 'check')?.state, 'blocked');
  assert.deepEqual(failuresOf(revoked, 'check'), ['dependency_incomplete']);
});

test('a failed review is imported as not passed: the subject does not qualify and approve is refused', async (t) => {
  const failing = answerJson(
    ['correctness'],
    [{ criterion: 'correctness', path: 'src/a.ts', line: 1, severity: 'blocking', message: 'wrong' }],
  );
  const demo = await makeDemo(t, [{ mode: 'answer', response: failing }]);
  const profileId = await installProfile(demo);
  const descriptorFile = join(demo.root, 'd.json');
  await claim(demo, profileId, descriptorFile);
  const collected = jsonOf<{ outcome: string; upload: { answer: { outcome: string } } }>(
    ok(await cli(demo, collectArgs(demo, descriptorFile), fixtureEnv(demo.fixture))),
  );
  assert.equal(collected.outcome, 'failed');
  assert.equal(collected.upload.answer.outcome, 'failed');
  const answer = jsonOf<{
    qualified: boolean;
    tasks: { step_id: string; state: string }[];
    failures: { code: string }[];
  }>(await cli(demo, ['qualification', '--change', 'c1', '--json']));
  assert.equal(answer.qualified, false);
  assert.equal(answer.tasks.find((task) => task.step_id === 'review')?.state, 'failed');
  assert.ok(
    answer.failures.some((failure) => failure.code === 'review_not_passed'),
    JSON.stringify(answer.failures),
  );
  const refused = await cli(demo, ['approve', '--change', 'c1', '--json']);
  assert.equal(refused.code, 1, refused.stderr);
});

test(
  'installation refuses a fixture or HTTP basis and a profile that does not fit the review step; ' +
    'collect refuses another executable',
  async (t) => {
    const demo = await makeDemo(t);
    for (const [basis, code] of [
      ['fixture', 'REVIEW_TRANSPORT_NOT_QUALIFIED'],
      ['http', 'REVIEW_TRANSPORT_NOT_QUALIFIED'],
    ] as const) {
      const file = join(demo.root, `${basis}.json`);
      writeFileSync(file, formatJson({ ...demo.profile, transport: { ...(demo.profile.transport as object), basis } }));
      assert.equal(errorCode(await cli(demo, ['agent-task', 'profile', 'install', file, '--json'])), code);
    }
    const misfits: [string, Record<string, unknown>][] = [
      ['policy', { policy_sha256: sha256('other') }],
      ['coverage', { coverage: ['src/b.ts'] }],
      ['budgets', { budgets: { ...BUDGETS, model_calls: 9 } }],
    ];
    for (const [name, change] of misfits) {
      const file = join(demo.root, `misfit-${name}.json`);
      writeFileSync(file, formatJson({ ...demo.profile, ...change } as never));
      assert.equal(
        errorCode(await cli(demo, ['agent-task', 'profile', 'install', file, '--json'])),
        'COLLECTOR_PROFILE_STEP_INVALID',
        name,
      );
    }
    const profileId = await installProfile(demo);
    const descriptorFile = join(demo.root, 'd.json');
    await claim(demo, profileId, descriptorFile);
    // Another executable (the same stand-in with one more byte) is not the pinned one: nothing is called.
    const other = join(demo.root, 'other-claude');
    writeFileSync(other, Buffer.concat([readFileSync(demo.fixture.executable), Buffer.from('\n')]), { mode: 0o755 });
    const args = collectArgs(demo, descriptorFile).map((arg) => (arg === demo.fixture.executable ? other : arg));
    assert.equal(errorCode(await cli(demo, args, fixtureEnv(demo.fixture))), 'COLLECT_RUNTIME_MISMATCH');
    // Without an executable the review is not configured; nothing falls back.
    const none = [
      'agent-task',
      'collect',
      '--descriptor',
      descriptorFile,
      '--key',
      demo.keyFile,
      '--state-dir',
      demo.stateDir,
      '--token-file',
      demo.tokenFile,
      '--json',
    ];
    assert.equal(errorCode(await cli(demo, none)), 'REVIEW_RUNTIME_NOT_CONFIGURED');
    assert.equal(demo.fixture.calls().length, 0);
  },
);

/** Re-sign a review envelope after `edit` changed its records (the collector's own key: only replay can catch it). */
function resigned(envelope: Buffer, keyFile: string, edit: (records: Buffer[]) => Buffer[]): Buffer {
  const read = readTransferEnvelope(envelope);
  const records = edit(read.records.map((r) => Buffer.from(r.bytes)));
  const last = records.length - 1;
  const header: TransferHeader = {
    ...read.header,
    records: records.map((bytes, i) => transferRecordEntry(i === last ? 'review_record' : 'review_request', bytes)),
  };
  return encodeTransferEnvelope(header, records, loadSigningKey(keyFile).privateKey);
}

function editRecord(records: Buffer[], edit: (record: Record<string, unknown>) => void): Buffer[] {
  const last = records.length - 1;
  const record = reviewRecordToJson(decodeReviewRecord(records[last] as Buffer)) as Record<string, unknown>;
  edit(record);
  return [...records.slice(0, last), encodeCanonical(record as never)];
}

test(
  'import replays every review transfer: a tampered response, a changed record, a missing or extra ' +
    'request are refused with their codes and change nothing',
  async (t) => {
    const demo = await makeDemo(t, [{ mode: 'answer', response: answerJson() }]);
    const profileId = await installProfile(demo);
    const descriptorFile = join(demo.root, 'd.json');
    await claim(demo, profileId, descriptorFile);
    // Collect without uploading (the endpoint refuses), to get the signed envelope.
    const offline = await cli(
      demo,
      collectArgs(demo, descriptorFile, ['--endpoint', 'http://127.0.0.1:9/none']),
      fixtureEnv(demo.fixture),
    );
    assert.notEqual(offline.code, 0);
    const descriptor = JSON.parse(readFileSync(descriptorFile, 'utf8')) as { upload_request_id: string };
    const envelope = readFileSync(
      join(demo.stateDir, 'collections', sha256(descriptor.upload_request_id), 'envelope.agscmtr'),
    );
    const tryUpload = async (bytes: Buffer): Promise<CliResult> => {
      const file = join(demo.root, `e-${sha256(bytes).slice(0, 8)}.agscmtr`);
      writeFileSync(file, bytes);
      return cli(demo, ['agent-task', 'upload', file, '--token-file', demo.tokenFile, '--json']);
    };
    const cases: [string, Buffer, string][] = [
      [
        'tampered response',
        resigned(envelope, demo.keyFile, (r) =>
          editRecord(r, (rec) => {
            const calls = rec.calls as { observation: { response: string } }[];
            (calls[0] as { observation: { response: string } }).observation.response = JSON.stringify(
              answerJson(['correctness']),
            );
          }),
        ),
        'REVIEW_REPLAY_RESPONSE_TAMPERED',
      ],
      [
        'changed outcome',
        resigned(envelope, demo.keyFile, (r) =>
          editRecord(r, (rec) => {
            rec.findings = [
              {
                call_index: 0,
                criterion: 'correctness',
                path: 'src/a.ts',
                line: 1,
                severity: 'advisory',
                message: 'added',
              },
            ];
          }),
        ),
        'REVIEW_REPLAY_RECORD_MISMATCH',
      ],
      ['missing request', resigned(envelope, demo.keyFile, (r) => r.slice(1)), 'REVIEW_REPLAY_TRACE_MISMATCH'],
      [
        'extra request',
        resigned(envelope, demo.keyFile, (r) => [r[0] as Buffer, ...r]),
        'REVIEW_REPLAY_TRACE_MISMATCH',
      ],
      [
        'changed request',
        resigned(envelope, demo.keyFile, (r) => [
          Buffer.from((r[0] as Buffer).toString('utf8').replace('export const a = 2;', 'export const a = 3;')),
          ...r.slice(1),
        ]),
        'REVIEW_REPLAY_REQUEST_MISMATCH',
      ],
      [
        'other model',
        resigned(envelope, demo.keyFile, (r) =>
          editRecord(r, (rec) => {
            (rec.transport as { model: string }).model = 'other-model';
          }),
        ),
        'REVIEW_PROFILE_MISMATCH',
      ],
    ];
    for (const [name, bytes, code] of cases) {
      const refused = await tryUpload(bytes);
      assert.notEqual(refused.code, 0, name);
      assert.equal(errorCode(refused), code, `${name}: ${refused.stderr}`);
    }
    // Nothing was imported: the untouched envelope still imports and passes.
    const good = jsonOf<{ upload: { answer: { status: string; outcome: string } } }>(ok(await tryUpload(envelope)));
    assert.equal(good.upload.answer.status, 'imported');
    assert.equal(good.upload.answer.outcome, 'passed');
  },
);

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test(
  'SIGKILL of agent-task collect during a model call: collecting again never calls again, and the ' +
    'uncertain review is uploaded as not passed',
  async (t) => {
    let startedFile = '';
    t.after(() => {
      // The slow stand-in call outlives its killed parent: end it by its own pid.
      let started = '';
      try {
        started = readFileSync(startedFile, 'utf8');
      } catch {
        return;
      }
      for (const line of started.split('\n')) {
        const pid = Number(line.split(' ')[1]);
        if (Number.isInteger(pid) && pid > 0) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    });
    const demo = await makeDemo(t, [
      { mode: 'slow', ms: 60_000, response: answerJson() },
      { mode: 'answer', response: answerJson() },
    ]);
    startedFile = `${demo.fixture.log}.started`;
    const profileId = await installProfile(demo);
    const descriptorFile = join(demo.root, 'd.json');
    await claim(demo, profileId, descriptorFile);
    const env: NodeJS.ProcessEnv = { ...process.env, ...fixtureEnv(demo.fixture) };
    delete env.AGENTSCM_DATA_DIR;
    const child = spawn(
      process.execPath,
      [...cliEntryArgv(), '--data-dir', demo.dataDir, ...collectArgs(demo, descriptorFile)],
      { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await until(() => demo.fixture.started() === 1, 60_000).catch((error: Error) =>
      assert.fail(`${error.message}: ${stderr}`),
    );
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');

    const reopened = jsonOf<{ ran: boolean; outcome: string; upload: { answer: { status: string; outcome: string } } }>(
      ok(await cli(demo, collectArgs(demo, descriptorFile), fixtureEnv(demo.fixture))),
    );
    assert.equal(reopened.ran, true);
    assert.equal(reopened.outcome, 'uncertain');
    assert.equal(reopened.upload.answer.status, 'imported');
    assert.equal(reopened.upload.answer.outcome, 'uncertain');
    // The call in flight at the kill was never made again.
    assert.equal(demo.fixture.started(), 1);
    const answer = jsonOf<{ qualified: boolean; failures: { code: string }[] }>(
      await cli(demo, ['qualification', '--change', 'c1', '--json']),
    );
    assert.equal(answer.qualified, false);
    assert.ok(
      answer.failures.some((failure) => failure.code === 'review_not_passed'),
      JSON.stringify(answer.failures),
    );
  },
);
