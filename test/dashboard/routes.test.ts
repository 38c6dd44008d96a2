/**
 * The dashboard's read-only JSON routes and static files on a real hub over a store with a real
 * receipt (docs/dashboard.md): reader grants only, every list bounded, typed refusals for bad
 * queries, the security headers on every answer, only the known files served, and nothing in
 * the store changes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { sha256Hex } from '../../src/crypto/sha256.js';
import { addChangeWithFile, dashboardHub, landedHub, UI_BASE } from '../support/dashboard.js';
import { errorCode, httpCall, type HttpAnswer } from '../support/hub.js';
import { CHANGE_ID, checkpoint } from '../support/tasks.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON views read loosely in assertions
type Loose = any;

function assertSecurityHeaders(answer: HttpAnswer): void {
  const csp = String(answer.headers['content-security-policy']);
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  assert.equal(answer.headers['x-frame-options'], 'DENY');
  assert.equal(answer.headers['referrer-policy'], 'no-referrer');
}

function storeDigests(dataDir: string): string[] {
  return [join(dataDir, 'native', 'authority.sqlite'), join(dataDir, 'skill-workflows', 'state.sqlite')].map((file) =>
    sha256Hex(readFileSync(file)),
  );
}

test('dashboard routes: a reader grant reads every view, bounded, with the security headers; nothing changes', async (t) => {
  const d = await dashboardHub(t);
  const before = storeDigests(d.hub.store.dataDir);
  const get = (path: string, token: string | undefined = d.reader.token): Promise<HttpAnswer> =>
    httpCall(d.url, 'GET', path, token === undefined ? {} : { token });

  const profiles = await get('/v1/hub/ui-api/profiles');
  assert.equal(profiles.status, 200, profiles.text);
  assertSecurityHeaders(profiles);
  assert.deepEqual(profiles.json, {
    profiles: [{ profile_id: 'default', repository_id: 'acme/widgets', target: 'main' }],
  });

  const changes = await get(`${d.base}/changes`);
  assert.equal(changes.status, 200, changes.text);
  assertSecurityHeaders(changes);
  const listed = changes.json.changes as Loose[];
  assert.equal(changes.json.total, 1);
  assert.equal(listed[0]?.id, CHANGE_ID);
  assert.equal(listed[0]?.versions.length, 1);
  assert.equal(listed[0]?.qualification.qualified, true);
  assert.equal(listed[0]?.qualification.receipt_digest, d.receipt.receiptDigest);
  assert.equal(changes.json.next_cursor, null);

  const change = await get(`${d.base}/changes/${CHANGE_ID}`);
  assert.equal(change.status, 200, change.text);
  assert.equal((change.json.change as Loose).id, CHANGE_ID);
  assert.equal((change.json.target as Loose).name, 'main');
  assert.deepEqual((change.json.diff as Loose).changes, [], 'the Change is at its target revision');
  assert.deepEqual(change.json.context, { context_digest: d.receipt.ev.store.contextDigest });

  const tasks = await get(`${d.base}/tasks?change=${CHANGE_ID}&limit=10`);
  assert.equal(tasks.status, 200, tasks.text);
  const attempts: Loose[] = (tasks.json.tasks as Loose[]).flatMap((task): Loose[] => task.attempts as Loose[]);
  const imported: Loose = attempts.find((attempt) => attempt.transfer !== null);
  assert.ok(imported, `no attempt with a transfer: ${tasks.text.slice(0, 500)}`);
  assert.equal(imported.transfer.signer.registration_id, d.receipt.ev.enrollment.registration_id);
  assert.equal(imported.transfer.signer.registration_current, true);
  assert.equal(imported.transfer.execution_record.outcome, 'passed');
  assert.equal(imported.state, 'finished');

  // The store retains one task (the collector step): a page of one ends there, a cursor past it is empty.
  const onePage = await get(`${d.base}/tasks?limit=1`);
  assert.deepEqual([(onePage.json.tasks as unknown[]).length, onePage.json.next_cursor], [1, null]);
  const past = await get(`${d.base}/tasks?cursor=${String((onePage.json.tasks as Loose[])[0]?.seq)}`);
  assert.deepEqual(past.json, { next_cursor: null, tasks: [] });

  const receipts = await get(`${d.base}/receipts`);
  assert.deepEqual(
    (receipts.json.receipts as Loose[]).map((r) => r.receipt_digest as string),
    [d.receipt.receiptDigest],
  );
  const receipt = await get(`${d.base}/receipts/${d.receipt.receiptDigest.slice(0, 12)}`);
  assert.equal(receipt.json.receipt_digest, d.receipt.receiptDigest);

  const bundle = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      void import('node:http').then(({ request }) => {
        const req = request(
          new URL(`${d.base}/receipts/${d.receipt.receiptDigest}/bundle`, d.url),
          { headers: { authorization: `Bearer ${d.reader.token}` } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          },
        );
        req.on('error', reject);
        req.end();
      });
    },
  );
  assert.equal(bundle.status, 200);
  assert.equal(bundle.headers['content-type'], 'application/octet-stream');
  assert.match(String(bundle.headers['content-disposition']), /^attachment; filename="receipt-[0-9a-f]{64}\.agscmrb"$/);
  assert.ok(bundle.body.equals(d.receipt.bundle), 'the downloaded bundle is the bundle receipt export writes');

  const targets = await get(`${d.base}/targets`);
  assert.deepEqual(
    (targets.json.targets as Loose[]).map((target) => [target.name as string, target.landings as unknown]),
    [['main', []]],
  );
  const registrations = await get(`${d.base}/registrations`);
  assert.deepEqual(
    (registrations.json.registrations as Loose[]).map((r) => r.registration_id as string),
    [d.receipt.ev.enrollment.registration_id],
  );
  assert.equal((registrations.json.collector_profiles as Loose[])[0]?.collector_profile_id, d.receipt.ev.profileId);
  const runs = await get(`${d.base}/runs`);
  assert.equal(runs.status, 200, runs.text);

  assert.deepEqual(storeDigests(d.hub.store.dataDir), before, 'the dashboard routes changed the store');
});

test('dashboard routes: the subject of a Change carries its revision diff against the target, bounded', async (t) => {
  const d = await dashboardHub(t);
  const revision = addChangeWithFile(d.hub, 'change-2', 'docs/new file.md', 'new\n');
  const answer = await httpCall(d.url, 'GET', `${d.base}/changes/change-2`, { token: d.reader.token });
  assert.equal(answer.status, 200, answer.text);
  const diff = answer.json.diff as Loose;
  assert.equal(diff.to, revision);
  assert.equal(diff.from, (answer.json.target as Loose).revision);
  assert.deepEqual(
    [diff.total, diff.changes],
    [1, [{ path: 'docs/new file.md', change: 'added', before: null, after: 'file' }]],
  );
  // Listed beside the first, in creation order; a Change without a context says why it cannot qualify.
  const page = await httpCall(d.url, 'GET', `${d.base}/changes?limit=1&cursor=1`, { token: d.reader.token });
  const listed = (page.json.changes as Loose[])[0];
  assert.deepEqual(
    [page.json.total, listed.id, listed.qualification.error.code, page.json.next_cursor],
    [2, 'change-2', 'CONTEXT_NOT_FOUND', null],
  );

  // A list row carries the newest 5 versions and the count; the subject view the newest 100.
  for (let i = 0; i < 6; i++) checkpoint(d.hub.store, d.hub.store.revision);
  const first = (
    (await httpCall(d.url, 'GET', `${d.base}/changes?limit=1`, { token: d.reader.token })).json.changes as Loose[]
  )[0];
  assert.deepEqual(
    [first.version_count, (first.versions as Loose[]).map((v) => v.version as number)],
    [7, [7, 6, 5, 4, 3]],
  );
  const subject = (await httpCall(d.url, 'GET', `${d.base}/changes/${CHANGE_ID}`, { token: d.reader.token })).json
    .change as Loose;
  assert.deepEqual([subject.version_count, (subject.versions as Loose[]).length], [7, 7]);
});

test('dashboard routes refuse: no token 401, an agent grant 403, bad queries 400, unknown items 404', async (t) => {
  const d = await dashboardHub(t);
  const get = (path: string, token: string | undefined): Promise<HttpAnswer> =>
    httpCall(d.url, 'GET', path, token === undefined ? {} : { token });
  const cases: [string, string | undefined, number, string][] = [
    [`${d.base}/changes`, undefined, 401, 'HUB_AUTH_REQUIRED'],
    [`${d.base}/changes`, d.agent.token, 403, 'HUB_GRANT_SCOPE_MISMATCH'],
    ['/v1/hub/ui-api/profiles', d.agent.token, 403, 'HUB_GRANT_SCOPE_MISMATCH'],
    [`${d.base}/changes`, 'not-a-token', 401, 'GRANT_TOKEN_REJECTED'],
    [`${d.base}/changes?limit=0`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/changes?limit=101`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/tasks?limit=201`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/changes?limit=1&limit=2`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/changes?token=x`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/tasks?cursor=-1`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/targets?limit=1`, d.reader.token, 400, 'HUB_QUERY_INVALID'],
    [`${d.base}/changes/no-such-change`, d.reader.token, 400, 'CHANGE_NOT_FOUND'],
    [`${d.base}/receipts/${'0'.repeat(64)}`, d.reader.token, 400, 'RECEIPT_NOT_FOUND'],
    ['/v1/hub/ui-api/repositories/acme/other/profiles/default/changes', d.reader.token, 404, 'HUB_PROFILE_NOT_FOUND'],
    [`${d.base}/secrets`, d.reader.token, 404, 'HUB_ROUTE_NOT_FOUND'],
  ];
  for (const [path, token, status, code] of cases) {
    const answer = await get(path, token);
    assert.deepEqual([answer.status, errorCode(answer)], [status, code], `${path}: ${answer.text.slice(0, 300)}`);
  }
  const posted = await httpCall(d.url, 'POST', `${d.base}/changes`, { token: d.reader.token, body: '{}' });
  assert.equal(errorCode(posted), 'HUB_ROUTE_NOT_FOUND', 'the dashboard routes take GET only');
});

test('dashboard static files: only the three known files, with content types and the security headers', async (t) => {
  const d = await dashboardHub(t);
  const index = await httpCall(d.url, 'GET', '/ui/');
  assert.equal(index.status, 200);
  assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
  assertSecurityHeaders(index);
  assert.doesNotMatch(index.text, /<script>|<style>|\son[a-z]+=/i, 'no inline script, style or handler');
  const script = await httpCall(d.url, 'GET', '/ui/app.js');
  assert.equal(script.status, 200);
  assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.doesNotMatch(
    script.text,
    /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/,
    'the bundle never parses HTML from data',
  );
  assert.doesNotMatch(script.text, /https?:\/\/(?!www\.w3\.org)/, 'no network address outside the hub');
  const css = await httpCall(d.url, 'GET', '/ui/app.css');
  assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  const redirect = await httpCall(d.url, 'GET', '/ui');
  assert.deepEqual([redirect.status, redirect.headers.location], [308, '/ui/']);
  for (const path of [
    '/ui/../package.json',
    '/ui/main.ts',
    '/ui/tsconfig.json',
    '/ui/app.js.map',
    '/ui/%2e%2e/package.json',
    '/ui/constructor',
  ]) {
    const answer = await httpCall(d.url, 'GET', path);
    assert.equal(answer.status, 404, path);
  }
});

test('dashboard routes: a target shows what landed on it, when, from which revision and on which receipt', async (t) => {
  const d = await landedHub(t);
  const answer = await httpCall(d.url, 'GET', `${UI_BASE}/targets`, { token: d.reader.token });
  assert.equal(answer.status, 200, answer.text);
  const main = (answer.json.targets as Loose[]).find((target) => target.name === 'main');
  const landing = d.landed.landing;
  assert.equal(main.revision, landing.revision);
  assert.deepEqual(main.landings, [
    {
      landing_id: landing.landing_id,
      repository: landing.repository,
      target: 'main',
      previous_revision: landing.previous_revision,
      revision: landing.revision,
      change_id: CHANGE_ID,
      change_version: 2,
      approval_id: landing.approval_id,
      receipt_kind: 'imported',
      receipt_digest: d.receiptDigest,
      landed_by: landing.landed_by,
      landed_at_ms: landing.landed_at_ms,
    },
  ]);
});
