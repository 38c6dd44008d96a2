/**
 * Which forge commit a Change is the candidate of (docs/hub.md "Forge status"): `agentscm change
 * link` records it, the hub's forge publisher reads it. The links are operator metadata, not
 * evidence — nothing admission checks depends on them — so they live in a database of their own,
 * `D/forge/links.sqlite`, created by the first `change link`; readers never create it.
 * One link per (repository, Change): linking again replaces it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { AgentscmError } from '../contracts/errors.js';
import type { ForgeKind } from '../contracts/hub-config.js';
import { getChange } from '../native/changes.js';
import { resolveRepository } from '../native/repositories.js';
import {
  cachedStatement,
  immediate,
  openReadOnly,
  openWritable,
  readSnapshot,
  type Migration,
  type SqliteDatabase,
} from '../native/sqlite.js';
import type { Store } from '../native/store-handle.js';
import { readTransaction } from '../native/store.js';

const WHAT = 'the forge link database';

const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE forge_links (
        repository TEXT NOT NULL,
        change_id TEXT NOT NULL,
        forge TEXT NOT NULL CHECK (forge IN ('github', 'gitlab')),
        project TEXT NOT NULL,
        sha TEXT NOT NULL,
        linked_at_ms INTEGER NOT NULL,
        PRIMARY KEY (repository, change_id)
      ) STRICT;
    `);
  },
];

/** Most links one repository may hold (the publisher looks at every one on each pass). */
export const MAX_FORGE_LINKS_PER_REPOSITORY = 1024;

const GITHUB_PROJECT = /^[A-Za-z0-9._-]{1,100}\/[A-Za-z0-9._-]{1,100}$/;
const GITLAB_PROJECT = /^(?:[0-9]{1,19}|[A-Za-z0-9._-]{1,255}(?:\/[A-Za-z0-9._-]{1,255}){1,19})$/;
const COMMIT_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export interface ForgeLink {
  readonly repository: string;
  readonly change_id: string;
  readonly forge: ForgeKind;
  readonly project: string;
  readonly sha: string;
  readonly linked_at: string;
}

/** Where the links of a store live (only the store's data directory is used). */
export function forgeLinksPath(store: Pick<Store, 'dataDir'>): string {
  return join(store.dataDir, 'forge', 'links.sqlite');
}

/** Refuse a project or SHA the named forge cannot have (FORGE_LINK_INVALID). */
export function checkForgeLink(forge: ForgeKind, project: string, sha: string): void {
  const projectOk =
    forge === 'github' ? GITHUB_PROJECT.test(project) : GITLAB_PROJECT.test(project) && project.length <= 1024;
  if (!projectOk) {
    const expected =
      forge === 'github' ? 'GitHub repository (OWNER/NAME)' : 'GitLab project (a path like group/name or a numeric ID)';
    throw new AgentscmError('FORGE_LINK_INVALID', `${JSON.stringify(project.slice(0, 300))} is not a ${expected}`, {
      hint:
        forge === 'github'
          ? 'pass --project OWNER/NAME'
          : 'pass --project GROUP/NAME (subgroups allowed) or the numeric project ID',
    });
  }
  if (!COMMIT_SHA.test(sha)) {
    throw new AgentscmError('FORGE_LINK_INVALID', `${JSON.stringify(sha.slice(0, 300))} is not a full commit SHA`, {
      hint:
        'pass the full 40-digit (or 64-digit) lowercase hex SHA of the pull or merge request head, e.g. from ' +
        '`git rev-parse HEAD`',
    });
  }
}

function rowToLink(row: {
  repository: string;
  change_id: string;
  forge: ForgeKind;
  project: string;
  sha: string;
  linked_at_ms: number;
}): ForgeLink {
  return {
    repository: row.repository,
    change_id: row.change_id,
    forge: row.forge,
    project: row.project,
    sha: row.sha,
    linked_at: new Date(row.linked_at_ms).toISOString(),
  };
}

