/**
 * A hub over a store with one real v2 receipt (test/support/receipts.ts: the real evidence chain
 * — enrolled key, installed collector profile, claim, signed transfer, import), and reader and
 * agent grants of its repository, for the dashboard's route and browser tests.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { putSmallBlob } from '../../src/native/blobs.js';
import { appendChangeVersion } from '../../src/native/changes.js';
import { comparePaths, listRevisionEntries, recordRevision } from '../../src/native/revisions.js';
import { openAuthority, readTransaction, writeTransaction } from '../../src/native/store.js';
import { listTargets, setTarget } from '../../src/native/targets.js';
import { approveChange, landChange, type LandResult } from '../../src/tasks/admission/admission.js';
import { withStore } from '../../src/tasks/store.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { importEnvelope } from './admission.js';
import { claim, envelopeOf, makeEvidence, transferParts } from './evidence.js';
import { grantFor, hubOver, REPOSITORY_ID, startTestHub, type HubStore, type TestGrant } from './hub.js';
import { makeReceipt, type ReceiptFixture } from './receipts.js';
import { addRevision, CHANGE_ID, checkpoint, defaultFiles, PROFILE } from './tasks.js';

export interface DashboardHub {
  readonly hub: HubStore;
  readonly receipt: ReceiptFixture;
  readonly reader: TestGrant;
  readonly agent: TestGrant;
  readonly url: string;
  readonly base: string;
  close(): Promise<void>;
}

export const UI_BASE = `/v1/hub/ui-api/repositories/${REPOSITORY_ID}/profiles/${PROFILE}`;

/** The receipt store as a hub profile and a hub listening on a loopback port. */
export async function dashboardHub(t: TestContext, port = 0): Promise<DashboardHub> {
  const receipt = makeReceipt(t);
  const store = receipt.ev.store;
  const hub = hubOver(receipt.ev.dir, store, port);
  const reader = grantFor(hub, 'ops', 'dashboard', 'reader');
  const agent = grantFor(hub, 'alice', 'agent-1', 'agent');
  const running = await startTestHub(t, hub);
  return { hub, receipt, reader, agent, url: running.url, base: UI_BASE, close: () => running.close() };
}

/**
 * A new Change `changeId` whose one version is the target's revision plus one file at `path`
 * (the target does not move): its revision diff against the target is that one added path.
 */
export function addChangeWithFile(hub: HubStore, changeId: string, path: string, content: string): string {
  const store = hub.store;
  const auth = openAuthority(store.dataDir, { mode: 'write' });
  try {
    const base = readTransaction(
      auth,
      () => listTargets(auth, store.repository).find((target) => target.name === 'main')?.revision,
    );
    if (base === undefined) throw new Error('no target main');
    const bytes = Buffer.from(content, 'utf8');
    const blob = writeTransaction(auth, () => putSmallBlob(auth, bytes).digest);
    const entries = [
      ...readTransaction(auth, () => listRevisionEntries(auth, store.repository, base)),
      { path, mode: 'file' as const, size: BigInt(bytes.byteLength), blob },
    ];
    entries.sort((a, b) => comparePaths(a.path, b.path));
    const { id } = recordRevision(auth, store.repository, base, entries);
    appendChangeVersion(auth, store.repository, changeId, { expectedCurrent: null, revision: id, baseRevision: base });
    return id;
  } finally {
    auth.close();
  }
}

/** The Chromium to drive: AGENTSCM_TEST_BROWSER, else what bin/start-browser.sh prints (installing it when missing). */
export function browserPath(): string {
  const named = process.env.AGENTSCM_TEST_BROWSER;
  if (named !== undefined && named !== '') return named;
  return execFileSync('bash', [join(REPO_ROOT, 'bin', 'start-browser.sh')], { encoding: 'utf8' }).trim();
}

/** Launch options of every dashboard browser test and the benchmark. */
export const BROWSER_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run'];

/**
 * A hub over a store where Change version 2 (a child of the target's revision) was collected,
 * approved and landed on main through the admission core, as `agentscm approve` and `land` do.
 */
export async function landedHub(
  t: TestContext,
): Promise<{ url: string; reader: TestGrant; landed: LandResult; receiptDigest: string }> {
  const ev = makeEvidence(t);
  const base = ev.store.revision;
  checkpoint(ev.store, addRevision(ev.store.dataDir, ev.store.repository, defaultFiles({ 'b.txt': 'beta' }), base));
  const auth = openAuthority(ev.store.dataDir, { mode: 'write' });
  try {
    setTarget(auth, ev.store.repository, 'main', base);
  } finally {
    auth.close();
  }
  const imported = importEnvelope(ev, envelopeOf(ev.key, transferParts(claim(ev))));
  const receiptDigest = (imported.receipt as { receipt_digest: string }).receipt_digest;
  const landed = withStore(ev.store.dataDir, 'write', (store) => {
    approveChange(store, { profile: PROFILE, target: 'main', change: CHANGE_ID });
    return landChange(store, { profile: PROFILE, target: 'main', change: CHANGE_ID });
  });
  const hub = hubOver(ev.dir, ev.store);
  const reader = grantFor(hub, 'ops', 'dashboard', 'reader');
  const running = await startTestHub(t, hub);
  return { url: running.url, reader, landed, receiptDigest };
}
