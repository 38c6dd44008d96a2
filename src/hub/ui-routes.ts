/**
 * The dashboard's static files under `/ui/` (docs/dashboard.md): exactly three known files —
 * index.html, app.js, app.css — each with its content type, and every answer with the same
 * security headers (strict Content-Security-Policy without inline script or style, nosniff,
 * frame denial, no referrer). No other path is served, so nothing of the file system is reachable.
 *
 * Where the files come from: the built CLI serves `dist/ui/`, which `npm run build` writes
 * (bin/bundle.js). Run from the TypeScript sources (bin/dev.js, the tests), this module bundles
 * `src/hub/ui/main.ts` with esbuild (a devDependency) on the first request and keeps the result
 * in memory; the HTML and CSS are read from `src/hub/ui/` as they are.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import { packageSource, type PackageSource } from './package-root.js';

export const UI_PREFIX = '/ui/';

/** Headers of every dashboard answer, static or JSON (docs/dashboard.md "Security headers"). */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'none'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

const FILES: Readonly<Record<string, { readonly name: string; readonly type: string }>> = {
  '/ui/': { name: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/index.html': { name: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/app.js': { name: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/ui/app.css': { name: 'app.css', type: 'text/css; charset=utf-8' },
};

export interface UiFile {
  readonly body: Buffer;
  readonly type: string;
}

/** Where the files come from: the package root, and whether it runs from its TypeScript sources. */
export type UiSource = PackageSource;

async function bundleFromSources(root: string): Promise<Buffer> {
  // Development only: esbuild is a devDependency and not part of the built CLI's bundle.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [join(root, 'src', 'hub', 'ui', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const out = result.outputFiles[0];
  if (out === undefined) throw new AgentscmError('INTERNAL', 'esbuild produced no dashboard bundle');
  return Buffer.from(out.contents);
}

async function load(source: UiSource, name: string): Promise<Buffer> {
  const { root, fromSources } = source;
  let body: Buffer;
  if (fromSources) {
    body = name === 'app.js' ? await bundleFromSources(root) : readFileSync(join(root, 'src', 'hub', 'ui', name));
  } else {
    const file = join(root, 'dist', 'ui', name);
    if (!existsSync(file))
      throw new AgentscmError('HUB_ROUTE_NOT_FOUND', `the dashboard file ${name} is not built`, {
        hint: 'run npm run build, which writes dist/ui/',
      });
    body = readFileSync(file);
  }
  return body;
}

/** A reader of the known dashboard files of `source`, each read (or bundled) once and kept. */
export function createUiFiles(source: UiSource): (path: string) => Promise<UiFile | null> {
  const cache = new Map<string, Buffer>();
  return async (path) => {
    if (!Object.hasOwn(FILES, path)) return null;
    const known = FILES[path];
    if (known === undefined) return null;
    let body = cache.get(known.name);
    if (body === undefined) {
      body = await load(source, known.name);
      cache.set(known.name, body);
    }
    return { body, type: known.type };
  };
}

let packaged: ((path: string) => Promise<UiFile | null>) | null = null;

/**
 * The known dashboard file at `path` of this package (built or from sources), or null when the path is not one of them.
 */
export async function uiFile(path: string): Promise<UiFile | null> {
  packaged ??= createUiFiles(packageSource());
  return packaged(path);
}