export interface LinkChangeInput {
  /** The command's Store: its authority (read) names the Change; the links sit in its data directory. */
  readonly store: Store;
  readonly repository?: string | undefined;
  readonly change: string;
  readonly forge: ForgeKind;
  readonly project: string;
  readonly sha: string;
  readonly nowMs?: number;
}

/** Record (or replace) the forge commit a Change is the candidate of; the Change must exist. */
export function linkChange(input: LinkChangeInput): ForgeLink {
  checkForgeLink(input.forge, input.project, input.sha);
  const auth = input.store.authority();
  const { repository, changeId } = readTransaction(auth, () => {
    const repo = resolveRepository(auth, input.repository).id;
    return { repository: repo, changeId: getChange(auth, repo, input.change).id };
  });
  mkdirSync(join(input.store.dataDir, 'forge'), { recursive: true, mode: 0o700 });
  const db = openWritable(forgeLinksPath(input.store), MIGRATIONS, WHAT);
  try {
    return immediate(db, WHAT, () => {
      const count = (
        cachedStatement(db, 'SELECT count(*) AS n FROM forge_links WHERE repository = ? AND change_id <> ?').get(
          repository,
          changeId,
        ) as { n: number }
      ).n;
      if (count >= MAX_FORGE_LINKS_PER_REPOSITORY) {
        throw new AgentscmError(
          'FORGE_LINK_INVALID',
          `repository ${repository} already has ${count} forge links, the most it may hold`,
          {
            hint: 'remove links of landed or abandoned Changes with `agentscm change link --change ID --remove`',
          },
        );
      }
      const nowMs = input.nowMs ?? Date.now();
      cachedStatement(
        db,
        'INSERT INTO forge_links (repository, change_id, forge, project, sha, linked_at_ms) ' +
          'VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (repository, change_id) DO UPDATE SET forge = excluded.forge, ' +
          'project = excluded.project, sha = excluded.sha, linked_at_ms = excluded.linked_at_ms',
      ).run(repository, changeId, input.forge, input.project, input.sha, nowMs);
      return {
        repository,
        change_id: changeId,
        forge: input.forge,
        project: input.project,
        sha: input.sha,
        linked_at: new Date(nowMs).toISOString(),
      };
    });
  } finally {
    db.close();
  }
}

/** Remove a Change's link; answers whether there was one. */
export function unlinkChange(input: {
  readonly store: Store;
  readonly repository?: string | undefined;
  readonly change: string;
}): boolean {
  const auth = input.store.authority();
  const repository = readTransaction(auth, () => resolveRepository(auth, input.repository).id);
  const db = openExisting(input.store, 'write');
  if (db === null) return false;
  try {
    return immediate(
      db,
      WHAT,
      () =>
        cachedStatement(db, 'DELETE FROM forge_links WHERE repository = ? AND change_id = ?').run(
          repository,
          input.change,
        ).changes > 0,
    );
  } finally {
    db.close();
  }
}

function openExisting(store: Pick<Store, 'dataDir'>, mode: 'read' | 'write'): SqliteDatabase | null {
  const path = forgeLinksPath(store);
  if (!existsSync(path)) return null;
  return mode === 'read'
    ? openReadOnly(path, MIGRATIONS.length, WHAT)
    : openWritable(path, MIGRATIONS, WHAT, { initialized: true });
}

/** The links of one native repository (read-only; none when nothing was ever linked). */
export function listForgeLinks(store: Pick<Store, 'dataDir'>, repository: string): ForgeLink[] {
  const db = openExisting(store, 'read');
  if (db === null) return [];
  try {
    return readSnapshot(db, WHAT, () =>
      (
        cachedStatement(
          db,
          'SELECT repository, change_id, forge, project, sha, linked_at_ms FROM forge_links WHERE repository = ? ' +
            'ORDER BY change_id LIMIT ?',
        ).all(repository, MAX_FORGE_LINKS_PER_REPOSITORY) as Parameters<typeof rowToLink>[0][]
      ).map(rowToLink),
    );
  } finally {
    db.close();
  }
}
