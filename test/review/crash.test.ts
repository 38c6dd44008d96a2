import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { createClaudeCodeTransport } from '../../src/collector/review/claude-code-transport.js';
import { runReview } from '../../src/collector/review/controller.js';
import { getJournalCall, openReviewJournal } from '../../src/collector/review/journal.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { answerJson, installFixture, policyBytes, reviewAction, reviewStore } from '../support/review.js';

const CHILD = join(REPO_ROOT, 'test', 'review', 'fixtures', 'review-child.ts');

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('SIGKILL of the controller between a reservation and its answer: reopening never calls again and the call is uncertain', async (t) => {
  let startedFile = '';
  // Registered before the temporary directories, so it runs while the fixture's pid file exists.
  t.after(() => {
    // The slow fixture call outlives its killed parent: end it by its own pid.
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
  const store = reviewStore(t);
  const fixture = installFixture(t, [
    { mode: 'answer', response: answerJson() },
    { mode: 'slow', ms: 60_000, response: answerJson() },
    { mode: 'answer', response: answerJson() },
  ]);
  startedFile = `${fixture.log}.started`;
  const stateDir = tempDir(t);
  const policyPath = join(tempDir(t), 'review-policy.json');
  writeFileSync(policyPath, policyBytes());
  const action = reviewAction();
  const input = {
    dataDir: store.dataDir,
    repository: store.repository,
    revision: store.revision,
    stateDir,
    executable: fixture.executable,
    workDir: fixture.workDir,
    env: fixture.env,
    model: 'claude-sonnet-4-5',
    action,
    policyPath,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(input)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await until(() => fixture.started() === 1, 30_000).catch((error: Error) =>
    assert.fail(`${error.message}: ${stderr}`),
  );
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  assert.deepEqual(
    fixture.calls().map((c) => c.call_index),
    [0, 1],
  );

  const transport = createClaudeCodeTransport({
    executable: fixture.executable,
    workDir: fixture.workDir,
    env: fixture.env,
    model: 'claude-sonnet-4-5',
    providerScope: 'team-a',
  });
  const journal = openReviewJournal(stateDir);
  t.after(() => journal.close());
  const record = await runReview(
    { repository: store.repository, revision: store.revision, action, policyBytes: policyBytes() },
    { sources: store.sources, transport, journal },
  );
  // The reservation of call 1 was durable before the call; it holds no observation.
  const retained = getJournalCall(journal, record.review_id, 1);
  assert.notEqual(retained, null);
  assert.equal(retained?.observation, null);
  assert.deepEqual(
    record.calls.map((c) => c.observation.status),
    ['answered', 'uncertain'],
  );
  assert.equal(record.outcome, 'uncertain');
  assert.deepEqual(record.reasons, ['coverage_incomplete', 'call_uncertain']);
  // No model call was repeated or made after the uncertain one.
  assert.deepEqual(
    fixture.calls().map((c) => c.call_index),
    [0, 1],
  );
  const again = await runReview(
    { repository: store.repository, revision: store.revision, action, policyBytes: policyBytes() },
    { sources: store.sources, transport, journal },
  );
  assert.deepEqual(again, record);
  assert.equal(fixture.calls().length, 2);
});
