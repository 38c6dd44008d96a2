/**
 * The bounds of the Stop feedback and of qualification's `next.commands` (docs/stop-hooks.md
 * "Block causes and feedback"), each at the bound and one past it: a failure's output tail shows at
 * most 40 lines and 4 KiB (stderr first, stdout with what is left); an answer from the service whose
 * tail is past the bound is malformed and blocks as malformed_response, nothing of it shown; next
 * carries at most 4 command lines of at most 64 words of at most 4096 characters.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { isAgentscmError } from '../../src/contracts/errors.js';
import { qualificationAnswerDecoder } from '../../src/contracts/task/qualification.js';
import { outputTailLines, STOP_TAIL_MAX_BYTES, STOP_TAIL_MAX_LINES } from '../../src/hooks/task-stop.js';
import { blockOf, claudePayload, makeStopWorld, runHook, startFakeService } from '../support/task-stop.js';

const lines = (n: number, width = 8, tag = 'l'): string =>
  Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(width - tag.length, '0')}`).join('\n');

function shownLines(stdout: string, stderr = ''): string[] {
  return outputTailLines({
    task_id: 'task-1',
    code: 'collector_not_passed',
    output_tail: { stdout, stderr, truncated: false },
  })
    .filter((line) => line.startsWith('    '))
    .map((line) => line.slice(4));
}

test('output tail in the feedback: 40 lines shown at the bound, the oldest dropped past it', () => {
  assert.equal(STOP_TAIL_MAX_LINES, 40);
  assert.deepEqual(shownLines(lines(40)), lines(40).split('\n'));
  const past = shownLines(lines(41));
  assert.equal(past.length, 40);
  assert.deepEqual(past, lines(41).split('\n').slice(1), 'the last 40 lines');
  // stderr is kept first; stdout gets what is left of the 40 lines.
  const both = outputTailLines({
    task_id: 'task-1',
    code: 'collector_not_passed',
    output_tail: { stdout: lines(20, 8, 'o'), stderr: lines(30, 8, 'e'), truncated: false },
  });
  assert.equal(both.filter((line) => line.startsWith('    e')).length, 30);
  assert.equal(both.filter((line) => line.startsWith('    o')).length, 10);
});

test('output tail in the feedback: 4096 bytes shown at the bound (newlines counted), the oldest line dropped past it', () => {
  assert.equal(STOP_TAIL_MAX_BYTES, 4096);
  const line = (c: string, n: number): string => c.repeat(n);
  const at = [line('a', 1023), line('b', 1023), line('c', 1023), line('d', 1023)].join('\n');
  assert.equal(Buffer.byteLength(`${at}\n`), 4096);
  assert.equal(shownLines(at).length, 4);
  const past = [line('a', 1024), line('b', 1023), line('c', 1023), line('d', 1023)].join('\n');
  assert.deepEqual(
    shownLines(past).map((shown) => shown[0]),
    ['b', 'c', 'd'],
  );
});

test('a service answer whose output tail is at the bound is shown; one past it blocks as malformed_response', async (t) => {
  const world = await makeStopWorld(t);
  const revision = world.ev.store.revision;
  const answer = (stdout: string): string =>
    JSON.stringify({
      capability: 'agentscm.agent-workflow-tasks/v1',
      schema_version: 1,
      result: {
        qualified: false,
        subject_current: true,
        receipt_digest: null,
        revision,
        tasks: [],
        failures: [
          { task_id: 'task-1', code: 'collector_not_passed', output_tail: { stdout, stderr: '', truncated: true } },
        ],
        next: { operation: 'none' },
      },
    });
  const atBound = await startFakeService(t, { body: answer(lines(40)) });
  const shown = blockOf(await runHook(world, { input: { endpoint: atBound }, payload: claudePayload('s-at') }));
  assert.equal([...shown.reason.matchAll(/^ {4}l\d+$/gm)].length, 40, shown.reason);
  assert.deepEqual(shown.json.failures, [{ task_id: 'task-1', code: 'collector_not_passed' }]);
  const pastBound = await startFakeService(t, { body: answer(lines(41)) });
  const refused = blockOf(await runHook(world, { input: { endpoint: pastBound }, payload: claudePayload('s-past') }));
  assert.deepEqual(refused.json.failures, [{ task_id: 'stop_hook', code: 'malformed_response' }]);
  assert.doesNotMatch(refused.reason, /^ {4}l\d+$/m, 'nothing of a refused answer is shown');
});

test('next.commands: 4 lines, 64 words, 4096 characters a word at the bound; one more of each refused', () => {
  const base = {
    qualified: false,
    subject_current: true,
    receipt_digest: null,
    revision: 'a'.repeat(64),
    tasks: [],
    failures: [],
  };
  const withCommands = (commands: string[][]) => ({
    ...base,
    next: { operation: 'collector_claim', task_id: 'task-1', collector_profile_id: 'b'.repeat(64), commands },
  });
  const argv = (words: number, chars = 8): string[] => [
    'agentscm',
    ...Array.from({ length: words - 1 }, () => 'w'.repeat(chars)),
  ];
  const accepts = (commands: string[][]): void => {
    assert.equal(qualificationAnswerDecoder.validate(withCommands(commands)).next.operation, 'collector_claim');
  };
  const refuses = (commands: string[][]): void => {
    assert.throws(
      () => qualificationAnswerDecoder.validate(withCommands(commands)),
      (error: unknown) => isAgentscmError(error) && /next\/commands|next\.commands/.test(error.message),
    );
  };
  accepts([argv(2), argv(2), argv(2), argv(2)]);
  refuses([argv(2), argv(2), argv(2), argv(2), argv(2)]);
  accepts([argv(64)]);
  refuses([argv(65)]);
  accepts([argv(2, 4096)]);
  refuses([argv(2, 4097)]);
  refuses([['git', 'status']]);
});
