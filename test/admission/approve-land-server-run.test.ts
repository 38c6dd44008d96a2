/**
 * The server-executed receipt path keeps its own route to landing (docs/admission.md "The
 * server-executed path"): a workspace whose target requires a command step, the server-executed
 * Stop hook (`skill-workflow stop`) checkpoints it and runs the requirement in the live container
 * engine, and the completed run is approved and landed through real bin/dev.js processes. A
 * retained command record that no longer has its digest is no receipt.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';

import { nativePaths } from '../../src/native/store.js';
import { SERVER_RUN_RECEIPT_PAUSE_POINT } from '../../src/tasks/admission/admission.js';
import { journalPaths } from '../../src/workflows/journal.js';
import { cliEntryArgv, jsonOf, REPO_ROOT, runCli, TEST_XDG_DATA_HOME, type CliResult } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';

const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';

before(async () => {
  await requireEngine();
});

interface Demo {
  readonly dataDir: string;
  readonly ws: string;
  readonly base: string;
}

/** The scenario world: Change c1 version 1, its context, a requirement with one command step on main. */
async function makeDemo(t: TestContext): Promise<Demo> {
  const s = await buildScenario(t, {
    argv: ['/bin/sh', '-c', 'grep -qx ok /src/status.txt'],
    files: { 'status.txt': 'ok\n' },
    enrollStep: null,
  });
  return { dataDir: s.dataDir, ws: s.ws, base: s.base };
}

function cli(demo: Demo, args: readonly string[]): Promise<CliResult> {
  return runCli(['--data-dir', demo.dataDir, ...args]);
}

function mainOf(demo: Demo): Promise<string> {
  return cli(demo, ['target', 'list', '--json']).then(
    (r) =>
      (
        jsonOf<{ targets: { name: string; revision: string }[] }>(r).targets.find((x) => x.name === 'main') as {
          revision: string;
        }
      ).revision,
  );
}

const STOP_PAYLOAD = JSON.stringify({
  session_id: 'sess-1',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/repo',
  hook_event_name: 'Stop',
});

function stopArgs(demo: Demo): string[] {
  return [
    '--data-dir',
    demo.dataDir,
    'skill-workflow',
    'stop',
    'c1',
    '--workspace',
    demo.ws,
    '--docker',
    DOCKER,
    '--docker-socket',
    DOCKER_SOCKET,
  ];
}

interface ReceiptRow {
  receipt_digest: string;
  change_id: string;
  change_version: string;
  revision: string;
  context_digest: string;
  target: string;
  run_id: string;
  state: string;
  receipt: Buffer;
}

/** The server-run receipts the authority holds. */
function receiptRows(demo: Demo): ReceiptRow[] {
  const db = new Database(nativePaths(demo.dataDir).db, { readonly: true });
  try {
    return db.prepare('SELECT * FROM server_run_receipts ORDER BY recorded_at_ms').all() as ReceiptRow[];
  } finally {
    db.close();
  }
}

/** Edit the workspace and let the server-executed Stop hook checkpoint and run it; it must pass. */
async function stopPasses(demo: Demo): Promise<void> {
  writeFileSync(join(demo.ws, 'notes.txt'), 'new work\n');
  const stop = await runCli(stopArgs(demo), { input: STOP_PAYLOAD });
  assert.equal(stop.code, 0, stop.stderr);
  assert.equal(stop.stdout, '', 'the Stop hook passed');
}

test(
  'a completed server-executed run is approved as a server_run receipt and lands: the target moves ' +
    'to the checkpointed revision',
  async (t) => {
    const demo = await makeDemo(t);
    await stopPasses(demo);
    const change = jsonOf<{ current_version: number; versions: { revision: string }[] }>(
      await cli(demo, ['change', 'show', 'c1', '--json']),
    );
    assert.equal(change.current_version, 2);
    const revision = change.versions.at(-1)?.revision;

    const approved = await cli(demo, ['approve', '--change', 'c1', '--json']);
    assert.equal(approved.code, 0, approved.stderr);
    const approval = jsonOf<{ receipt_kind: string; receipt_digest: string; run_id: string; revision: string }>(
      approved,
    );
    assert.equal(approval.receipt_kind, 'server_run');
    assert.match(approval.run_id, /^stop-[0-9a-f]{40}$/);
    assert.equal(approval.revision, revision);

    const landed = await cli(demo, ['land', '--change', 'c1', '--target', 'main', '--json']);
    assert.equal(landed.code, 0, landed.stderr);
    const landing = jsonOf<{
      previous_revision: string;
      revision: string;
      receipt_kind: string;
      receipt_digest: string;
    }>(landed);
    assert.deepEqual(landing.previous_revision, demo.base);
    assert.equal(landing.revision, revision);
    assert.equal(landing.receipt_kind, 'server_run');
    assert.equal(landing.receipt_digest, approval.receipt_digest);
    assert.equal(await mainOf(demo), revision);
  },
);

