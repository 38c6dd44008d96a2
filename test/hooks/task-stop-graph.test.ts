/**
 * The agent-owned Stop hook runs at every agent stop, so its command loads only what it needs
 * (docs/stop-hooks.md "Performance"): the static module graph of task-stop and task-codex-stop —
 * the graph the built command's chunks follow — holds no HTTP library (one request goes through
 * node:http), none of the task state machine, the workflows, the collector or the hub, and not
 * the installers' settings merge. Type-only imports and dynamic import() are not followed: they
 * load nothing at start-up.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'node:test';

import { REPO_ROOT } from '../helpers/cli.js';

const SRC = join(REPO_ROOT, 'src');
/** Static value imports and re-exports, and side-effect imports (not `import type`, not import()). */
const STATIC_IMPORT =
  /^\s*(?:import|export)\s+(?!type\b)[^'";]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

interface Graph {
  /** Modules under src/, relative to src/. */
  readonly modules: Set<string>;
  /** Bare specifiers: packages and node: built-ins. */
  readonly packages: Set<string>;
}

function staticGraph(entry: string): Graph {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    const key = relative(SRC, file);
    if (modules.has(key)) return;
    modules.add(key);
    for (const match of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = match[1] ?? match[2];
      if (spec === undefined) continue;
      if (!spec.startsWith('.')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec));
        continue;
      }
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      assert.ok(existsSync(target), `${key} imports ${spec}, which does not exist`);
      visit(target);
    }
  };
  visit(join(SRC, entry));
  return { modules, packages };
}

for (const entry of ['commands/skill-workflow/task-stop.ts', 'commands/skill-workflow/task-codex-stop.ts']) {
  test(`${entry} loads only what the hook needs: no HTTP library, no tasks/workflows/collector/hub layer, no settings merge`, () => {
    const { modules, packages } = staticGraph(entry);
    // The hook's own work is in the graph (the walk follows the imports that matter).
    for (const needed of [
      'hooks/task-stop.ts',
      'hooks/qualification-client.ts',
      'hooks/stop/guard.ts',
      'native/review-contexts.ts',
      'workspace/status.ts',
      'contracts/task/qualification.ts',
    ]) {
      assert.ok(modules.has(needed), `${needed} is not in the graph of ${entry}`);
    }
    for (const heavy of ['undici', 'execa', 'esbuild']) assert.ok(!packages.has(heavy), `${entry} loads ${heavy}`);
    const higher = [...modules].filter(
      (m) =>
        /^(tasks|workflows|collector|hub)\//.test(m) ||
        m === 'agent-state/hook-settings.ts' ||
        m === 'hooks/install-stop.ts',
    );
    assert.deepEqual(higher, [], `${entry} loads modules the hook does not need`);
  });
}
