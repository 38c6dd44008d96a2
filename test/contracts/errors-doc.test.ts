import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { ERROR_CODES, ERROR_SECTIONS, EXIT } from '../../src/contracts/errors.js';
import { REPO_ROOT } from '../helpers/cli.js';

const DOC_PATH = join(REPO_ROOT, 'docs', 'errors.md');

interface DocRow {
  readonly code: string;
  readonly exit: number;
  readonly section: string;
  readonly line: number;
}

/** The section of every code: the title of its family in ERROR_SECTIONS (src/contracts/errors/). */
function sourceSections(): Map<string, string> {
  const sections = new Map<string, string>();
  for (const section of ERROR_SECTIONS)
    for (const code of Object.keys(section.codes)) sections.set(code, section.title);
  return sections;
}

function docRows(): { rows: DocRow[]; headings: string[]; exitTable: Map<number, string> } {
  const rows: DocRow[] = [];
  const headings: string[] = [];
  const exitTable = new Map<number, string>();
  let section = '';
  readFileSync(DOC_PATH, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      const heading = /^## (.+?)\s*$/.exec(line);
      if (heading?.[1] !== undefined) {
        section = heading[1];
        headings.push(section);
      }
      const row = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*(\d+)\s*\|/.exec(line);
      if (row?.[1] !== undefined && row[2] !== undefined)
        rows.push({ code: row[1], exit: Number(row[2]), section, line: index + 1 });
      const exitRow = /^\|\s*(\d)\s*\|\s*`([A-Z_]+)`\s*\|/.exec(line);
      if (exitRow?.[1] !== undefined && exitRow[2] !== undefined) exitTable.set(Number(exitRow[1]), exitRow[2]);
    });
  return { rows, headings, exitTable };
}

function rowFor(code: keyof typeof ERROR_CODES): string {
  const info = ERROR_CODES[code];
  return `| \`${code}\` | ${info.exit} | ${info.summary} |`;
}

test('every code sits in exactly one family of src/contracts/errors/', () => {
  const seen = new Map<string, string>();
  const twice: string[] = [];
  for (const section of ERROR_SECTIONS)
    for (const code of Object.keys(section.codes)) {
      const earlier = seen.get(code);
      if (earlier !== undefined) twice.push(`${code} in "${earlier}" and "${section.title}"`);
      seen.set(code, section.title);
    }
  assert.deepEqual(twice, [], `codes declared in two families:\n  ${twice.join('\n  ')}`);
  assert.deepEqual([...seen.keys()], Object.keys(ERROR_CODES));
});

test('docs/errors.md documents every error code, under its section, with its exit code', () => {
  const { rows } = docRows();
  const sections = sourceSections();
  const documented = new Map(rows.map((row) => [row.code, row]));
  const missing: string[] = [];
  for (const code of Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]) {
    if (!documented.has(code)) missing.push(`under "## ${sections.get(code) ?? '?'}": ${rowFor(code)}`);
  }
  assert.deepEqual(missing, [], `docs/errors.md lacks these rows; add them:\n  ${missing.join('\n  ')}`);
});

test('docs/errors.md documents no code that no longer exists, and no code twice', () => {
  const { rows } = docRows();
  const stale = rows.filter((row) => !(row.code in ERROR_CODES)).map((row) => `line ${row.line}: ${row.code}`);
  assert.deepEqual(
    stale,
    [],
    `docs/errors.md documents codes that are not in ERROR_CODES; remove them:\n  ${stale.join('\n  ')}`,
  );
  const seen = new Set<string>();
  const twice = rows
    .filter((row) => (seen.has(row.code) ? true : (seen.add(row.code), false)))
    .map((row) => `line ${row.line}: ${row.code}`);
  assert.deepEqual(twice, [], `documented twice:\n  ${twice.join('\n  ')}`);
});

test('documented exit codes and sections agree with src/contracts/errors/', () => {
  const { rows } = docRows();
  const sections = sourceSections();
  const wrong: string[] = [];
  for (const row of rows) {
    const info = (ERROR_CODES as Record<string, { exit: number } | undefined>)[row.code];
    if (info === undefined) continue;
    if (info.exit !== row.exit)
      wrong.push(`line ${row.line}: ${row.code} documents exit ${row.exit}, the code table says ${info.exit}`);
    const section = sections.get(row.code);
    if (section !== undefined && section !== row.section)
      wrong.push(`line ${row.line}: ${row.code} sits under "${row.section}", its family is "${section}"`);
  }
  assert.deepEqual(wrong, [], wrong.join('\n'));
});

test('docs/errors.md has one section per family of error codes and the exit-code table of docs/wire.md', () => {
  const { headings, exitTable } = docRows();
  for (const section of new Set(sourceSections().values()))
    assert.ok(headings.includes(section), `docs/errors.md needs a "## ${section}" section`);
  assert.deepEqual(
    [...exitTable.entries()].sort((a, b) => a[0] - b[0]),
    Object.entries(EXIT)
      .map(([name, exit]) => [exit, name] as [number, string])
      .sort((a, b) => a[0] - b[0]),
  );
});
