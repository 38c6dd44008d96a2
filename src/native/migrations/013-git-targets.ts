/**
 * Authority schema step 013: targets mirrored to a git branch (docs/git.md "Landing to git"). Owned by
 * src/native/git-targets.ts.
 *
 * `git_targets`: one row per linked target — the git work tree, the branch, the remote pushed to, the identity
 * recorded at link time, whether commits are signed or pushed, the branch's value at link time (the parent of the
 * first mirrored landing) and the newest landing of the target at link time (landings after it are mirrored).
 * `git_mirrors`: one row per landing written to git, with its commit. A landing of a linked target after
 * `after_landing_id` that has no row is a pending mirror: everything its commit is made of (revision, parent,
 * message, identity, landing time) is already recorded, so the next `land` or `doctor --fix` writes the same commit.
 * `git_objects`: the git object ID of each native blob and tree digest already converted (a pure function of the
 * content, cached so that a one-file landing converts one path, not the whole tree).
 */
import type { SqliteDatabase } from '../sqlite.js';

export function migrateGitTargets(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE git_targets (
      repository TEXT NOT NULL,
      target TEXT NOT NULL,
      git_repo TEXT NOT NULL,
      branch TEXT NOT NULL,
      remote TEXT,
      author TEXT NOT NULL,
      sign INTEGER NOT NULL CHECK (sign IN (0, 1)),
      push INTEGER NOT NULL CHECK (push IN (0, 1)),
      base_commit TEXT,
      after_landing_id INTEGER NOT NULL,
      linked_at_ms INTEGER NOT NULL,
      PRIMARY KEY (repository, target)
    ) STRICT;
    CREATE TABLE git_mirrors (
      landing_id INTEGER PRIMARY KEY REFERENCES landings(landing_id),
      git_repo TEXT NOT NULL,
      branch TEXT NOT NULL,
      commit_sha TEXT NOT NULL,
      parent_sha TEXT,
      tree_sha TEXT NOT NULL,
      author TEXT NOT NULL,
      written_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX git_mirrors_commit ON git_mirrors (commit_sha);
    CREATE TABLE git_objects (
      native TEXT PRIMARY KEY,
      git TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
  `);
}
