/**
 * `hub serve` says where it is (docs/hub.md "Running the hub"): the first stdout line is its URL
 * `http://ADDR:PORT/`, the dashboard's URL goes to stderr, and `GET /` answers 302 to `/ui/`.
 * Spawned as an operator runs it, over real loopback HTTP.
 */
import assert from 'node:assert/strict';
import test from 'node:test';

import { httpCall, hubStore, spawnHubServe } from '../support/hub.js';

test('hub serve prints its URL first on stdout and the dashboard URL on stderr; GET / redirects to /ui/', async (t) => {
  const hub = hubStore(t);
  const { child, firstLine: first, exited, stdout, stderr } = await spawnHubServe(t, hub, { json: false });
  const match = /^http:\/\/127\.0\.0\.1:([1-9][0-9]*)\/$/.exec(first);
  assert.ok(match, `first line ${first}`);
  const base = first.slice(0, -1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(stderr().split('\n')[0], `dashboard: ${base}/ui/`);

  const root = await httpCall(base, 'GET', '/');
  assert.equal(root.status, 302);
  assert.equal(root.headers.location, '/ui/');
  assert.equal(root.text, '');
  const withQuery = await httpCall(base, 'GET', '/?x=1');
  assert.equal(withQuery.status, 302);
  const page = await httpCall(base, 'GET', String(root.headers.location));
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.equal((await httpCall(base, 'POST', '/', { body: '{}' })).status, 404, 'only GET is redirected');

  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr());
  assert.equal(stdout(), `${first}\n`, 'stdout holds only the URL');
});

test('hub serve --json: the first line names the dashboard too, and stderr stays JSON access-log lines', async (t) => {
  const hub = hubStore(t);
  const { child, firstLine, url, exited, stderr } = await spawnHubServe(t, hub);
  const line = JSON.parse(firstLine) as { listen: string; url: string; dashboard: string };
  assert.equal(line.url, `http://${line.listen}`);
  assert.equal(line.dashboard, `${url}/ui/`);
  assert.equal((await httpCall(url, 'GET', '/')).status, 302);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  for (const entry of stderr().trim().split('\n')) assert.doesNotThrow(() => JSON.parse(entry), entry);
});
