/**
 * The store side of `agentscm doctor` (docs/doctor.md "store"): the authority and the journal of a
 * data directory inspected read-only (header, schema version, a bounded PRAGMA quick_check) and the
 * privacy of their directories; the authority is then read through the Store for the other checks
 * (src/doctor/store-contents.ts). Nothing here creates, migrates or writes a file.
 */
import { existsSync, lstatSync } from 'node:fs';

import { AUTHORITY_MIGRATIONS } from '../native/migrations/index.js';
import { inspectDatabase } from '../native/sqlite.js';
import type { Store } from '../native/store-handle.js';
import { isStoreInitialized, nativePaths, type Authority } from '../native/store.js';
import { JOURNAL_MIGRATIONS } from '../tasks/store.js';
import { JOURNAL_WHAT, journalPaths, journalRead, type Journal } from '../workflows/journal.js';
import { describeError, finding, passed, type DoctorFinding } from './finding.js';

/** quick_check runs on databases up to this size; a larger one is reported as not checked. */
export const MAX_QUICK_CHECK_BYTES = 1024 * 1024 * 1024;
/** At most this many quick_check problems are read and reported. */
export const MAX_QUICK_CHECK_PROBLEMS = 10;

const AUTHORITY_WHAT = 'the native authority';
const RESTORE_FIX =
  'restore the data directory from a backup; agentscm never repairs or re-initializes a damaged database';

/** One database: header, schema version against this build's, bounded quick_check. */
function checkDatabase(check: string, path: string, what: string, expected: number): DoctorFinding {
  let inspection;
  try {
    inspection = inspectDatabase(path, what, {
      maxCheckBytes: MAX_QUICK_CHECK_BYTES,
      maxProblems: MAX_QUICK_CHECK_PROBLEMS,
    });
  } catch (error) {
    const { code, message } = describeError(error);
    if (code === 'STORE_CORRUPT') return finding(check, 'STORE_CORRUPT', message, RESTORE_FIX);
    return finding(
      check,
      'STORE_UNREADABLE',
      `${path} cannot be read: ${code}: ${message}`,
      'run doctor as the user that owns the data directory, and check that the disk and the file are readable',
    );
  }
  const version = inspection.schemaVersion;
  if (version === 0)
    return finding(
      check,
      'STORE_CORRUPT',
      `${what} (${path}) holds no schema although its store is initialized`,
      RESTORE_FIX,
    );
  if (version > expected) {
    return finding(
      check,
      'STORE_SCHEMA_UNSUPPORTED',
      `${what} (${path}) has schema version ${version}; this build knows ${expected}`,
      'use the agentscm build (or a newer one) that wrote this store',
    );
  }
  if (version < expected) {
    return finding(
      check,
      'STORE_SCHEMA_OLD',
      `${what} (${path}) has schema version ${version}; this build writes ${expected}`,
      'run any writing agentscm command of this build against the store (it migrates the schema first); read ' +
        'commands refuse an old schema',
    );
  }
  if (inspection.integrity === 'skipped') {
    return finding(
      check,
      'STORE_CHECK_SKIPPED',
      `${what} (${path}) has schema version ${version} (current); it has ${inspection.bytes} bytes, more than the ` +
        `${MAX_QUICK_CHECK_BYTES} doctor checks`,
      `check a copy offline: sqlite3 COPY 'PRAGMA quick_check'`,
    );
  }
  if (inspection.integrity !== 'ok') {
    return finding(
      check,
      'STORE_CORRUPT',
      `${what} (${path}) fails PRAGMA quick_check: ${inspection.integrity.join('; ')}`,
      RESTORE_FIX,
    );
  }
  return passed(
    check,
    `${what} (${path}): schema version ${version} (current), quick_check ok, ${inspection.bytes} bytes`,
  );
}

/** One table of the journal: its rows, and the bytes of its pages and its indexes' (null past the bound). */
export interface JournalTableSize {
  readonly table: string;
  readonly rows: number;
  readonly bytes: number | null;
}

/**
 * The journal's size and its rows per table (docs/doctor.md "store", docs/agent-tasks.md
 * "Journal growth"), read in one snapshot: `PRAGMA page_count` and `freelist_count`, `count(*)`
 * of every table, and the bytes of each table with its indexes from `dbstat` when the journal is
 * within the quick_check bound (that reads every page). Largest first, then by name.
 */
