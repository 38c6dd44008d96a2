/**
 * The authority's migrations, in order: entry i brings PRAGMA user_version from i to i + 1.
 * Never reorder or edit a released step; append a new one.
 */
import type { Migration } from '../sqlite.js';
import { migrateStore } from './001-store.js';
import { migrateRequirements } from './002-requirements.js';
import { migrateReviewContexts } from './003-review-contexts.js';
import { migrateExecutorRegistry } from './004-executor-registry.js';
import { migrateAuthorityIdentity } from './005-authority-identity.js';
import { migrateGrants } from './006-grants.js';
import { migrateCollectorProfiles } from './007-collector-profiles.js';
import { migrateApprovals } from './008-approvals.js';
import { migrateTrees } from './009-trees.js';
import { migrateServerRunReceipts } from './010-server-run-receipts.js';
import { migrateCollectorEvidence } from './011-collector-evidence.js';
import { migrateCollectorSetups } from './012-collector-setups.js';
import { migrateGitTargets } from './013-git-targets.js';

export const AUTHORITY_MIGRATIONS: readonly Migration[] = [
  migrateStore,
  migrateRequirements,
  migrateReviewContexts,
  migrateExecutorRegistry,
  migrateAuthorityIdentity,
  migrateGrants,
  migrateCollectorProfiles,
  migrateApprovals,
  migrateTrees,
  migrateServerRunReceipts,
  migrateCollectorEvidence,
  migrateCollectorSetups,
  migrateGitTargets,
];
