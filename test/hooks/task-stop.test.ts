/**
 * The agent-owned Stop hook (docs/stop-hooks.md "Agent-owned mode") against a real hub on
 * loopback: it passes only for a qualified, current subject whose exact bytes are the clean
 * workspace's, and blocks — with typed failures, the fixed next_action of next.operation and next
 * — for an unqualified or superseded subject, uncheckpointed edits, a different base, a stopped
 * hub and a token revoked while the call is in flight.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { TASK_STOP_NEXT_ACTIONS } from '../../src/hooks/task-stop.js';
import { revokeGrantInStore } from '../../src/native/grants.js';
import { createReviewContext } from '../../src/native/review-contexts.js';
import { openAuthority } from '../../src/native/store.js';
import { withStore } from '../../src/tasks/store.js';
import { checkpointWorkspace } from '../../src/workspace/checkpoint.js';
import {
  blockOf,
  claudePayload,
  makeStopWorld,
  qualifyWorld,
  runHook,
  startInFlightProxy,
} from '../support/task-stop.js';
import { bumpPolicy, CHANGE_ID, RECIPE_PATH } from '../support/tasks.js';

test('a qualified, current subject at the clean workspace base passes: Claude Code prints nothing, Codex prints {}', async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  const claude = await runHook(world);
  assert.deepEqual(claude, { stdout: '', stderr: '', exitCode: 0 });
  const codex = await runHook(world, { client: 'codex' });
  assert.deepEqual(codex, { stdout: '{}\n', stderr: '', exitCode: 0 });
});

test("an unqualified subject blocks with the answer's typed failures, the collector_claim sentence and next with its task_id", async (t) => {
  const world = await makeStopWorld(t);
  const result = await runHook(world);
  assert.equal(result.exitCode, 0);
  const block = blockOf(result);
  assert.equal(block.json.next.operation, 'collector_claim');
  assert.match(block.json.next.task_id ?? '', /^[A-Za-z0-9._-]{1,128}$/);
  assert.deepEqual(block.json.failures, [{ task_id: block.json.next.task_id, code: 'task_pending' }]);
  assert.equal(block.json.next_action, TASK_STOP_NEXT_ACTIONS.collector_claim);
  assert.match(block.reason, /is not qualified yet/);
});

test('uncheckpointed edits block with workspace_not_clean and next checkpoint, even for a qualified subject', async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  writeFileSync(join(world.workspace, 'a.txt'), 'edited');
  const block = blockOf(await runHook(world));
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'workspace_not_clean' }],
    next_action: TASK_STOP_NEXT_ACTIONS.checkpoint,
    next: { operation: 'checkpoint' },
  });
});

test("a workspace whose base is not the Change's revision blocks with base_mismatch and next checkpoint", async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  writeFileSync(join(world.workspace, 'b.txt'), 'other work');
  withStore(world.dataDir, 'write', (store) =>
    checkpointWorkspace(store, { change: 'other-change', workspace: world.workspace }),
  );
  const block = blockOf(await runHook(world));
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'base_mismatch' }],
    next_action: TASK_STOP_NEXT_ACTIONS.checkpoint,
    next: { operation: 'checkpoint' },
  });
});

test('a subject superseded while the call is in flight (policy epoch bump, new context) blocks with subject_changed and next checkpoint', async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  const proxy = await startInFlightProxy(t, world.url, () => {
    bumpPolicy(world.ev.store);
    const auth = openAuthority(world.dataDir, { mode: 'write' });
    try {
      createReviewContext(auth, {
        repository: world.ev.store.repository,
        changeId: CHANGE_ID,
        runnerPath: RECIPE_PATH,
      });
    } finally {
      auth.close();
    }
  });
  const block = blockOf(await runHook(world, { input: { endpoint: proxy.url } }));
  assert.equal(proxy.requests(), 1);
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'subject_changed' }],
    next_action: TASK_STOP_NEXT_ACTIONS.checkpoint,
    next: { operation: 'checkpoint' },
  });
});

test('the workspace edited while the call is in flight blocks with workspace_changed and next checkpoint', async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  const proxy = await startInFlightProxy(t, world.url, () => {
    writeFileSync(join(world.workspace, 'a.txt'), 'edited during the call');
  });
  const block = blockOf(await runHook(world, { input: { endpoint: proxy.url } }));
  assert.equal(proxy.requests(), 1);
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'workspace_changed' }],
    next_action: TASK_STOP_NEXT_ACTIONS.checkpoint,
    next: { operation: 'checkpoint' },
  });
});

test('a stopped hub blocks with service_request_failed and next none; the text names no path and no server text', async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  await world.close();
  const result = await runHook(world);
  const block = blockOf(result);
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'service_request_failed' }],
    next_action: TASK_STOP_NEXT_ACTIONS.none,
    next: { operation: 'none' },
  });
  assert.ok(!block.reason.includes(world.dir), block.reason);
  assert.ok(!block.reason.includes('127.0.0.1'), block.reason);
});

test('a token revoked while the call is in flight: the hub answers 401 and the hook blocks with token_rejected', async (t) => {
  const world = await makeStopWorld(t);
  qualifyWorld(world);
  const proxy = await startInFlightProxy(t, world.url, () => {
    withStore(world.dataDir, 'write', (s) => revokeGrantInStore(s, world.ev.grantId, Date.now()));
  });
  const block = blockOf(await runHook(world, { input: { endpoint: proxy.url } }));
  assert.deepEqual(block.json, {
    failures: [{ task_id: 'stop_hook', code: 'token_rejected' }],
    next_action: TASK_STOP_NEXT_ACTIONS.none,
    next: { operation: 'none' },
  });
  assert.ok(!block.reason.includes('GRANT_TOKEN_REJECTED'), 'no server text');
});

test('a Change not checkpointed yet blocks with next checkpoint: workspace_not_clean with edits, subject_missing without; a version without its review context is subject_missing', async (t) => {
  const world = await makeStopWorld(t);
  const expected = (code: string): unknown => ({
    failures: [{ task_id: 'stop_hook', code }],
    next_action: TASK_STOP_NEXT_ACTIONS.checkpoint,
    next: { operation: 'checkpoint' },
  });
  assert.deepEqual(
    blockOf(await runHook(world, { input: { change: 'fresh-change' } })).json,
    expected('subject_missing'),
  );
  writeFileSync(join(world.workspace, 'a.txt'), 'a fresh edit');
  assert.deepEqual(
    blockOf(await runHook(world, { input: { change: 'fresh-change' } })).json,
    expected('workspace_not_clean'),
  );
  withStore(world.dataDir, 'write', (store) =>
    checkpointWorkspace(store, { change: 'fresh-change', workspace: world.workspace }),
  );
  assert.deepEqual(
    blockOf(await runHook(world, { input: { change: 'fresh-change' } })).json,
    expected('subject_missing'),
  );
  assert.equal(world.log.length, 0, 'the hub was not asked for a subject that does not exist');
});

test("a hub profile pinned to target release: the hook reads release's requirement with --target release and passes once qualified (issue #25 item 14)", async (t) => {
  const world = await makeStopWorld(t, { target: 'release' });
  assert.equal(world.hub.profile.target, 'release');
  const pending = blockOf(await runHook(world, { input: { target: 'release' } }));
  assert.equal(
    pending.json.next.operation,
    'collector_claim',
    "the hub was asked about the subject of release's requirement",
  );
  assert.deepEqual(pending.json.failures, [{ task_id: pending.json.next.task_id, code: 'task_pending' }]);
  qualifyWorld(world);
  assert.deepEqual(await runHook(world, { input: { target: 'release' }, payload: claudePayload('s-release') }), {
    stdout: '',
    stderr: '',
    exitCode: 0,
  });
  // The default target is main, which has no requirement here: the local subject cannot be read.
  const main = blockOf(await runHook(world, { payload: claudePayload('s-main') }));
  assert.deepEqual(main.json.failures, [{ task_id: 'stop_hook', code: 'local_store_unavailable' }]);
});