export function journalContents(
  journal: Journal,
  maxSizedBytes = MAX_QUICK_CHECK_BYTES,
): { bytes: number; free_bytes: number; tables: JournalTableSize[] } {
  return journalRead(journal, () => {
    const { db } = journal;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const bytes = (db.pragma('page_count', { simple: true }) as number) * pageSize;
    const freeBytes = (db.pragma('freelist_count', { simple: true }) as number) * pageSize;
    const names = db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    const sized = new Map<string, number>();
    if (bytes <= maxSizedBytes) {
      const rows = db
        .prepare(
          `SELECT s.tbl_name AS name, sum(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_schema s ON s.name = d.name
           GROUP BY s.tbl_name`,
        )
        .all() as { name: string; bytes: number }[];
      for (const row of rows) sized.set(row.name, row.bytes);
    }
    const tables = names.map((table) => ({
      table,
      // The name comes from the schema itself; quoting keeps any name a single identifier.
      rows: db
        .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`)
        .pluck()
        .get() as number,
      bytes: bytes <= maxSizedBytes ? (sized.get(table) ?? 0) : null,
    }));
    tables.sort((a, b) => (b.bytes ?? 0) - (a.bytes ?? 0) || b.rows - a.rows || a.table.localeCompare(b.table));
    return { bytes, free_bytes: freeBytes, tables };
  });
}

/** The journal's size and rows per table as a pass finding (nothing when the journal cannot be read). */
function checkJournalContents(store: Store): DoctorFinding[] {
  let journal: Journal | null;
  try {
    journal = store.journal();
  } catch {
    return [];
  }
  if (journal === null) return [];
  const contents = journalContents(journal);
  const listed = contents.tables
    .map((t) => `${t.table} ${t.rows} rows${t.bytes === null ? '' : ` ${t.bytes} bytes`}`)
    .join(', ');
  return [
    passed(
      'store.journal-contents',
      `${JOURNAL_WHAT}: ${contents.bytes} bytes (${contents.free_bytes} free); per table with its indexes: ` +
        `${listed}`,
    ),
  ];
}

/** Directories of the store that group or others can enter, and files they can read. */
function checkPermissions(store: Store): DoctorFinding {
  const { dataDir } = store;
  const open: string[] = [];
  const fixes: string[] = [];
  const native = nativePaths(dataDir);
  const journal = journalPaths(dataDir);
  for (const dir of [native.dir, journal.dir]) {
    let mode: number;
    try {
      const stats = lstatSync(dir);
      if (!stats.isDirectory()) continue;
      mode = stats.mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) {
      open.push(`${dir} has mode ${mode.toString(8).padStart(4, '0')}`);
      fixes.push(`chmod 700 ${dir}`);
    }
  }
  if (open.length === 0)
    return passed('store.permissions', `${native.dir} and ${journal.dir} are private to their owner (or absent)`);
  return finding(
    'store.permissions',
    'STORE_PERMISSIONS_OPEN',
    `${open.join('; ')}: group or others can reach the store's files`,
    `run: ${fixes.join('; ')}`,
  );
}

export interface StoreCheck {
  readonly findings: DoctorFinding[];
  /** The Store's read-only authority when the store is healthy enough to read; closed with the Store. */
  readonly auth: Authority | null;
}

/** The authority, the journal and their permissions; opens the read Store's authority for the later checks. */
export function checkStore(store: Store): StoreCheck {
  const { dataDir } = store;
  const paths = nativePaths(dataDir);
  if (!isStoreInitialized(dataDir)) {
    return {
      findings: [
        finding(
          'store',
          'STORE_MISSING',
          `no native store in ${dataDir} (${paths.lock} does not exist); nothing was created`,
          `create one with \`agentscm --data-dir ${dataDir} init-repo PATH --name NAME\`, or pass the store's ` +
            '--data-dir',
        ),
      ],
      auth: null,
    };
  }
  const findings: DoctorFinding[] = [];
  if (!existsSync(paths.db)) {
    findings.push(
      finding(
        'store',
        'STORE_CORRUPT',
        `${paths.lock} marks the store initialized but ${paths.db} is missing`,
        RESTORE_FIX,
      ),
    );
  } else {
    findings.push(checkDatabase('store', paths.db, AUTHORITY_WHAT, AUTHORITY_MIGRATIONS.length));
  }
  const journal = journalPaths(dataDir);
  if (existsSync(journal.db)) {
    const checked = checkDatabase('store.journal', journal.db, JOURNAL_WHAT, JOURNAL_MIGRATIONS.length);
    findings.push(checked);
    if (checked.status === 'pass') findings.push(...checkJournalContents(store));
  } else
    findings.push(
      finding(
        'store.journal',
        'JOURNAL_ABSENT',
        `${JOURNAL_WHAT} (${journal.db}) does not exist yet`,
        'nothing to do: the first workflow run or collector claim creates it',
      ),
    );
  findings.push(checkPermissions(store));
  let auth: Authority | null = null;
  if (findings[0]?.status === 'pass') {
    try {
      auth = store.authority();
    } catch (error) {
      const { code, message } = describeError(error);
      findings[0] = finding(
        'store',
        'STORE_UNREADABLE',
        `${paths.db} cannot be opened: ${code}: ${message}`,
        'run doctor as the user that owns the data directory',
      );
    }
  }
  return { findings, auth };
}
