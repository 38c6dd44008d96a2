/**
 * bin/lazy-oclif.js, the bundle's deferral of @oclif/core's requires (bin/bundle.js): the helper
 * evaluates a module on first use and stands in for it faithfully; the rewrite covers the
 * framework's index, Command and Config, every rewritten file still parses, and the built bundle
 * carries it. That the built CLI answers byte for byte as before is test/built-cli.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { runInThisContext } from 'node:vm';
import { transform } from 'esbuild';

import { REPO_ROOT } from './helpers/cli.js';

interface OnLoadResult {
  readonly contents: string;
}
interface LazyModule {
  readonly LAZY_HELPER: string;
  readonly lazyOclif: {
    setup(build: { onLoad(options: unknown, fn: (args: { path: string }) => Promise<OnLoadResult>): void }): void;
  };
}

const LIB = join(REPO_ROOT, 'node_modules', '@oclif', 'core', 'lib');

async function plugin(): Promise<LazyModule> {
  return (await import(pathToFileURL(join(REPO_ROOT, 'bin', 'lazy-oclif.js')).href)) as LazyModule;
}

async function rewrite(file: string): Promise<string> {
  const { lazyOclif } = await plugin();
  let onLoad: ((args: { path: string }) => Promise<OnLoadResult>) | undefined;
  lazyOclif.setup({ onLoad: (_options, fn) => (onLoad = fn) });
  assert.ok(onLoad !== undefined);
  return (await onLoad({ path: file })).contents;
}

function libFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    return entry.isDirectory() ? libFiles(full) : entry.name.endsWith('.js') ? [full] : [];
  });
}

type Lazy = (load: () => unknown) => Record<string | symbol, unknown> & ((...args: unknown[]) => unknown);

test('a deferred module is evaluated on its first use, once, and reads, calls and lists like the module', async () => {
  const { LAZY_HELPER } = await plugin();
  const lazy = runInThisContext(`(() => {\n${LAZY_HELPER}\nreturn __agentscmLazy;\n})()`) as Lazy;
  let loads = 0;
  const exportsObject = { answer: 42, nested: { x: 1 } };
  const mod = lazy(() => {
    loads += 1;
    return exportsObject;
  });
  assert.equal(loads, 0, 'nothing is evaluated before the first use');
  assert.equal(mod.answer, 42);
  assert.equal(mod.nested, exportsObject.nested);
  assert.equal(loads, 1);
  assert.ok('answer' in mod);
  assert.ok(!('missing' in mod));
  assert.deepEqual(Object.keys(mod), ['answer', 'nested']);
  mod.added = 7;
  assert.equal(exportsObject.answer + (exportsObject as unknown as { added: number }).added, 49);
  assert.equal(loads, 1, 'evaluated exactly once');

  const fn = lazy(() => (a: unknown) => `called ${String(a)}`);
  assert.equal(fn('x'), 'called x', 'a module that exports a function stays callable');
  class Base {
    readonly tag = 'base';
  }
  const cls = lazy(() => Base) as unknown as new () => Base;
  assert.equal(new cls().tag, 'base', 'and constructible');
});

test("@oclif/core's index, Command and Config defer every top-level require; every rewritten file parses", async () => {
  for (const name of ['index.js', 'command.js', join('config', 'config.js'), join('help', 'index.js')]) {
    const text = await rewrite(join(LIB, name));
    const eager = text
      .split('\n')
      .filter((line) => /^(const|var) \w+ = .*require\(/.test(line) && !line.includes('__agentscmLazy'));
    assert.deepEqual(eager, [], `${name}: eager requires left`);
    assert.ok(text.includes('function __agentscmLazy('), `${name}: the helper is appended`);
  }
  // The index's own exports: `exports.Flags = __importStar(require("./flags"))` becomes a getter.
  assert.match(await rewrite(join(LIB, 'index.js')), /defineProperty\(exports, "Flags", \{[^\n]*get: /);
  for (const file of libFiles(LIB)) await transform(await rewrite(file), { loader: 'js', format: 'cjs' });
});

test('the built bundle carries the deferral (run `npm run build` first)', () => {
  assert.ok(existsSync(join(REPO_ROOT, 'dist')), 'no dist/: run `npm run build` first');
  const chunks = join(REPO_ROOT, 'dist', 'chunks');
  const framework = readdirSync(chunks)
    .filter((name) => name.endsWith('.js'))
    .map((name) => readFileSync(join(chunks, name), 'utf8'))
    .find((text) => text.includes('node_modules/@oclif/core/lib/index.js'));
  assert.ok(framework !== undefined, 'a chunk holds @oclif/core');
  assert.ok(framework.includes('__agentscmLazy(() => require_command())'), 'Command is required on first use');
});
