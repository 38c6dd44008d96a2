/**
 * `check add-review --coverage GLOB…` (docs/checks.md "Review checks"): the glob matcher, the
 * expansion and its bounds as functions, then through the real CLI in a real workspace: a glob
 * covers exactly the files a checkpoint would record, and every refusal changes nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

import { isAgentscmError } from '../../src/contracts/errors.js';
import {
  coverageGlobMatches,
  expandCoverage,
  exposureFor,
  MAX_COVERAGE_GLOB_CHARS,
  parseCoverageEntries,
  parseCoverageGlob,
} from '../../src/workflows/checks/coverage-glob.js';
import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const CHECKS = '.agentscm-checks';

function matches(glob: string, path: string): boolean {
  return coverageGlobMatches(parseCoverageGlob(glob), path);
}

function refusedWith(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isAgentscmError(error), String(error));
    assert.equal(error.code, 'CHECK_INVALID');
    assert.match(error.message, pattern);
    assert.deepEqual(error.details, { flag: 'coverage' });
    return true;
  });
}

test('* and ? stay within one path segment; a leading dot is not special', () => {
  assert.equal(matches('src/*.ts', 'src/a.ts'), true);
  assert.equal(matches('src/*.ts', 'src/a/b.ts'), false);
  assert.equal(matches('src/*', 'src/a/b'), false);
  assert.equal(matches('*', 'a/b'), false);
  assert.equal(matches('*.ts', 'a.ts'), true);
  assert.equal(matches('src/*.ts', 'src/.ts'), true, '* matches the empty run');
  assert.equal(matches('src/*', 'src/.hidden'), true, 'dotfiles match *');
  assert.equal(matches('*', '.gitignore'), true);
  assert.equal(matches('.github/*.md', '.github/x.md'), true);
  assert.equal(matches('a?c', 'abc'), true);
  assert.equal(matches('a?c', 'ac'), false);
  assert.equal(matches('a?c', 'abbc'), false);
  assert.equal(matches('a?c', 'a/c'), false);
  assert.equal(matches('a*b*c', 'aXbYbZc'), true);
  assert.equal(matches('a*b*c', 'aXbYbZ'), false);
  assert.equal(matches('README.md', 'README.md'), true);
  assert.equal(matches('README.md', 'readme.md'), false, 'case matters');
});

test('** is any number of segments at the start, in the middle and at the end', () => {
  for (const path of ['x.ts', 'a/x.ts', 'a/b/x.ts', '.hidden/x.ts']) assert.equal(matches('**/x.ts', path), true, path);
  assert.equal(matches('**/x.ts', 'a/xx.ts'), false);
  for (const path of ['a/x.ts', 'a/b/x.ts', 'a/b/c/x.ts']) assert.equal(matches('a/**/x.ts', path), true, path);
  for (const path of ['b/a/x.ts', 'ax.ts', 'a/x.tsx', 'ab/x.ts']) assert.equal(matches('a/**/x.ts', path), false, path);
  for (const path of ['a/x', 'a/b/c', 'a/.d/e']) assert.equal(matches('a/**', path), true, path);
  assert.equal(matches('a/**', 'a'), false, 'a trailing ** is what is inside');
  assert.equal(matches('a/**', 'ab/c'), false);
  assert.equal(matches('**', 'a'), true);
  assert.equal(matches('**', 'a/b/c'), true);
  assert.equal(matches('src/**/*.ts', 'src/top.ts'), true);
  assert.equal(matches('src/**/*.ts', 'src/a/b/deep.ts'), true);
  assert.equal(matches('src/**/*.ts', 'src/a/b/note.md'), false);
  assert.equal(matches('**/**/x', 'x'), true, '**/** is **');
  assert.equal(matches('a/**/b/**/c', 'a/b/c'), true);
  assert.equal(matches('a/**/b/**/c', 'a/x/b/y/z/c'), true);
  assert.equal(matches('a/**/b/**/c', 'a/x/y/c'), false);
});

test('character classes, negation, ranges and escapes', () => {
  assert.equal(matches('f[abc].ts', 'fb.ts'), true);
  assert.equal(matches('f[abc].ts', 'fd.ts'), false);
  assert.equal(matches('f[a-c].ts', 'fc.ts'), true);
  assert.equal(matches('f[a-c].ts', 'fC.ts'), false);
  assert.equal(matches('f[!a-c].ts', 'fd.ts'), true);
  assert.equal(matches('f[^a-c].ts', 'fa.ts'), false);
  assert.equal(matches('f[]].ts', 'f].ts'), true, '] first is literal');
  assert.equal(matches('f[a-].ts', 'f-.ts'), true, '- last is literal');
  assert.equal(matches('f\\*.ts', 'f*.ts'), true);
  assert.equal(matches('f\\*.ts', 'fx.ts'), false);
  assert.equal(matches('f[!x]', 'f/'), false);
});

