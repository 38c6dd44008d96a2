/**
 * The managed instruction block: init-repo writes it into AGENTS.md, the Cursor rule and the
 * Copilot instructions before the first revision (so the workspace is clean afterwards);
 * `instructions write` replaces it in place and leaves every other byte (CRLF, text before and
 * after) as it was; broken markers are refused before any file is written.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  INSTRUCTION_BLOCK,
  INSTRUCTION_BLOCK_BEGIN,
  INSTRUCTION_BLOCK_END,
  withInstructionBlock,
} from '../../src/workspace/instruction-block.js';
import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

test('the block: short, between its markers, with the discover-then-fetch flow and what a Stop block means', () => {
  assert.ok(INSTRUCTION_BLOCK.startsWith(`${INSTRUCTION_BLOCK_BEGIN}\n`));
  assert.ok(INSTRUCTION_BLOCK.endsWith(`${INSTRUCTION_BLOCK_END}\n`));
  assert.ok(INSTRUCTION_BLOCK.split('\n').length <= 30, 'a short block');
  for (const word of [
    'Workflow tasks',
    '`capabilities`',
    '`next`',
    '`instructions`',
    '`reference`',
    '`claim`',
    'agent-task collect',
    '`qualification`',
    'Stop hook',
    'next_action',
    'checkpoint',
    'schema_mismatch',
    '`collector_claim`',
    'agentscm agent-task claim --profile',
    'agentscm agent-task collector add',
    'state directory',
    'agentscm qualification --change ID --token-file TOKEN',
    '$ agentscm',
  ]) {
    assert.ok(INSTRUCTION_BLOCK.includes(word), word);
  }
});

test('the block tells the one path: no context create step, no runner, the Stop lines are the qualification lines', () => {
  assert.ok(!INSTRUCTION_BLOCK.includes('context create'), 'checkpoint creates the review context itself');
  assert.ok(!INSTRUCTION_BLOCK.includes('--runner'));
  assert.match(INSTRUCTION_BLOCK, /Stop hook may block you: its reason carries the same `\$ agentscm …` lines/);
  assert.match(INSTRUCTION_BLOCK, /a plain claim of it is refused/);
  for (const line of INSTRUCTION_BLOCK.split('\n')) assert.ok(line.length <= 100, line);
});

test('replace in place keeps every other byte; append keeps the file; a new Cursor rule gets front matter', () => {
  const before = Buffer.from('# Project\r\n\r\nOur rules.\r\n\r\n');
  const after = Buffer.from('\r\n## More\r\ntrailing, no newline');
  const stale = Buffer.from(`${INSTRUCTION_BLOCK_BEGIN}\r\nold text\r\n${INSTRUCTION_BLOCK_END}\r\n`);
  const replaced = withInstructionBlock('AGENTS.md', Buffer.concat([before, stale, after]));
  assert.equal(replaced.action, 'replaced');
  assert.deepEqual(replaced.bytes, Buffer.concat([before, Buffer.from(INSTRUCTION_BLOCK), after]));
  assert.equal(withInstructionBlock('AGENTS.md', replaced.bytes).action, 'unchanged');
  const latin1 = Buffer.from([0x23, 0x20, 0xe9, 0x0a]);
  const appended = withInstructionBlock('AGENTS.md', latin1);
  assert.equal(appended.action, 'appended');
  assert.deepEqual(appended.bytes.subarray(0, latin1.length), latin1, 'bytes that are not UTF-8 survive');
  assert.deepEqual(
    withInstructionBlock('AGENTS.md', Buffer.from('no newline')).bytes.toString(),
    `no newline\n\n${INSTRUCTION_BLOCK}`,
  );
  const cursor = withInstructionBlock('.cursor/rules/agentscm.mdc', null);
  assert.equal(cursor.action, 'created');
  assert.match(cursor.bytes.toString(), /^---\ndescription: [^\n]+\nalwaysApply: true\n---\n\n<!-- agentscm:begin/);
  for (const broken of [
    `${INSTRUCTION_BLOCK_BEGIN}\nno end\n`,
    `${INSTRUCTION_BLOCK_END}\n${INSTRUCTION_BLOCK_BEGIN}\n`,
    `${INSTRUCTION_BLOCK}${INSTRUCTION_BLOCK}`,
  ]) {
    assert.throws(
      () => withInstructionBlock('AGENTS.md', Buffer.from(broken)),
      (e: Error & { code?: string }) => e.code === 'INSTRUCTION_BLOCK_INVALID',
    );
  }
});

test('init-repo writes the block into the first revision; instructions write replaces it in place; broken markers change nothing', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  mkdirSync(join(ws, '.github'), { recursive: true });
  const userAgents = '# Agents\n\nAlways run the tests.\n';
  writeFileSync(join(ws, 'AGENTS.md'), userAgents);
  writeFileSync(join(ws, 'main.ts'), 'x\n');
  const init = await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  const revision = jsonOf<{ revision: string }>(init).revision;
  assert.equal(readFileSync(join(ws, 'AGENTS.md'), 'utf8'), `${userAgents}\n${INSTRUCTION_BLOCK}`);
  assert.equal(readFileSync(join(ws, '.github', 'copilot-instructions.md'), 'utf8'), INSTRUCTION_BLOCK);
  const shown = await runCli(['--data-dir', data, 'revision', 'show', revision, '--json']);
  const paths = jsonOf<{ entries: { path: string }[] }>(shown).entries.map((e) => e.path);
  assert.deepEqual(
    paths.filter((p) => p !== 'main.ts'),
    ['.cursor/rules/agentscm.mdc', '.github/copilot-instructions.md', 'AGENTS.md'],
  );
  const status = await runCli(['--data-dir', data, 'status', '--workspace', ws, '--json']);
  assert.equal(jsonOf<{ clean: boolean }>(status).clean, true, 'the block is part of the first revision');

  // The user edits around the block and damages it; instructions write restores it in place.
  const edited =
    readFileSync(join(ws, 'AGENTS.md'), 'utf8')
      .replace('Run the recipe', 'x')
      .replace('## Workflow tasks (agentscm)', '## hacked') + '\nAfter the block.\n';
  writeFileSync(join(ws, 'AGENTS.md'), edited);
  const written = await runCli(['--data-dir', data, 'instructions', 'write', '--workspace', ws, '--json']);
  assert.equal(written.code, 0, written.stderr);
  assert.deepEqual(jsonOf<{ files: { path: string; action: string }[] }>(written).files, [
    { path: 'AGENTS.md', action: 'replaced' },
    { path: '.cursor/rules/agentscm.mdc', action: 'unchanged' },
    { path: '.github/copilot-instructions.md', action: 'unchanged' },
  ]);
  assert.equal(readFileSync(join(ws, 'AGENTS.md'), 'utf8'), `${userAgents}\n${INSTRUCTION_BLOCK}\nAfter the block.\n`);

  const cursorBefore = readFileSync(join(ws, '.cursor', 'rules', 'agentscm.mdc'));
  writeFileSync(join(ws, '.github', 'copilot-instructions.md'), `${INSTRUCTION_BLOCK_BEGIN}\nhalf a block\n`);
  writeFileSync(join(ws, 'AGENTS.md'), '# fresh\n');
  const refused = await runCli(['--data-dir', data, 'instructions', 'write', '--workspace', ws]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^error\[INSTRUCTION_BLOCK_INVALID\]: \.github\/copilot-instructions\.md/);
  assert.equal(readFileSync(join(ws, 'AGENTS.md'), 'utf8'), '# fresh\n', 'no file is written when one is refused');
  assert.deepEqual(readFileSync(join(ws, '.cursor', 'rules', 'agentscm.mdc')), cursorBefore);
  const outside = await runCli(['instructions', 'write', '--workspace', root]);
  assert.equal(outside.code, 4);
  assert.match(outside.stderr, /^error\[WORKSPACE_NOT_FOUND\]/);
});

test('init-repo --no-instructions leaves the tree as it is', async (t) => {
  const root = tempDir(t);
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'main.ts'), 'x\n');
  const init = await runCli([
    '--data-dir',
    join(root, 'data'),
    'init-repo',
    ws,
    '--name',
    'plain',
    '--no-instructions',
    '--json',
  ]);
  assert.equal(init.code, 0, init.stderr);
  assert.equal(jsonOf<{ files: number }>(init).files, 1);
  assert.throws(() => readFileSync(join(ws, 'AGENTS.md')), /ENOENT/);
});
