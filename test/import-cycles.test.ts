/**
 * No import cycle in src/ (docs/architecture.md "Layers"): the graph of relative imports between
 * the modules of src/ must be acyclic. Every edge counts, `import type` and `export type … from`
 * included — a type-only edge is erased at run time, but a cycle through types still ties the
 * modules together, and counting every edge is the stricter and simpler rule. Static `import` /
 * `export … from`, side-effect `import '…'` and dynamic `import('…')` of relative specifiers are
 * read; a cycle is a strongly connected component (Tarjan) of more than one module, or a module
 * importing itself, and the failure names one concrete path around each.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'node:test';

import { REPO_ROOT } from './helpers/cli.js';

type Graph = ReadonlyMap<string, readonly string[]>;

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

const SRC = join(REPO_ROOT, 'src');
const IMPORT =
  /^\s*(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The source file a relative specifier names (`./x.js` is `./x.ts` in src/), or null. */
function resolveSpecifier(file: string, spec: string): string | null {
  const target = resolve(dirname(file), spec);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return null;
}

/** The relative-import graph of src/: module path (relative to the repository) → the modules it imports. */
function srcGraph(): { graph: Map<string, string[]>; unresolved: string[] } {
  const graph = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of listTs(SRC)) {
    const from = relative(REPO_ROOT, file);
    const edges = new Set<string>();
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3];
      if (spec === undefined || !spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec);
      if (target === null) unresolved.push(`${from} imports ${spec}`);
      else edges.add(relative(REPO_ROOT, target));
    }
    graph.set(from, [...edges].sort());
  }
  return { graph, unresolved };
}

/** Tarjan's strongly connected components that are cycles (more than one module, or a self-import). */
function cyclicComponents(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) out.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return out;
}

/** One path around a cyclic component, from its first module back to it: `a -> b -> a`. */
function cyclePath(graph: Graph, component: readonly string[]): string {
  const members = new Set(component);
  const start = component[0]!;
  const path: string[] = [start];
  const seen = new Set<string>([start]);
  const walk = (node: string): boolean => {
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) return true;
      if (seen.has(to)) continue;
      seen.add(to);
      path.push(to);
      if (walk(to)) return true;
      path.pop();
    }
    return false;
  };
  walk(start);
  return [...path, start].join(' -> ');
}

function describeCycles(graph: Graph): string[] {
  return cyclicComponents(graph).map((component) => cyclePath(graph, component));
}

test('the cycle detector reports a synthetic cycle and passes an acyclic graph', () => {
  assert.deepEqual(
    describeCycles(
      new Map([
        ['a', ['b']],
        ['b', ['a']],
      ]),
    ),
    ['a -> b -> a'],
  );
  assert.deepEqual(describeCycles(new Map([['a', ['a']]])), ['a -> a']);
  assert.deepEqual(
    describeCycles(
      new Map([
        ['a', ['b', 'd']],
        ['b', ['c']],
        ['c', ['a']],
        ['d', ['e']],
        ['e', []],
      ]),
    ),
    ['a -> b -> c -> a'],
  );
  assert.deepEqual(
    describeCycles(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    [],
  );
});

test('the import scanner sees every relative import of src/', () => {
  const { graph, unresolved } = srcGraph();
  assert.deepEqual(unresolved, []);
  // A known edge of each import form, so that a scanner that reads nothing cannot pass.
  assert.ok(graph.size > 50, `only ${graph.size} modules read under src/`);
  const known: ReadonlyArray<readonly [string, string, string]> = [
    ['import', 'src/tasks/views.ts', 'src/tasks/journal-rows.ts'],
    ['import type', 'src/tasks/views.ts', 'src/tasks/derive.ts'],
    ['export … from', 'src/tasks/collector/receipts.ts', 'src/tasks/collector/retained-envelope.ts'],
    ['import()', 'src/commands/skill-workflow/_runtime.ts', 'src/collector/command-step-runtime.ts'],
  ];
  for (const [form, from, to] of known) assert.ok(graph.get(from)?.includes(to), `${form}: ${from} -> ${to} not seen`);
});

test('src/ has no import cycle', () => {
  const { graph } = srcGraph();
  assert.deepEqual(describeCycles(graph), []);
});