test('a glob is bounded before it is parsed, and must be a relative path pattern', () => {
  const atBound = `${'a'.repeat(MAX_COVERAGE_GLOB_CHARS - 2)}/*`;
  assert.equal(atBound.length, MAX_COVERAGE_GLOB_CHARS);
  assert.equal(matches(atBound, `${'a'.repeat(MAX_COVERAGE_GLOB_CHARS - 2)}/x`), true);
  refusedWith(() => parseCoverageGlob(`${atBound}x`), /of 1025 characters: an entry is 1-1024/);
  refusedWith(() => parseCoverageEntries([`${'b'.repeat(MAX_COVERAGE_GLOB_CHARS + 1)}`]), /1025 characters/);
  refusedWith(() => parseCoverageEntries(['']), /of 0 characters/);
  refusedWith(() => parseCoverageGlob('src/a**'), /\*\* must be a whole path segment/);
  refusedWith(() => parseCoverageGlob('***'), /\*\* must be a whole path segment/);
  refusedWith(() => parseCoverageGlob('/src/*'), /not a relative path pattern/);
  refusedWith(() => parseCoverageGlob('src//*'), /not a relative path pattern/);
  refusedWith(() => parseCoverageGlob('src/*/'), /not a relative path pattern/);
  refusedWith(() => parseCoverageGlob('../*'), /not a relative path pattern/);
  refusedWith(() => parseCoverageGlob('./*'), /not a relative path pattern/);
  refusedWith(() => parseCoverageGlob('src/[ab'), /\[ without its \]/);
  refusedWith(() => parseCoverageGlob('src/[z-a]'), /empty range z-a/);
  refusedWith(() => parseCoverageGlob('src/*\\'), /ends a name with/);
});

test('matching is never exponential', () => {
  const start = Date.now();
  const glob = parseCoverageGlob(`${'*a'.repeat(60)}*b`);
  assert.equal(coverageGlobMatches(glob, 'a'.repeat(4000)), false);
  const deep = parseCoverageGlob(`${'**/a/'.repeat(40)}b`);
  assert.equal(coverageGlobMatches(deep, Array.from({ length: 500 }, () => 'a').join('/')), false);
  assert.ok(Date.now() - start < 2000, `took ${Date.now() - start} ms`);
});

test('expansion: sorted, de-duplicated exact paths; exact entries must exist; bounds at 256 and 257', () => {
  const files = ['.gitignore', 'a/x.ts', 'a/y.md', 'b/z.ts', 'top.ts'];
  const expand = (entries: string[]): string[] => expandCoverage(parseCoverageEntries(entries), files);
  assert.deepEqual(expand(['**/*.ts', 'a/x.ts', 'top.ts']), ['a/x.ts', 'b/z.ts', 'top.ts']);
  assert.deepEqual(expand(['a/y.md', '*']), ['.gitignore', 'a/y.md', 'top.ts']);
  refusedWith(() => expand(['**/*.rs']), /"\*\*\/\*\.rs" matches no file/);
  refusedWith(() => expand(['a/*.ts', 'c/*']), /"c\/\*" matches no file/);
  refusedWith(() => expand(['a/nope.ts']), /"a\/nope\.ts" is not a file a checkpoint/);
  refusedWith(() => expand([`${CHECKS}/SKILL.md`]), /is not a file a checkpoint/);

  const many = Array.from({ length: 257 }, (_, i) => `m/f${String(i).padStart(3, '0')}.txt`);
  assert.equal(
    expandCoverage(parseCoverageEntries(['m/f[01]*.txt', 'm/f2[0-4]?.txt', 'm/f25[0-5].txt']), many).length,
    256,
  );
  refusedWith(() => expandCoverage(parseCoverageEntries(['m/*.txt']), many), /expands to 257 paths, over the 256/);
  assert.equal(expandCoverage(parseCoverageEntries(many.slice(0, 256)), many).length, 256, '256 entries');
  refusedWith(() => parseCoverageEntries(many), /257 --coverage entries: give 1-256/);
  refusedWith(() => parseCoverageEntries([]), /0 --coverage entries/);
});

