/**
 * The documentation stands alone: every relative link in README.md, docs/ and examples/ resolves
 * to a file of the repository (and a `#anchor` to a heading of the linked page), a repository path
 * written in backquotes exists, and no page names a file outside the repository (the
 * specification is cited by section name; wire decisions are in docs/wire.md).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import test from 'node:test';

import { REPO_ROOT } from './helpers/cli.js';

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(full));
    else if (entry.name.endsWith('.md')) out.push(full);
  }
  return out;
}

function documentationFiles(): string[] {
  return [
    join(REPO_ROOT, 'README.md'),
    ...markdownFiles(join(REPO_ROOT, 'docs')),
    ...markdownFiles(join(REPO_ROOT, 'examples')),
  ].sort();
}

/** The text outside fenced code blocks, line by line with line numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line: index + 1, text: line });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const { text } of proseLines(readFileSync(file, 'utf8'))) {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!match?.[1]) continue;
    const slug = headingSlug(match[1]);
    const seen = counts.get(slug) ?? 0;
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
    counts.set(slug, seen + 1);
  }
  return anchors;
}

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** Inline links `[text](target)` outside code spans and fenced blocks. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
    const withoutCode = text.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (match[1] !== undefined) links.push({ file, line, target: match[1] });
    }
  }
  return links;
}

function where(link: { file: string; line: number }): string {
  return `${relative(REPO_ROOT, link.file)}:${link.line}`;
}

function insideRepository(path: string): boolean {
  const rel = relative(REPO_ROOT, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep);
}

test('every relative link in the documentation resolves inside the repository, anchors included', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of documentationFiles()) {
    for (const link of linksOf(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // https:, mailto:
      checked++;
      const [pathPart = '', anchor] = link.target.split('#', 2);
      const target = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
      if (!insideRepository(target)) {
        broken.push(`${where(link)}: ${link.target} points outside the repository`);
        continue;
      }
      if (!existsSync(target)) {
        broken.push(`${where(link)}: ${link.target} does not exist`);
        continue;
      }
      if (
        anchor !== undefined &&
        anchor !== '' &&
        statSync(target).isFile() &&
        target.endsWith('.md') &&
        !anchorsOf(target).has(anchor)
      ) {
        broken.push(`${where(link)}: ${link.target} names no heading of ${relative(REPO_ROOT, target)}`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked > 20, `only ${checked} relative links found: the link pattern no longer matches the docs`);
});

test('a repository file named in backquotes in README.md or docs/ exists', () => {
  const missing: string[] = [];
  let checked = 0;
  // examples/ name files of the demo repository they work on, and docs/schemas/external/ files of
  // the projects it copies schemas from: only README.md and the pages directly in docs/ are checked.
  for (const file of documentationFiles().filter(
    (path) => path === join(REPO_ROOT, 'README.md') || dirname(path) === join(REPO_ROOT, 'docs'),
  )) {
    for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
      for (const match of text.matchAll(/`((?:src|test|bin|docs|examples|bench)\/[A-Za-z0-9._/-]+\.[a-z]+)`/g)) {
        const path = match[1] ?? '';
        if (path.includes('*') || path.includes('...')) continue;
        checked++;
        if (!existsSync(join(REPO_ROOT, path))) missing.push(`${where({ file, line })}: \`${path}\` does not exist`);
      }
    }
  }
  assert.deepEqual(missing, []);
  assert.ok(checked > 20, `only ${checked} repository paths found`);
});

const OUTSIDE = [
  { pattern: /WIRE\.md/, why: 'the wire decisions are docs/wire.md' },
  { pattern: /\.\.\/shared\b|\/work\/shared\b/, why: 'a path outside the repository' },
  {
    pattern: /agent-owned-workflow-tasks\.txt|source-bound-skill-workflows\.txt/,
    why: 'cite the specification by section name, not by file',
  },
  { pattern: /\.\.\/(spec|design|vectors|external)\//, why: 'a path outside the repository' },
];

test('no page of the documentation or published schema names a file outside the repository', () => {
  const found: string[] = [];
  // agentscm's own published schemas; docs/schemas/external/ holds byte-exact copies of other projects' files.
  const schemas = readdirSync(join(REPO_ROOT, 'docs', 'schemas'))
    .filter((name) => name.endsWith('.json'))
    .map((name) => join(REPO_ROOT, 'docs', 'schemas', name));
  for (const file of [...documentationFiles(), ...schemas]) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, index) => {
        for (const { pattern, why } of OUTSIDE) {
          if (pattern.test(text))
            found.push(`${where({ file, line: index + 1 })}: ${why}: ${text.trim().slice(0, 120)}`);
        }
      });
  }
  assert.deepEqual(found, []);
});

test('the anchor rule matches the headings it is used on', () => {
  assert.equal(headingSlug('Authority identity and grants'), 'authority-identity-and-grants');
  assert.equal(headingSlug('`status` output'), 'status-output');
  assert.equal(headingSlug('Choices where the spec is silent'), 'choices-where-the-spec-is-silent');
  assert.equal(headingSlug('Keys, enrollment (v1)'), 'keys-enrollment-v1');
});

function headingsOf(file: string): string[] {
  return proseLines(readFileSync(file, 'utf8')).flatMap(({ text }) => {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    return match?.[1] ? [match[1].replace(/`/g, '')] : [];
  });
}

/** Whether `section` names a heading of `page`: the whole heading, or its part before ":" or " (". */
function hasSection(page: string, quoted: string): boolean {
  const section = quoted.replace(/`/g, '');
  return headingsOf(page).some(
    (heading) => heading === section || heading.startsWith(`${section}:`) || heading.startsWith(`${section} (`),
  );
}

test('a page cited with a section name in quotes (`cli.md "File arguments and stdin"`) has that section', () => {
  const missing: string[] = [];
  let checked = 0;
  for (const file of documentationFiles()) {
    for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
      for (const match of text.matchAll(/((?:docs\/)?[A-Za-z0-9_-]+\.md)`?\)?,? "([^"]+)"/g)) {
        const [, page = '', section = ''] = match;
        const target = page.startsWith('docs/') ? join(REPO_ROOT, page) : join(dirname(file), page);
        if (!existsSync(target)) {
          missing.push(`${where({ file, line })}: ${page} does not exist`);
          continue;
        }
        checked++;
        if (!hasSection(target, section)) {
          missing.push(`${where({ file, line })}: ${page} has no section "${section}"`);
        }
      }
    }
  }
  assert.deepEqual(missing, []);
  assert.ok(checked > 10, `only ${checked} section citations found`);
});

function codeFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...codeFiles(full));
    else if (/\.(?:ts|js|mjs|sh)$/.test(entry.name)) out.push(full);
  }
  return out;
}

test('a docs page cited with a section name in source, test and bench comments has that section', () => {
  const missing: string[] = [];
  let checked = 0;
  const files = ['src', 'test', 'bench', 'bin'].flatMap((dir) => codeFiles(join(REPO_ROOT, dir)));
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((text, index) => {
      for (const match of text.matchAll(/(?:docs\/)?([a-z0-9-]+\.md)"? "([^"]+)"/g)) {
        const [, page = '', section = ''] = match;
        const target = join(REPO_ROOT, 'docs', page);
        // Only pages of docs/ (a test may name a Markdown file of its own fixture).
        if (!existsSync(target)) continue;
        checked++;
        if (!hasSection(target, section))
          missing.push(`${relative(REPO_ROOT, file)}:${index + 1}: docs/${page} has no section "${section}"`);
      }
    });
  }
  assert.deepEqual(missing, []);
  assert.ok(checked > 100, `only ${checked} section citations found`);
});

test('no source, test or bench comment cites a specification section: they cite docs/ sections', () => {
  const SPEC_CITE = /\bspec\s+"[^"]+"/;
  assert.ok(SPEC_CITE.test('// as spec "Derivation rules" says'), 'the pattern finds a cite');
  const found: string[] = [];
  for (const file of ['src', 'test', 'bench', 'bin'].flatMap((dir) => codeFiles(join(REPO_ROOT, dir)))) {
    if (file === join(REPO_ROOT, 'test', 'docs-links.test.ts')) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, index) => {
        if (SPEC_CITE.test(text)) found.push(`${relative(REPO_ROOT, file)}:${index + 1}: ${text.trim().slice(0, 100)}`);
      });
  }
  assert.deepEqual(found, [], 'cite the docs page and heading that state it (docs/page.md "Heading")');
});
