/**
 * Execution records of command attempts are append-only (hardening issue item 8): recovering
 * an attempt already recorded `uncertain` appends a record naming the previous one, keeps
 * what the first record observed (truncation, observed byte counts, duration), and the step
 * and run follow the newest record, so status agrees with itself. The run, the journal and the
 * collector are real; the engine is the fake transport only to inject the fault the real
 * engine cannot produce on demand (a container removal it refuses, so cleanup stays unconfirmed).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';

import { createCommandStepRuntime } from '../../src/collector/command-step-runtime.js';
import { FakeDockerEngine } from '../../src/collector/fake-transport.js';
import { recoverCommandStep } from '../../src/collector/recover.js';
import { parseStrictJson } from '../../src/contracts/json/strict-json.js';
import { sha256Hex } from '../../src/crypto/sha256.js';
import { JOURNAL_MIGRATIONS, openStore, withStore } from '../../src/tasks/store.js';
import { showCommandAttempt } from '../../src/workflows/command-attempts.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { runWorkflow } from '../../src/workflows/runner.js';
import { readRunStatus } from '../../src/workflows/status.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_EXE } from '../support/collector.js';
import { openJournal } from '../support/journal.js';
import {
  commandAction,
  definition,
  makeCommandBinding,
  makeStore,
  RECIPE,
  RECIPE_PATH,
  SKILL_PATH,
  SKILL_TEXT,
} from '../support/workflows.js';

const IMAGE_ID = `sha256:${'a'.repeat(64)}`;
const OUTPUT_BOUND = 64;
const STDOUT = 'x'.repeat(1000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON records read loosely in assertions
type Loose = any;

function recordOf(bytes: Buffer | null): Loose {
  assert.ok(bytes !== null);
  return parseStrictJson(bytes, { maxBytes: 1 << 20 });
}

test('recover of an uncertain attempt appends records that name their predecessor; nothing is rewritten and the step follows the newest', async (t) => {
  const store = makeStore(join(tempDir(t), 'data'), {
    [SKILL_PATH]: SKILL_TEXT,
    'a.txt': 'alpha',
    [RECIPE_PATH]: JSON.stringify({ ...RECIPE, limits: { ...RECIPE.limits, output_bytes: OUTPUT_BOUND } }),
  });
  const binding = await makeCommandBinding(store);
  const bytes = Buffer.from(
    JSON.stringify(
      definition(store, [{ id: 'cmd', action: commandAction(store, binding) }], { resources: [RECIPE_PATH] }),
    ),
  );

  // The command writes past its output bound and the engine refuses to remove the container:
  // the output limit is observed, the cleanup is not confirmed, so the attempt is uncertain.
  const engine = new FakeDockerEngine({
    images: { [RECIPE.image]: IMAGE_ID },
    script: () => ({ exitCode: 0, stdout: STDOUT, runMs: 30 }),
  });
  engine.faults.refuseRemove = true;
  const runtime = await createCommandStepRuntime({
    docker: DOCKER_EXE,
    dockerSocket: '/nonexistent/fake.sock',
    transport: engine.transport,
    drainMs: 50,
  });
  t.after(() => runtime.close());
  const handle = openStore(store.dataDir, { mode: 'write' });
  t.after(() => handle.close());
  const run = await runWorkflow({ store: handle, runtime }, 'rec', bytes, 32);
  assert.equal(run.state, 'blocked');
  const attemptId = run.steps[0]?.execution?.attempt_id ?? '';
  const first = withStore(store.dataDir, 'read', (s) => showCommandAttempt(s, attemptId));
  assert.equal(first.state, 'uncertain');
  const firstRecord = recordOf(Buffer.from(JSON.stringify(first.record)));
  assert.equal(firstRecord.outcome, 'output_limit');
  assert.equal(firstRecord.stdout.truncated, true);
  assert.ok(firstRecord.stdout.observed_bytes > OUTPUT_BOUND);
  assert.ok(firstRecord.duration_ms > 0);
  const firstRaw = rawRecords(store.dataDir, attemptId);
  assert.equal(firstRaw.length, 1);

  const recover = async (): ReturnType<typeof recoverCommandStep> => {
    const handle = openStore(store.dataDir, { mode: 'write' });
    try {
      return await recoverCommandStep({
        store: handle,
        runId: 'rec',
        stepId: 'cmd',
        docker: DOCKER_EXE,
        dockerSocket: '/nonexistent/fake.sock',
        transport: engine.transport,
      });
    } finally {
      handle.close();
    }
  };

  // Still refused: a second record, still uncertain, naming the first.
  const still = await recover();
  assert.equal(still.state, 'uncertain');
  // Removal allowed: a third record, the observed output limit stands (failed).
  engine.faults.refuseRemove = false;
  const done = await recover();
  assert.equal(done.state, 'failed');
  assert.equal(done.outcome, 'output_limit');

  const raw = rawRecords(store.dataDir, attemptId);
  assert.equal(raw.length, 3);
  assert.deepEqual(raw[0], firstRaw[0], 'the first record is kept byte for byte');
  for (const [index, entry] of raw.entries()) {
    assert.equal(sha256Hex(entry.record_json), entry.record_digest, 'each record matches its digest');
    const previous = index === 0 ? null : (raw[index - 1]?.record_digest ?? null);
    assert.equal(entry.previous_record_digest, previous);
    assert.equal(recordOf(entry.record_json).previous_record_digest, index === 0 ? null : previous);
  }
  const newest = recordOf(raw[2]?.record_json ?? null);
  for (const stream of ['stdout', 'stderr'] as const)
    assert.deepEqual(newest[stream], firstRecord[stream], `${stream}: truncation and observed bytes carried over`);
  assert.equal(newest.duration_ms, firstRecord.duration_ms);
  assert.equal(newest.started_at, firstRecord.started_at);
  assert.equal(newest.exit_code, firstRecord.exit_code);
  assert.equal(newest.recovered, true);

  const view = withStore(store.dataDir, 'read', (s) => showCommandAttempt(s, attemptId));
  assert.deepEqual(
    view.records.map((r) => r.record_digest),
    raw.map((r) => r.record_digest),
  );
  assert.equal(view.record_digest, raw[2]?.record_digest);

  // Status agrees with itself: the step recorded the newest record, and the run follows the step.
  const status = withStore(store.dataDir, 'read', (s) => readRunStatus(s, 'rec'));
  const step = status.steps[0];
  assert.equal(step?.state, 'failed');
  assert.equal((step?.result as Loose).record_digest, step?.execution?.record_digest);
  assert.equal(step?.execution?.record_digest, raw[2]?.record_digest);
  assert.equal(status.state, 'failed');
  assert.match(String(status.state_reason), /required step "cmd" is failed/);
});

interface RawRecord {
  seq: number;
  record_json: Buffer;
  record_digest: string;
  previous_record_digest: string | null;
}

function rawRecords(dataDir: string, attemptId: string): RawRecord[] {
  const db = new Database(journalPaths(dataDir).db, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT seq, record_json, record_digest, previous_record_digest FROM command_attempt_records WHERE attempt_id = ? ORDER BY seq',
      )
      .all(attemptId) as RawRecord[];
  } finally {
    db.close();
  }
}

test('journal schema step 5 keeps the record of every attempt finished under step 4 as its first record', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'skill-workflows', 'state.sqlite');
  mkdirSync(join(dir, 'skill-workflows'), { recursive: true });
  const old = new Database(file);
  JOURNAL_MIGRATIONS.slice(0, 4).forEach((step) => step(old));
  old.pragma('user_version = 4');
  const record = Buffer.from('{"kind":"command/v1"}');
  old
    .prepare(
      `INSERT INTO command_attempts (attempt_id, run_id, step_id, generation, state, phase, outcome, request_digest, request_json, container_name, snapshot_path, record_json, record_digest, summary, created_at_ms, updated_at_ms)
     VALUES ('cmd-a', 'r', 's', '00000000000000000001', 'failed', 'finished', 'failed', ?, X'7B7D', 'agentscm-cmd-a', '/x', ?, ?, 'done', 1, 2)`,
    )
    .run('0'.repeat(64), record, sha256Hex(record));
  old
    .prepare(
      `INSERT INTO command_attempts (attempt_id, run_id, step_id, generation, state, phase, request_digest, request_json, container_name, snapshot_path, created_at_ms, updated_at_ms)
     VALUES ('cmd-b', 'r', 't', '00000000000000000001', 'running', 'reserved', ?, X'7B7D', 'agentscm-cmd-b', '/y', 1, 1)`,
    )
    .run('0'.repeat(64));
  old.close();

  openJournal(dir, 'write').close();
  const records = rawRecords(dir, 'cmd-a');
  assert.equal(records.length, 1);
  assert.deepEqual(records[0]?.record_json, record);
  assert.equal(records[0]?.record_digest, sha256Hex(record));
  assert.equal(records[0]?.previous_record_digest, null);
  assert.deepEqual(rawRecords(dir, 'cmd-b'), [], 'a running attempt has no record yet');
});
