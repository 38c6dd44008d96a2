/**
 * Stop feedback never carries a control or bidirectional formatting character raw (issue #25
 * item 6; docs/stop-hooks.md "Output"): a real server-executed Stop whose command step lists a
 * file named `src/evil` U+202E `sj.exe` and fails blocks with the output tail showing the name
 * escaped (`\u202e`) and marked `[!]`; the JSON line stays parseable and the Codex answer stays
 * valid under Codex's output schema. Plus the renderer itself for both clients.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Ajv } from 'ajv';

import { hasUnsafeText, UNSAFE_TEXT_MARKER } from '../../src/contracts/display-text.js';
import { renderStopOutput, stopReasonText } from '../../src/hooks/stop/output.js';
import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { buildScenario } from '../helpers/scenario.js';
import { DOCKER_SOCKET, requireEngine } from '../support/collector.js';

const RLO = '\u202e';
const EVIL = `evil${RLO}sj.exe`;
const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : '/bin/true';
const validCodexOutput = new Ajv({ strict: false, allowUnionTypes: true }).compile(
  JSON.parse(
    readFileSync(
      join(REPO_ROOT, 'docs', 'schemas', 'external', 'codex-hooks', 'stop.command.output.schema.json'),
      'utf8',
    ),
  ) as object,
);

/** A raw unsafe character in `text` (line breaks between lines aside). */
function rawUnsafe(text: string): boolean {
  return text.split('\n').some((line) => hasUnsafeText(line));
}

test('the renderer: every human line escaped and marked, the JSON line intact, both clients', () => {
  const feedback = {
    lines: [`step "check" (command, required): failed`, `  stdout: src/${EVIL}`, 'plain line'],
    failures: [{ task_id: 'check', code: 'command_failed' }],
    next_action: 'Fix it.',
    next: { operation: 'checkpoint' as const },
  };
  const text = stopReasonText(feedback);
  assert.ok(!rawUnsafe(text), text);
  assert.deepEqual(text.split('\n').slice(0, 3), [
    feedback.lines[0],
    `${UNSAFE_TEXT_MARKER}  stdout: src/evil\\u202esj.exe`,
    'plain line',
  ]);
  assert.deepEqual(JSON.parse(text.split('\n').at(-1) ?? ''), {
    failures: feedback.failures,
    next_action: 'Fix it.',
    next: { operation: 'checkpoint' },
  });
  for (const client of ['claude-code', 'codex'] as const) {
    const out = renderStopOutput(client, { decision: 'block', feedback });
    assert.ok(!rawUnsafe(out.stdout.trimEnd()), client);
    assert.equal((JSON.parse(out.stdout) as { reason: string }).reason, text);
    if (client === 'codex') assert.ok(validCodexOutput(JSON.parse(out.stdout)));
  }
});

test(
  'a server-executed Stop whose failing command lists src/evil\\u202esj.exe: the feedback shows ' +
    'the name escaped and marked, never raw',
  async (t) => {
    await requireEngine();
    const { dataDir, ws } = await buildScenario(t, {
      argv: ['/bin/sh', '-c', 'for f in /src/src/*; do echo "$f"; done; exit 3'],
      enrollStep: null,
    });

    // The agent adds the file; the Stop hook checkpoints it and runs the check, which lists it.
    writeFileSync(join(ws, 'src', EVIL), 'MZ');
    const payload = JSON.stringify({
      cwd: '/repo',
      hook_event_name: 'Stop',
      last_assistant_message: 'done',
      model: 'gpt-5',
      permission_mode: 'default',
      session_id: 's-unsafe',
      stop_hook_active: false,
      transcript_path: null,
      turn_id: 't1',
    });
    const blocked = await runCli(
      [
        '--data-dir',
        dataDir,
        'skill-workflow',
        'stop',
        'c1',
        '--workspace',
        ws,
        '--client',
        'codex',
        '--docker',
        DOCKER,
        '--docker-socket',
        DOCKER_SOCKET,
      ],
      { input: payload },
    );
    assert.equal(blocked.code, 0, blocked.stderr);
    assert.ok(!rawUnsafe(blocked.stdout.trimEnd()), 'no raw character on stdout');
    const answer = JSON.parse(blocked.stdout) as { decision: string; reason: string };
    assert.ok(validCodexOutput(answer), JSON.stringify(validCodexOutput.errors));
    assert.equal(answer.decision, 'block');
    assert.ok(!rawUnsafe(answer.reason), answer.reason);
    const lines = answer.reason.split('\n');
    assert.ok(
      lines.some((line) => line.startsWith(UNSAFE_TEXT_MARKER) && line.includes('evil\\u202esj.exe')),
      `the output tail shows the name escaped and marked:\n${answer.reason}`,
    );
    assert.deepEqual((JSON.parse(lines.at(-1) ?? '') as { failures: unknown }).failures, [
      { task_id: 'check', code: 'command_failed' },
    ]);
  },
);
