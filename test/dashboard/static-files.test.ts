/**
 * Where the dashboard's files come from (docs/dashboard.md "Static files"): a built package serves
 * exactly dist/ui/ (a missing file is HUB_ROUTE_NOT_FOUND naming npm run build); run from the
 * sources, app.js is bundled from src/hub/ui/main.ts by esbuild and the HTML and CSS are read as
 * they are. Only the known paths map to a file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { createUiFiles } from '../../src/hub/ui-routes.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

test('a built package serves dist/ui/ exactly, and a file that is not built is HUB_ROUTE_NOT_FOUND', async (t) => {
  const root = tempDir(t, 'agentscm-ui-built-');
  mkdirSync(join(root, 'dist', 'ui'), { recursive: true });
  writeFileSync(join(root, 'dist', 'ui', 'index.html'), '<!doctype html><title>built</title>');
  writeFileSync(join(root, 'dist', 'ui', 'app.js'), 'export const built = 1;\n');
  const files = createUiFiles({ root, fromSources: false });
  assert.deepEqual(await files('/ui/'), {
    body: Buffer.from('<!doctype html><title>built</title>'),
    type: 'text/html; charset=utf-8',
  });
  assert.deepEqual(await files('/ui/app.js'), {
    body: Buffer.from('export const built = 1;\n'),
    type: 'text/javascript; charset=utf-8',
  });
  await assert.rejects(
    files('/ui/app.css'),
    (error: unknown) =>
      error instanceof AgentscmError && error.code === 'HUB_ROUTE_NOT_FOUND' && /npm run build/.test(error.hint ?? ''),
  );
  for (const path of ['/ui/main.ts', '/ui/../package.json', '/ui/hasOwnProperty', '/ui/__proto__', '/ui'])
    assert.equal(await files(path), null, path);
});

test('from the sources, app.js is the bundle of src/hub/ui/main.ts and the HTML and CSS are the source files', async () => {
  const files = createUiFiles({ root: REPO_ROOT, fromSources: true });
  const script = await files('/ui/app.js');
  assert.ok(script !== null);
  const text = script.body.toString('utf8');
  assert.match(text, /agentscm\.reader_token/);
  assert.doesNotMatch(text, /^import /m, 'one self-contained bundle');
  assert.deepEqual(
    (await files('/ui/index.html'))?.body,
    readFileSync(join(REPO_ROOT, 'src', 'hub', 'ui', 'index.html')),
  );
  assert.deepEqual((await files('/ui/app.css'))?.body, readFileSync(join(REPO_ROOT, 'src', 'hub', 'ui', 'app.css')));
});
