/**
 * `.agentscm/exclude` (docs/workspace.md "Excluded paths"): the line checks, the bounds (at and
 * one past), the scan honouring it with git's semantics — compared with real git reading the
 * same lines from `.git/info/exclude` — and the idempotent writer.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';

import { isAgentscmError } from '../../src/contracts/errors.js';
import {
  addExcludePatterns,
  anchoredPattern,
  excludeFilePath,
  excludeLineProblem,
  isExcludedPath,
  MAX_EXCLUDE_BYTES,
  MAX_EXCLUDE_PATTERNS,
  parseExcludeFile,
  readExcludeRules,
} from '../../src/workspace/exclude.js';
import { scanWorkspace } from '../../src/workspace/scan.js';
import { tempDir } from '../helpers/tmp.js';

function refusedWith(fn: () => unknown, pattern: RegExp, code = 'WORKSPACE_EXCLUDE_INVALID'): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isAgentscmError(error));
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  });
}

test('usable lines pass; lines git accepts but that can never match are refused with the reason', () => {
  for (const line of [
    '',
    '   ',
    '# a comment',
    '#[unclosed',
    '*.log',
    '!keep.log',
    '/build/',
    'a/**/b',
    '[a-c].txt',
    '[!a]x',
    '[^a]x',
    '[]]x',
    '[[:digit:]].txt',
    'foo\\ ',
    'trailing   ',
    '\\#literal',
    '\\!literal',
    'x\\\\',
  ])
    assert.equal(excludeLineProblem(line), undefined, line);
  const bad: [string, RegExp][] = [
    ['a[', /unclosed "\["/],
    ['a[b', /unclosed "\[" at character 2/],
    ['!x[', /unclosed "\[" at character 3/],
    ['x\\', /escapes nothing/],
    ['[[:nope:]]', /unknown character class/],
    ['[[:alpha', /unclosed "\[:"/],
    ['!', /names no path/],
    ['/', /names no path/],
    ['!/', /names no path/],
    ['a\u0000b', /control character/],
  ];
  for (const [line, why] of bad) assert.match(excludeLineProblem(line) ?? '', why, line);
});

test('parseExcludeFile: comments and blanks dropped, CRLF accepted, an invalid line named by number', () => {
  assert.deepEqual(parseExcludeFile(Buffer.from('# c\n\n*.log\r\n/build/\n')), ['*.log', '/build/']);
  refusedWith(() => parseExcludeFile(Buffer.from('ok\n# fine\nbad[\n')), /line 3 \("bad\["\): it has an unclosed/);
  refusedWith(
    () => parseExcludeFile(Buffer.concat([Buffer.from('a\nb\n'), Buffer.from([0xff, 0x0a])])),
    /line 3 is not valid UTF-8/,
  );
});

test(`bounds: ${MAX_EXCLUDE_BYTES} bytes and ${MAX_EXCLUDE_PATTERNS} patterns pass, one more of either is refused`, () => {
  const atBytes = Buffer.alloc(MAX_EXCLUDE_BYTES, '#');
  assert.deepEqual(parseExcludeFile(atBytes), []);
  refusedWith(
    () => parseExcludeFile(Buffer.alloc(MAX_EXCLUDE_BYTES + 1, '#')),
    new RegExp(`${MAX_EXCLUDE_BYTES + 1} bytes, more than ${MAX_EXCLUDE_BYTES}`),
  );
  const lines = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => `p${i}\n`).join(''));
  assert.equal(parseExcludeFile(lines(MAX_EXCLUDE_PATTERNS)).length, MAX_EXCLUDE_PATTERNS);
  refusedWith(
    () => parseExcludeFile(Buffer.from(`# comment\n${lines(MAX_EXCLUDE_PATTERNS + 1).toString()}`)),
    new RegExp(`line ${MAX_EXCLUDE_PATTERNS + 2} is pattern ${MAX_EXCLUDE_PATTERNS + 1}, more than`),
  );
});

/** Each case: the exclude lines and the files of a tree. */
const GIT_CASES: [string, string[]][] = [
  ['*.log', ['a.log', 'd/b.log', 'c.txt']],
  ['/build', ['build/x', 'src/build/y']],
  ['build/', ['build/x', 'src/build/y', 'build2/z']],
  ['doc/*.txt', ['doc/a.txt', 'doc/s/b.txt', 'x/doc/a.txt']],
  ['**/foo', ['foo', 'a/foo', 'a/b/foo/x', 'foox']],
  ['a/**/b', ['a/b', 'a/x/b', 'a/x/y/b', 'ab']],
  ['abc/**', ['abc/x', 'abc/y/z', 'abcd']],
  ['[a-c].txt', ['a.txt', 'd.txt', 'b.txt']],
  ['[!a].txt\n[^b].md', ['a.txt', 'b.txt', 'a.md', 'b.md']],
  ['[[:digit:]].txt', ['1.txt', 'a.txt']],
  ['?.md', ['a.md', 'ab.md']],
  ['*.log\n!keep.log', ['a.log', 'keep.log', 'd/keep.log']],
  ['dir/\n!dir/keep', ['dir/a', 'dir/keep', 'other']],
  ['\\#x\n\\!y', ['#x', '!y', 'z']],
  ['foo\\ \nbar  ', ['foo ', 'foo', 'bar', 'bar  ']],
  ['*/b', ['a/b', 'a/c/b', 'b']],
  ['[]]x\n[a-]y', [']x', 'ax', '-y', 'ay', 'by']],
  ['# only a comment\n\n', ['a', 'b/c']],
];

