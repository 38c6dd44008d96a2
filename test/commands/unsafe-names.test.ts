/**
 * Names with control or bidirectional formatting characters (issue #25 item 6; docs/workspace.md
 * "Names shown to people"): a real workspace gains `src/evil` U+202E `sj.exe`. The revision
 * records it byte-exact (--json shows it exact), while every terminal line of status,
 * checkpoint, revision show and revision diff shows it escaped (`\u202e`) and marked `[!]`, never
 * raw; checkpoint warns on stderr and names it in `unsafe_names`. Plus the one display function
 * every layer uses, at its edges.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  displayJsonText,
  displayLines,
  displayOutput,
  displayText,
  hasUnsafeText,
  UNSAFE_TEXT_MARKER,
  unsafeNames,
} from '../../src/contracts/display-text.js';
import { oneLine, quoteForMessage } from '../../src/contracts/message-text.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { cliJson, fixture, initProject, writeTree } from '../support/foundation.js';

const RLO = '\u202e';
const EVIL = `src/evil${RLO}sj.exe`;
const SHOWN = `${UNSAFE_TEXT_MARKER}src/evil\\u202esj.exe`;

/** Every character that must never reach a reader raw: the brief's set and the documented extras. */
const UNSAFE = [
  ...Array.from({ length: 0x20 }, (_v, i) => String.fromCharCode(i)),
  '\u007f',
  ...Array.from({ length: 0x20 }, (_v, i) => String.fromCharCode(0x80 + i)),
  '\u061c',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  ...['\u202a', '\u202b', '\u202c', '\u202d', '\u202e'],
  ...['\u2066', '\u2067', '\u2068', '\u2069'],
];

function assertNoRaw(text: string, what: string): void {
  for (const c of UNSAFE.filter((u) => u !== '\n'))
    assert.ok(!text.includes(c), `${what} holds U+${c.charCodeAt(0).toString(16).padStart(4, '0')} raw`);
}