test('exposure: the paths up to 64, then the directories that expose the fewest other files', () => {
  const sixtyFour = Array.from({ length: 64 }, (_, i) => `d${i}/f.txt`);
  assert.deepEqual(exposureFor(sixtyFour, sixtyFour), sixtyFour);
  // 65 covered files: d0 and d1 hold two covered files each; d1 also an uncovered one.
  const covered = [...Array.from({ length: 61 }, (_, i) => `e${String(i).padStart(2, '0')}/f.txt`)];
  covered.push('d0/a.txt', 'd0/b.txt', 'd1/a.txt', 'd1/b.txt');
  covered.sort();
  const files = [...covered, 'd1/other.txt'].sort();
  const exposure = exposureFor(covered, files);
  assert.equal(exposure.length, 64);
  assert.ok(exposure.includes('d0'), 'd0 exposes nothing more');
  assert.ok(exposure.includes('d1/a.txt') && !exposure.includes('d1'));
  // 128 directories of two files each and one more file beside them: one prefix in the end.
  const pairs = Array.from({ length: 128 }, (_, i) => [`many/d${i}/a.txt`, `many/d${i}/b.txt`])
    .flat()
    .sort();
  assert.deepEqual(exposureFor(pairs, [...pairs, 'many/z.txt']), ['many']);
  const root = Array.from({ length: 65 }, (_, i) => `f${i}.txt`);
  refusedWith(() => exposureFor(root, root), /need more than 64 exposure prefixes/);
});

// ---- through the CLI ----

interface World {
  readonly ws: string;
  readonly cli: (args: readonly string[]) => Promise<CliResult>;
}

function write(ws: string, path: string, text: string): void {
  mkdirSync(join(ws, path, '..'), { recursive: true });
  writeFileSync(join(ws, path), text);
}

async function world(t: Parameters<typeof tempDir>[0], files: Record<string, string>): Promise<World> {
  const root = tempDir(t, 'agentscm-coverage-');
  const ws = join(root, 'ws');
  mkdirSync(ws, { recursive: true });
  for (const [path, text] of Object.entries(files)) write(ws, path, text);
  const dataDir = join(root, 'data');
  const init = await runCli(['--data-dir', dataDir, 'init-repo', ws, '--name', 'demo', '--json']);
  assert.equal(init.code, 0, init.stderr);
  return { ws, cli: (args) => runCli(args, { cwd: ws }) };
}

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

function listTree(dir: string, root = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.name === '.agentscm') return [];
    return e.isDirectory() ? listTree(full, root) : [`${relative(root, full)}=${readFileSync(full, 'utf8').length}`];
  });
}

/** Every workspace file (but .agentscm/), `check list --json` and the requirement: what a refusal must keep. */
async function state(w: World): Promise<{ tree: string[]; list: string; requirement: string }> {
  const list = await w.cli(['check', 'list', '--json']);
  const shown = await w.cli(['requirement', 'show', '--target', 'main', '--json']);
  return {
    tree: listTree(w.ws).sort(),
    list: list.stdout,
    requirement: shown.code === 0 ? jsonOf<{ requirement_digest: string }>(shown).requirement_digest : '',
  };
}

/** Each `check add-review` is refused with CHECK_INVALID and its message; together they change nothing. */
async function refused(w: World, cases: readonly (readonly [readonly string[], RegExp])[]): Promise<void> {
  const before = await state(w);
  for (const [coverage, message] of cases) {
    const args = ['check', 'add-review', 'more', ...coverage.flatMap((c) => ['--coverage', c]), ...CRITERION];
    const result = await w.cli(args);
    assert.equal(result.code, 2, `${args.join(' ')} should fail: ${result.stdout}`);
    assert.match(result.stderr, /error\[CHECK_INVALID\]/, result.stderr);
    assert.match(result.stderr, message, result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1, 'one line');
  }
  assert.deepEqual(await state(w), before, 'a refusal changed something');
}

const CRITERION = ['--criterion', 'typed:exported functions have explicit types'];

interface Added {
  coverage: string[];
  exposure: string[];
  checks: { name: string }[];
}