test('the scan excludes exactly what git excludes for the same lines in .git/info/exclude', (t) => {
  for (const [lines, files] of GIT_CASES) {
    const root = tempDir(t);
    execFileSync('git', ['init', '-q', root]);
    writeFileSync(join(root, '.git', 'info', 'exclude'), `${lines}\n`);
    mkdirSync(join(root, '.agentscm'));
    writeFileSync(join(root, '.agentscm', '.gitignore'), '*\n');
    writeFileSync(excludeFilePath(root), `${lines}\n`);
    for (const file of files) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), '');
    }
    const git = execFileSync('git', ['-C', root, 'ls-files', '-o', '--exclude-standard', '-z'])
      .toString()
      .split('\0')
      .filter((p) => p !== '')
      .sort();
    const ours = scanWorkspace(root)
      .files.map((f) => f.path)
      .sort();
    assert.deepEqual(ours, git, JSON.stringify(lines));
  }
});

test('a .gitignore can re-include what the exclude list excludes (git precedence); .agentscm/ is never scanned', (t) => {
  const root = tempDir(t);
  mkdirSync(join(root, '.agentscm'));
  writeFileSync(excludeFilePath(root), '*.log\n/out/\n');
  writeFileSync(join(root, '.gitignore'), '!keep.log\n');
  for (const file of ['a.log', 'keep.log', 'src.ts']) writeFileSync(join(root, file), 'x');
  mkdirSync(join(root, 'out'));
  writeFileSync(join(root, 'out', 'bundle.js'), 'x');
  assert.deepEqual(
    scanWorkspace(root).files.map((f) => f.path),
    ['.gitignore', 'keep.log', 'src.ts'],
  );
  const rules = readExcludeRules(root);
  assert.equal(isExcludedPath(rules, 'out/bundle.js'), true);
  assert.equal(isExcludedPath(rules, 'out', true), true);
  assert.equal(isExcludedPath(rules, 'src.ts'), false);
  assert.equal(isExcludedPath(null, 'a.log'), false);
});

test('an invalid exclude file stops the scan before it walks; a linked one is WORKSPACE_STATE_UNSAFE', (t) => {
  const root = tempDir(t);
  mkdirSync(join(root, '.agentscm'));
  writeFileSync(excludeFilePath(root), '*.log\nbuild[\n');
  refusedWith(() => scanWorkspace(root), /\.agentscm\/exclude: line 2/);
  const other = join(tempDir(t), 'patterns');
  writeFileSync(other, '*\n');
  execFileSync('ln', ['-sf', other, excludeFilePath(root)]);
  refusedWith(() => scanWorkspace(root), /symbolic link/, 'WORKSPACE_STATE_UNSAFE');
});

test('addExcludePatterns: creates the file, appends once, keeps every existing line, refuses an invalid file', (t) => {
  const root = tempDir(t);
  const first = addExcludePatterns(root, ['/.codex/hooks.json']);
  assert.deepEqual(first.added, ['/.codex/hooks.json']);
  assert.equal(readFileSync(excludeFilePath(root), 'utf8'), '/.codex/hooks.json\n');
  assert.equal(readFileSync(join(root, '.agentscm', '.gitignore'), 'utf8'), '*\n');
  writeFileSync(excludeFilePath(root), '# mine\n/.codex/hooks.json\nbuild/');
  assert.deepEqual(addExcludePatterns(root, ['/.codex/hooks.json']).added, []);
  assert.deepEqual(addExcludePatterns(root, ['/.claude/settings.local.json'], true).added, [
    '/.claude/settings.local.json',
  ]);
  assert.equal(readFileSync(excludeFilePath(root), 'utf8'), '# mine\n/.codex/hooks.json\nbuild/');
  addExcludePatterns(root, ['/.claude/settings.local.json', '/.claude/settings.local.json']);
  assert.equal(
    readFileSync(excludeFilePath(root), 'utf8'),
    '# mine\n/.codex/hooks.json\nbuild/\n/.claude/settings.local.json\n',
  );
  writeFileSync(excludeFilePath(root), 'x[\n');
  refusedWith(() => addExcludePatterns(root, ['/y']), /line 1/);
  assert.equal(readFileSync(excludeFilePath(root), 'utf8'), 'x[\n');
});

test('anchoredPattern: the path from the root, special characters escaped; null outside the root', () => {
  assert.equal(anchoredPattern('/w', '/w/.claude/settings.local.json'), '/.claude/settings.local.json');
  assert.equal(anchoredPattern('/w', '/w/a b/[x]*?.json'), '/a\\ b/\\[x\\]\\*\\?.json');
  assert.equal(anchoredPattern('/w', '/elsewhere/hooks.json'), null);
  assert.equal(anchoredPattern('/w', '/w'), null);
  const matcher = parseExcludeFile(Buffer.from(`${anchoredPattern('/w', '/w/a b/[x]*?.json') ?? ''}\n`));
  assert.deepEqual(matcher, ['/a\\ b/\\[x\\]\\*\\?.json']);
});
