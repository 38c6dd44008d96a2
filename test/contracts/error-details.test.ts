/**
 * Typed error details (docs/errors.md "Details"): every code thrown with `details` in src/ has a
 * declared shape in its family's `…ErrorDetails` interface (src/contracts/errors/), every declared
 * code exists, and docs/errors.md "Details" lists exactly the declared shapes.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';
import ts from 'typescript';

import { ERROR_CODES } from '../../src/contracts/errors.js';
import { REPO_ROOT } from '../helpers/cli.js';

const FAMILIES = join(REPO_ROOT, 'src', 'contracts', 'errors');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function parse(name: string, text: string): ts.SourceFile {
  return ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
}

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (child) => walk(child, visit));
}

/** One line of type text: whitespace collapsed, `readonly` and a last member's `;` dropped. */
function oneLine(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\breadonly /g, '')
    .replace(/; }/g, ' }')
    .trim();
}

/**
 * The codes a source throws with details: `new AgentscmError(CODE, message, options)` where CODE
 * is a string literal (or a conditional of literals) and `options` mentions `details`.
 */
function codesThrownWithDetails(name: string, text: string): string[] {
  const codes: string[] = [];
  walk(parse(name, text), (node) => {
    if (!ts.isNewExpression(node) || node.expression.getText() !== 'AgentscmError') return;
    const [code, , options] = node.arguments ?? [];
    if (code === undefined || options === undefined || !/\bdetails\b/.test(options.getText())) return;
    walk(code, (part) => {
      if (ts.isStringLiteralLike(part)) codes.push(part.text);
    });
  });
  return codes;
}

/** code → shape, from the `…ErrorDetails` interfaces of a family module (local interfaces inlined). */
function declaredShapes(name: string, text: string): Map<string, string> {
  const file = parse(name, text);
  const locals = new Map<string, string>();
  const interfaces: ts.InterfaceDeclaration[] = [];
  walk(file, (node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    if (node.name.text.endsWith('ErrorDetails')) interfaces.push(node);
    else locals.set(node.name.text, `{ ${node.members.map((m) => m.getText()).join(' ')} }`);
  });
  const shapes = new Map<string, string>();
  for (const declaration of interfaces)
    for (const member of declaration.members) {
      if (!ts.isPropertySignature(member) || member.type === undefined) continue;
      let shape = member.type.getText();
      for (const [local, body] of locals) shape = shape.replace(new RegExp(`\\b${local}\\b`, 'g'), body);
      shapes.set(member.name.getText(), oneLine(shape));
    }
  return shapes;
}

function allDeclared(): Map<string, string> {
  const all = new Map<string, string>();
  for (const file of sources(FAMILIES))
    for (const [code, shape] of declaredShapes(file, readFileSync(file, 'utf8'))) all.set(code, shape);
  return all;
}

/** The `- \`CODE\`: \`shape\`` lines of docs/errors.md "Details". */
function documentedShapes(): Map<string, string> {
  const text = readFileSync(join(REPO_ROOT, 'docs', 'errors.md'), 'utf8');
  const section = /^## Details\n([\s\S]*?)(?=^## )/m.exec(text)?.[1] ?? '';
  const shapes = new Map<string, string>();
  for (const match of section.matchAll(/^- `([A-Z][A-Z0-9_]*)`: `(.+)`$/gm))
    if (match[1] !== undefined && match[2] !== undefined) shapes.set(match[1], match[2]);
  return shapes;
}

test('the scans find what they are for', () => {
  const sample = [
    "throw new AgentscmError('A_CODE', 'm', { hint: 'h', details: { field } });",
    "throw new AgentscmError('B_CODE', 'm', { hint: 'h' });",
    "throw new AgentscmError(x ? 'C_CODE' : 'D_CODE', 'm', {\n  ...(s === undefined ? {} : { details: { s } }),\n});",
    "throw new AgentscmError(code, 'm', { details });",
    "new Other('E_CODE', 'm', { details: {} });",
  ].join('\n');
  assert.deepEqual(codesThrownWithDetails('sample.ts', sample), ['A_CODE', 'C_CODE', 'D_CODE']);
  const family = [
    'export interface Pos {\n  pointer: string;\n  offset: number;\n}',
    'export interface SampleErrorDetails {',
    '  A_CODE: { readonly field: string };',
    '  B_CODE: Pos;',
    '  C_CODE: {\n    a: string;\n    b?: number;\n  };',
    '}',
  ].join('\n');
  assert.deepEqual(
    [...declaredShapes('family.ts', family)],
    [
      ['A_CODE', '{ field: string }'],
      ['B_CODE', '{ pointer: string; offset: number }'],
      ['C_CODE', '{ a: string; b?: number }'],
    ],
  );
});

test('every code thrown with details in src/ has a declared details type', () => {
  const declared = allDeclared();
  const missing = sources(join(REPO_ROOT, 'src')).flatMap((file) =>
    codesThrownWithDetails(file, readFileSync(file, 'utf8'))
      .filter((code) => !declared.has(code))
      .map((code) => `${code} (${relative(REPO_ROOT, file)})`),
  );
  assert.deepEqual(
    missing,
    [],
    'declare these codes in their family\'s "…ErrorDetails" interface under src/contracts/errors/',
  );
  assert.ok(declared.size > 50, `only ${declared.size} declared shapes found; the scan is broken`);
});

test('every declared details type names a code of the table', () => {
  const unknown = [...allDeclared().keys()].filter((code) => !(code in ERROR_CODES));
  assert.deepEqual(unknown, []);
});

test('docs/errors.md "Details" lists every declared shape, and nothing else', () => {
  const declared = allDeclared();
  const documented = documentedShapes();
  const expected = [...declared].sort(([a], [b]) => a.localeCompare(b)).map(([c, s]) => `- \`${c}\`: \`${s}\``);
  assert.deepEqual(
    [...documented].map(([c, s]) => `- \`${c}\`: \`${s}\``),
    expected,
    `docs/errors.md "Details" should list, sorted by code:\n${expected.join('\n')}`,
  );
});
