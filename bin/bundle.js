#!/usr/bin/env node
// Builds dist/ for bin/run.js: every command file of src/commands (and the CLI entry
// src/commands/_execute.ts, and the hub's task worker thread src/hub/task-worker.ts, which lands
// in dist/hub/task-worker.js) is an entry point of one esbuild build with code splitting. Shared
// code — @oclif/core, the command base, the layers below — lands in dist/chunks/ once, so a
// command loads a handful of files instead of hundreds of small modules, and @oclif/core exists
// exactly once (the entry and every command import the same chunk). Start-up of a command drops
// by about a third (docs/dependencies.md "The built CLI").
//
// Node resolves only better-sqlite3 (native addon) at run time; the TypeScript loaders oclif
// probes for in development are never bundled. Output paths mirror src/ (dist/commands/<id>.js),
// so package.json's command pattern and the committed oclif.manifest.json stay valid.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

import { lazyOclif } from './lazy-oclif.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const commandsDir = join(root, 'src', 'commands');

function commandEntries(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...commandEntries(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.startsWith('_')) out.push(full);
  }
  return out;
}

const commands = commandEntries(commandsDir);
// The hub's task worker thread loads its own entry file, dist/hub/task-worker.js
// (src/hub/task-worker-client.ts); it shares the chunks of the commands.
const entryPoints = [join(commandsDir, '_execute.ts'), join(root, 'src', 'hub', 'task-worker.ts'), ...commands].sort();

// Bundled CommonJS code (oclif) calls require() and reads __dirname; an ES module has neither.
const banner = [
  "import { createRequire as __agentscmCreateRequire } from 'node:module';",
  "import { fileURLToPath as __agentscmFileURLToPath } from 'node:url';",
  'const require = __agentscmCreateRequire(import.meta.url);',
  'const __filename = __agentscmFileURLToPath(import.meta.url);',
  "const __dirname = __agentscmFileURLToPath(new URL('.', import.meta.url));",
].join(' ');

// The registered schemas compiled now, not at run time (bin/precompile-schemas.ts): their
// validators land in dist/schemas/, and the module that loads them replaces
// src/contracts/json/precompiled-schemas.ts in the bundle.
const generated = mkdtempSync(join(tmpdir(), 'agentscm-precompiled-'));
const precompiledModule = join(generated, 'precompiled-schemas.js');
const precompile = spawnSync(
  process.execPath,
  ['--import', 'tsx', join(root, 'bin', 'precompile-schemas.ts'), join(root, 'dist', 'schemas'), precompiledModule],
  { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
);
if (precompile.status !== 0) throw new Error('bin/precompile-schemas.ts failed');
const precompiledSchemas = {
  name: 'precompiled-schemas',
  setup(b) {
    b.onResolve({ filter: /^\.\/precompiled-schemas\.js$/ }, (args) =>
      args.importer === join(root, 'src', 'contracts', 'json', 'schema.ts') ? { path: precompiledModule } : undefined,
    );
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints,
  outbase: 'src',
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // esbuild is imported only when the hub serves the dashboard from the sources (src/hub/ui-routes.ts).
  external: ['better-sqlite3', 'typescript', 'tsx', 'ts-node', 'esbuild'],
  banner: { js: banner },
  metafile: true,
  logLevel: 'warning',
  plugins: [precompiledSchemas, lazyOclif],
});
rmSync(generated, { recursive: true, force: true });

const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'));
process.stdout.write(
  `bundled ${commands.length} commands from ${relative(root, commandsDir)} and the hub's task worker into ${outputs.length} files under dist/\n`,
);

// The dashboard (docs/dashboard.md): its client code as one browser bundle, dist/ui/app.js, beside
// its HTML and CSS copied as they are. The hub serves exactly these three files under /ui/.
const uiSource = join(root, 'src', 'hub', 'ui');
const uiOut = join(root, 'dist', 'ui');
mkdirSync(uiOut, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: [join(uiSource, 'main.ts')],
  outfile: join(uiOut, 'app.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  logLevel: 'warning',
});
for (const name of ['index.html', 'app.css']) copyFileSync(join(uiSource, name), join(uiOut, name));
process.stdout.write('bundled the dashboard into dist/ui/\n');
