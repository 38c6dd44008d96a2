/**
 * The shape of the sources (docs/architecture.md "Layers"): no line of src/ is longer than 120
 * characters (the formatter's width; comments and strings included, which it does not wrap), and a
 * module over 400 lines says at its top why it stays whole ("Over 400 lines: …").
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';

import { REPO_ROOT } from './helpers/cli.js';

const WIDTH = 120;
const MODULE_LINES = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Lines longer than `width` characters (code points, so `→` counts once). */
function longLines(text: string, width = WIDTH): number[] {
  return text.split('\n').flatMap((line, index) => ([...line].length > width ? [index + 1] : []));
}

/** Whether a module over the bound gives its reason in its leading comment. */
function statesWhyLong(text: string): boolean {
  const lines = text.split('\n');
  if (lines.length <= MODULE_LINES) return true;
  return /over 400 lines/i.test(lines.slice(0, 12).join(' '));
}

test('the checks find what they are for', () => {
  assert.deepEqual(longLines(`${'x'.repeat(120)}\n${'y'.repeat(121)}\n${'→'.repeat(120)}`), [2]);
  const long = Array.from({ length: 401 }, () => 'const a = 1;').join('\n');
  assert.equal(statesWhyLong(long), false);
  assert.equal(statesWhyLong(`/**\n * Over 400 lines: one parser.\n */\n${long}`), true);
  assert.equal(statesWhyLong(Array.from({ length: 400 }, () => 'x').join('\n')), true);
});

test(`no line of src/ is longer than ${WIDTH} characters`, () => {
  const found = sources(join(REPO_ROOT, 'src')).flatMap((file) =>
    longLines(readFileSync(file, 'utf8')).map((line) => `${relative(REPO_ROOT, file)}:${line}`),
  );
  assert.deepEqual(found, [], 'wrap the comment or split the string (npm run format wraps code)');
});

test(`a module of src/ over ${MODULE_LINES} lines says why at its top`, () => {
  const found = sources(join(REPO_ROOT, 'src'))
    .filter((file) => !statesWhyLong(readFileSync(file, 'utf8')))
    .map((file) => relative(REPO_ROOT, file));
  assert.deepEqual(found, [], 'split the module by concern, or write "Over 400 lines: <why>" in its first comment');
});