test(
  'a server-executed run whose retained command record no longer has its digest is no receipt: ' +
    'approve is refused and nothing is recorded',
  async (t) => {
    const demo = await makeDemo(t);
    await stopPasses(demo);
    const db = new Database(journalPaths(demo.dataDir).db);
    try {
      db.prepare("UPDATE command_attempts SET record_digest = ? WHERE state = 'succeeded'").run('0'.repeat(64));
    } finally {
      db.close();
    }
    const approved = await cli(demo, ['approve', '--change', 'c1', '--json']);
    assert.equal(approved.code, 1, approved.stderr);
    assert.equal(jsonOf<{ error: { code: string } }>(approved).error.code, 'ADMISSION_NOT_QUALIFIED');
    assert.equal(await mainOf(demo), demo.base);
  },
);

test(
  'the Stop loop copies the exact-subject receipt into the authority; qualification and approve ' +
    'name it (issue #25 items 11 and 12)',
  async (t) => {
    const demo = await makeDemo(t);
    await stopPasses(demo);
    const change = jsonOf<{ current_version: number; versions: { revision: string }[] }>(
      await cli(demo, ['change', 'show', 'c1', '--json']),
    );
    const rows = receiptRows(demo);
    assert.equal(rows.length, 1, 'one receipt row for the completed run');
    const row = rows[0] as ReceiptRow;
    assert.equal(row.change_id, 'c1');
    assert.equal(Number(row.change_version), change.current_version);
    assert.equal(row.revision, change.versions.at(-1)?.revision);
    assert.equal(row.target, 'main');
    assert.equal(row.state, 'completed');
    assert.match(row.run_id, /^stop-[0-9a-f]{40}$/);
    const document = JSON.parse(row.receipt.toString('utf8')) as {
      subject: { change_id: string; revision: string; context_digest: string };
      run_id: string;
      steps: { step_id: string; record_digest: string }[];
    };
    assert.deepEqual(
      [document.subject.change_id, document.subject.revision, document.subject.context_digest, document.run_id],
      ['c1', row.revision, row.context_digest, row.run_id],
    );
    assert.equal(document.steps[0]?.step_id, 'check');
    assert.match(document.steps[0]?.record_digest ?? '', /^[0-9a-f]{64}$/);

    // Qualification answers from admission's decision: the completed run qualifies the subject.
    const qualification = await cli(demo, ['qualification', '--change', 'c1', '--json']);
    assert.equal(qualification.code, 0, qualification.stdout + qualification.stderr);
    const answer = jsonOf<{
      qualified: boolean;
      receipt_digest: string;
      failures: unknown[];
      tasks: { state: string }[];
    }>(qualification);
    assert.equal(answer.qualified, true);
    assert.equal(answer.receipt_digest, row.receipt_digest);
    assert.deepEqual(answer.failures, []);
    assert.deepEqual(
      answer.tasks.map((task) => task.state),
      ['succeeded'],
    );

    const approved = await cli(demo, ['approve', '--change', 'c1', '--json']);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(
      jsonOf<{ receipt_digest: string }>(approved).receipt_digest,
      row.receipt_digest,
      'approve binds the receipt the loop recorded',
    );

    // Stopping again without an edit reopens the same run and records nothing new.
    const again = await runCli(stopArgs(demo), { input: STOP_PAYLOAD });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '');
    assert.equal(receiptRows(demo).length, 1);
  },
);

test('a Stop loop killed after writing the receipt, before its commit, leaves no receipt; the next stop records it', async (t) => {
  const demo = await makeDemo(t);
  writeFileSync(join(demo.ws, 'notes.txt'), 'new work\n');
  const child = spawn(process.execPath, [...cliEntryArgv(), ...stopArgs(demo)], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      XDG_DATA_HOME: TEST_XDG_DATA_HOME,
      AGENTSCM_TEST_PAUSE_AT: SERVER_RUN_RECEIPT_PAUSE_POINT,
    },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  child.stdin.end(STOP_PAYLOAD);
  const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`agentscm-test-paused:${SERVER_RUN_RECEIPT_PAUSE_POINT}`)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, sig) => resolve(sig));
  });
  assert.equal(signal, 'SIGKILL', 'the stop was killed at its pause point, holding the receipt transaction');
  assert.deepEqual(receiptRows(demo), [], 'the uncommitted receipt is not there');
  const approved = await cli(demo, ['approve', '--change', 'c1', '--json']);
  const again = await runCli(stopArgs(demo), { input: STOP_PAYLOAD });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, '', 'the same run is reopened and passes');
  const rows = receiptRows(demo);
  assert.equal(rows.length, 1);
  // The run itself was retained before the kill, so approve could already admit it; its receipt is the one now
  // recorded.
  assert.equal(approved.code, 0, approved.stderr);
  assert.equal(jsonOf<{ receipt_digest: string }>(approved).receipt_digest, rows[0]?.receipt_digest);
});