test('check add-review --coverage "src/**/*.ts" covers exactly the checkpointable .ts files under src/', async (t) => {
  const w = await world(t, {
    '.gitignore': 'build/\n*.log\n',
    'src/top.ts': 'export const a = 1;\n',
    'src/a/b/deep.ts': 'export const b = 2;\n',
    'src/a/b/note.md': 'notes\n',
    'src/.hidden.ts': 'export const c = 3;\n',
    'src/build/out.ts': 'ignored\n',
    'src/x.ts.log': 'ignored\n',
    'lib/other.ts': 'export const d = 4;\n',
  });
  // Nothing matches: refused, nothing written (the first check, so there is no requirement yet).
  await refused(w, [
    [['src/**/*.rs'], /"src\/\*\*\/\*\.rs" matches no file/],
    [['src/*.ts', 'src/build/*.ts'], /"src\/build\/\*\.ts" matches no file/],
    [['src/nope.ts'], /"src\/nope\.ts" is not a file/],
    [[`src/${'*'.padEnd(1020, 'x')}`], /matches no file/],
    [[`src/${'*'.padEnd(1021, 'x')}`], /of 1025 characters: an entry is 1-1024/],
  ]);
  assert.equal(existsSync(join(w.ws, CHECKS)), false);

  const added = jsonOf<Added>(
    ok(
      await w.cli([
        'check',
        'add-review',
        'api',
        '--coverage',
        'src/**/*.ts',
        '--coverage',
        'src/top.ts',
        ...CRITERION,
        '--json',
      ]),
    ),
  );
  const expected = ['src/.hidden.ts', 'src/a/b/deep.ts', 'src/top.ts'];
  assert.deepEqual(added.coverage, expected);
  assert.deepEqual(added.exposure, expected);
  const shown = jsonOf<{ action: { coverage: string[] }; resource_json: { exposure: string[] } }>(
    ok(await w.cli(['check', 'show', 'api', '--json'])),
  );
  assert.deepEqual(shown.action.coverage, expected);
  assert.deepEqual(shown.resource_json.exposure, expected);

  // Human output lists the covered paths. `**` never covers the checks' own files.
  const human = ok(await w.cli(['check', 'add-review', 'all', '--coverage', '**', ...CRITERION]));
  const listed = human.stdout.slice(human.stdout.indexOf('covers '));
  assert.match(listed, /^covers 9 paths:\n {2}\.cursor\/rules\/agentscm\.mdc\n/);
  assert.match(listed, /^ {2}lib\/other\.ts$/m);
  assert.doesNotMatch(listed, /agentscm-checks|x\.ts\.log|build\/out/);
  const all = jsonOf<{ action: { coverage: string[] } }>(ok(await w.cli(['check', 'show', 'all', '--json'])));
  assert.ok(all.action.coverage.includes('lib/other.ts'));
  assert.equal(all.action.coverage.filter((p) => p.startsWith(`${CHECKS}/`)).length, 0);

  // A refusal once checks exist leaves the workspace, `check list` and the requirement as they were.
  await refused(w, [[['lib/**/*.rs'], /matches no file/]]);
});

test('check add-review: 256 paths after expansion are covered, 257 are refused', async (t) => {
  const files: Record<string, string> = { 'many/z.txt': 'z\n' };
  for (let i = 0; i < 128; i += 1) {
    files[`many/d${String(i).padStart(3, '0')}/a.txt`] = `${i}a\n`;
    files[`many/d${String(i).padStart(3, '0')}/b.txt`] = `${i}b\n`;
  }
  const w = await world(t, files);
  await refused(w, [[['many/**/*.txt'], /expands to 257 paths, over the 256 a review step covers/]]);
  const human = ok(await w.cli(['check', 'add-review', 'big', '--coverage', 'many/d*/*.txt', ...CRITERION]));
  const listed = human.stdout.slice(human.stdout.indexOf('covers ')).trimEnd().split('\n');
  assert.equal(listed[0], 'covers 256 paths:');
  assert.deepEqual(listed.slice(1, 3), ['  many/d000/a.txt', '  many/d000/b.txt']);
  assert.deepEqual(listed.slice(11), ['  … and 246 more (--json lists all)']);
  const shown = jsonOf<{ action: { coverage: string[] }; resource_json: { exposure: string[] } }>(
    ok(await w.cli(['check', 'show', 'big', '--json'])),
  );
  assert.equal(shown.action.coverage.length, 256);
  assert.equal(shown.action.coverage[0], 'many/d000/a.txt');
  assert.equal(shown.action.coverage[255], 'many/d127/b.txt');
  assert.deepEqual(shown.resource_json.exposure, ['many']);
  const listing = jsonOf<{ in_sync: boolean }>(ok(await w.cli(['check', 'list', '--json'])));
  assert.equal(listing.in_sync, true);
});
