/**
 * The bridge to git: reading a git commit as a revision, writing revisions and landings as git commits.
 * The rows of docs/errors.md "git".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const GIT_ERRORS = {
  title: 'git',
  codes: {
    GIT_ATTRIBUTES_UNSUPPORTED: {
      exit: EXIT.INVALID,
      summary:
        'Files of the git work tree differ from the bytes git would record for them (a conversion by `text`, `eol`, ' +
        '`crlf`, `working-tree-encoding`, `ident` or `core.autocrlf` changes them, or a `filter` applies); nothing ' +
        'was recorded.',
    },
    GIT_FAILED: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'A git command agentscm ran failed (git missing, a damaged repository, a full disk); the message ' +
        "carries git's own words; nothing was recorded on agentscm's side.",
    },
    GIT_BRANCH_MOVED: {
      exit: EXIT.CONFLICT,
      summary:
        'The git branch a target is mirrored to is not at the commit agentscm last wrote there (it moved behind ' +
        "agentscm's back); nothing was written to git; the native landing stands and its mirror stays pending.",
    },
    GIT_COMMIT_UNPROVEN: {
      exit: EXIT.FAILED,
      summary:
        "`git verify`: the commit's trailers name no landing or export this authority recorded, or its tree differs " +
        "from the named revision's git tree.",
    },
    GIT_NOT_A_WORK_TREE: {
      exit: EXIT.INVALID,
      summary:
        '`init-repo --git` or `--git-repo`: the directory is not the top level of a git work tree; nothing was ' +
        'recorded.',
    },
    GIT_REVISION_UNKNOWN: {
      exit: EXIT.INVALID,
      summary:
        'git cannot resolve the named revision, or it names no commit, in the given repository; nothing was read ' +
        'or written.',
    },
    GIT_SUBMODULE_UNSUPPORTED: {
      exit: EXIT.INVALID,
      summary:
        'The git tree or work tree holds a submodule (a gitlink, `.gitmodules`) or a nested repository, which the ' +
        'native store cannot carry; nothing was recorded.',
    },
    GIT_TREE_UNRECORDABLE: {
      exit: EXIT.INVALID,
      summary:
        'The git commit holds a path the native store cannot record (not UTF-8, a control character) or exceeds ' +
        'a scan bound (files, file size, total size, path length); nothing was recorded.',
    },
  },
} as const satisfies ErrorSection;