test('displayText: every unsafe character escaped and the text marked; safe text unchanged; backslashes doubled only when marked', () => {
  for (const c of UNSAFE) {
    const shown = displayText(`a${c}b`);
    assert.equal(shown, `${UNSAFE_TEXT_MARKER}a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    assert.ok(hasUnsafeText(`a${c}b`));
  }
  assert.equal(displayText(EVIL), SHOWN);
  for (const safe of [
    'src/main.ts',
    'café/naïve.txt',
    'emoji-👩‍💻.md',
    'a\u200bb',
    'dir\\u202e-literally.txt',
    'עברית/קובץ.txt',
  ]) {
    assert.equal(displayText(safe), safe, safe);
  }
  // The literal text `\u202e` beside a real U+202E stays distinguishable from it.
  assert.equal(displayText(`x\\u202e${RLO}`), `${UNSAFE_TEXT_MARKER}x\\\\u202e\\u202e`);
  assert.equal(
    displayLines(`ok\n\tindented\nbad ${EVIL}`),
    `ok\n\tindented\n${UNSAFE_TEXT_MARKER}bad src/evil\\u202esj.exe`,
  );
  const json = JSON.stringify({ path: EVIL }, null, 2);
  assert.deepEqual(JSON.parse(displayJsonText(json)), { path: EVIL }, 'a JSON text stays the same value');
  assertNoRaw(displayJsonText(json), 'displayJsonText');
  assert.equal(displayOutput(json), displayJsonText(json));
  assert.equal(displayOutput(`path ${EVIL}`), `${UNSAFE_TEXT_MARKER}path src/evil\\u202esj.exe`);
  assert.deepEqual(unsafeNames(['a', EVIL, 'b\u0085', 'c'], 1), { count: 2, paths: [EVIL] });
  // Error lines escape the bidi characters too.
  assert.equal(oneLine(`no ${EVIL}`), 'no src/evil\\u202esj.exe');
  assert.equal(quoteForMessage(EVIL), '"src/evil\\u202esj.exe"');
});

test('a workspace gains src/evil\\u202esj.exe: recorded exact, shown escaped and marked by status, checkpoint, revision show and diff; checkpoint warns', async (t) => {
  const f = fixture(t);
  const init = await initProject(f);
  writeTree(f.workspace, { [EVIL]: 'MZ' });
  const cli = (args: string[]): Promise<CliResult> => runCli(['--data-dir', f.dataDir, ...args]);

  const status = await cli(['status', '--workspace', f.workspace]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^ {4}added {4}${escapeRegExp(SHOWN)}$`, 'm'));
  assertNoRaw(status.stdout.replaceAll('\n', ''), 'status');
  const statusJson = await cliJson<{ changes: { path: string; kind: string }[] }>(f, [
    'status',
    '--workspace',
    f.workspace,
  ]);
  assert.deepEqual(statusJson.changes, [{ path: EVIL, kind: 'added' }], '--json is exact');

  const checkpoint = await cli(['checkpoint', '--change', 'c1', '--workspace', f.workspace]);
  assert.equal(checkpoint.code, 0, checkpoint.stderr);
  assertNoRaw(checkpoint.stdout.replaceAll('\n', ''), 'checkpoint stdout');
  assert.match(
    checkpoint.stderr,
    /^warning: this checkpoint adds 1 name with control or bidirectional formatting characters/m,
  );
  assert.ok(checkpoint.stderr.includes(`\n  ${SHOWN}\n`), checkpoint.stderr);
  assertNoRaw(checkpoint.stderr.replaceAll('\n', ''), 'checkpoint stderr');

  // --json: the exact names in unsafe_names, and the warning on stderr as well.
  writeFileSync(join(f.workspace, `second\u2066.txt`), 'x');
  const second = await runCli([
    '--data-dir',
    f.dataDir,
    'checkpoint',
    '--change',
    'c1',
    '--workspace',
    f.workspace,
    '--json',
  ]);
  assert.equal(second.code, 0, second.stderr);
  const result = jsonOf<{
    revision: string;
    previous_revision: string;
    unsafe_names: { count: number; paths: string[] };
  }>(second);
  assert.deepEqual(
    result.unsafe_names,
    { count: 1, paths: ['second\u2066.txt'] },
    'only the names this checkpoint adds',
  );
  assert.match(second.stderr, /^warning: this checkpoint adds 1 name/m);
  assert.ok(second.stderr.includes(`${UNSAFE_TEXT_MARKER}second\\u2066.txt`));
  // A checkpoint that adds no such name says nothing.
  writeFileSync(join(f.workspace, 'plain.txt'), 'x');
  const plain = await runCli([
    '--data-dir',
    f.dataDir,
    'checkpoint',
    '--change',
    'c1',
    '--workspace',
    f.workspace,
    '--json',
  ]);
  assert.deepEqual(jsonOf<{ unsafe_names: unknown }>(plain).unsafe_names, { count: 0, paths: [] });
  assert.equal(plain.stderr, '');

  const show = await cli(['revision', 'show', result.revision]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, new RegExp(` ${escapeRegExp(SHOWN)}$`, 'm'));
  assert.match(show.stdout, new RegExp(` ${escapeRegExp(`${UNSAFE_TEXT_MARKER}second\\u2066.txt`)}$`, 'm'));
  assertNoRaw(show.stdout.replaceAll('\n', ''), 'revision show');
  const showJson = await cliJson<{ entries: { path: string }[] }>(f, ['revision', 'show', result.revision]);
  assert.ok(
    showJson.entries.some((entry) => entry.path === EVIL),
    'revision show --json names the exact path',
  );

  const diff = await cli(['revision', 'diff', init.revision, result.revision]);
  assert.equal(diff.code, 0, diff.stderr);
  assert.match(diff.stdout, new RegExp(`^A ${escapeRegExp(SHOWN)} \\(file\\)$`, 'm'));
  assertNoRaw(diff.stdout.replaceAll('\n', ''), 'revision diff');

  // The recorded bytes are the name's own: revision cat finds the file by its exact name.
  const cat = await cli(['revision', 'cat', result.revision, EVIL]);
  assert.equal(cat.code, 0, cat.stderr);
  assert.equal(cat.stdout, 'MZ');
  // An error line naming it escapes it.
  const missing = await cli(['revision', 'cat', result.revision, `src/none${RLO}.txt`]);
  assert.notEqual(missing.code, 0);
  assertNoRaw(missing.stderr.replaceAll('\n', ''), 'error line');
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
