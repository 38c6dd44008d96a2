/**
 * A hub over a store with one real v2 receipt (test/receipts/fixture.ts: the real evidence chain
 * — enrolled key, installed collector profile, claim, signed transfer, import), and reader and
 * agent grants of its repository, for the dashboard's route and browser tests.
 */
import type { TestContext } from 'node:test';
import type { HubProfile } from '../../src/hub/config.js';
import { showRequirement } from '../../src/workflows/requirement.js';
import { REPOSITORY_ID, grantFor, startTestHub } from '../hub/fixture.js';
import type { HubStore, TestGrant } from '../hub/fixture.js';
import { makeReceipt } from '../receipts/fixture.js';
import type { ReceiptFixture } from '../receipts/fixture.js';
import { PROFILE } from '../tasks/fixture.js';

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
  const profile: HubProfile = {
    repositoryId: REPOSITORY_ID,
    profileId: PROFILE,
    nativeRepository: store.repository,
    dataDir: store.dataDir,
    target: 'main',
    requirementDigest: showRequirement(store.dataDir, { target: 'main' }).requirement_digest,
  };
  const hub: HubStore = { dir: receipt.ev.dir, store, profile, config: { host: '127.0.0.1', port, profiles: [profile] } };
  const reader = grantFor(hub, 'ops', 'dashboard', 'reader');
  const agent = grantFor(hub, 'alice', 'agent-1', 'agent');
  const running = await startTestHub(t, hub);
  return { hub, receipt, reader, agent, url: running.url, base: UI_BASE, close: () => running.close() };
}
