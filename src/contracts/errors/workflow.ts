/**
 * Skill workflows: definitions, plans, journal, runs, requirements (src/workflows/).
 * The rows of docs/errors.md "skill workflows (definitions, plans, journal, runs, requirements)".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const WORKFLOW_ERRORS = {
  title: 'skill workflows (definitions, plans, journal, runs, requirements)',
  codes: {
    WORKFLOW_GRAPH_INVALID: {
      exit: EXIT.INVALID,
      summary: 'Workflow step ids or dependencies are duplicated, unknown or cyclic.',
    },
    WORKFLOW_SKILL_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The skill package is invalid: entrypoint not SKILL.md, resource outside its directory, duplicate, ' +
        'missing or not a regular file.',
    },
    WORKFLOW_SOURCE_MISMATCH: {
      exit: EXIT.INVALID,
      summary: 'A workflow binding names a different repository than its source.',
    },
    WORKFLOW_POLICY_STALE: {
      exit: EXIT.CONFLICT,
      summary: 'The definition names a policy epoch that is not the current one.',
    },
    WORKFLOW_COMMAND_INVALID: {
      exit: EXIT.INVALID,
      summary: 'A command step is malformed: its runner is not a declared resource or its recipe is invalid.',
    },
    WORKFLOW_COMMAND_STALE: {
      exit: EXIT.CONFLICT,
      summary: 'A command step binds a Change or review context that is not current or does not match the workflow.',
    },
    WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED: {
      exit: EXIT.UNAVAILABLE,
      summary: 'A command step is reachable but there is no command runtime (no --docker given and no docker on PATH).',
    },
    WORKFLOW_RUN_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No workflow run with that id exists in the journal.' },
    WORKFLOW_RUN_CONFLICT: { exit: EXIT.CONFLICT, summary: 'The run id is already bound to a different plan.' },
    WORKFLOW_RUN_TERMINAL: {
      exit: EXIT.CONFLICT,
      summary: 'The run already ended (completed, failed or blocked) and cannot be cancelled.',
    },
    WORKFLOW_COMMAND_ATTEMPT_UNFINISHED: {
      exit: EXIT.CONFLICT,
      summary: 'A command attempt of the run did not finish; it is never run again and must be recovered first.',
    },
    WORKFLOW_BINDING_CHANGED: {
      exit: EXIT.CONFLICT,
      summary:
        "The run's repository, revision, policy epoch or skill bytes changed; continuation stopped, recorded " +
        'observations kept.',
    },
    WORKFLOW_JOURNAL_ACTIVE: {
      exit: EXIT.CONFLICT,
      summary: 'Another controller holds the workflow journal lease for this run.',
    },
    WORKFLOW_JOURNAL_NOT_INITIALIZED: {
      exit: EXIT.UNAVAILABLE,
      summary: 'The workflow journal does not exist in --data-dir; nothing was created.',
    },
    WORKFLOW_JOURNAL_INCONSISTENT: {
      exit: EXIT.FAILED,
      summary: 'Retained run records do not match their stored definition, order or digests.',
    },
    REQUIREMENT_NOT_FOUND: { exit: EXIT.INVALID, summary: 'The target has no installed workflow requirement.' },
    CHECK_INVALID: {
      exit: EXIT.INVALID,
      summary: 'A check name, command, flag value or bound of `agentscm check` is invalid; nothing was written.',
    },
    CHECK_EXISTS: {
      exit: EXIT.CONFLICT,
      summary: 'The workspace already has a check of that name; nothing was written.',
    },
    CHECK_NOT_FOUND: { exit: EXIT.INVALID, summary: 'The workspace has no check of that name.' },
    CHECK_LAST: {
      exit: EXIT.CONFLICT,
      summary: 'The check is the only one; a requirement needs at least one step; nothing was changed.',
    },
    CHECKS_WORKSPACE_DIRTY: {
      exit: EXIT.CONFLICT,
      summary:
        'The workspace has edits outside .agentscm-checks/ that a checks checkpoint would record; nothing was written.',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface WorkflowErrorDetails {
  WORKFLOW_BINDING_CHANGED: { requirement_digest: string } | { run_id: string; cause_code: string };
  WORKFLOW_COMMAND_ATTEMPT_UNFINISHED: { run_id: string; step: string };
  WORKFLOW_COMMAND_INVALID: { step: string; recipe_path?: string; cause_code?: string };
  WORKFLOW_COMMAND_RUNTIME_NOT_CONFIGURED: { step: string };
  WORKFLOW_COMMAND_STALE: { step: string } & Readonly<Record<string, unknown>>;
  WORKFLOW_GRAPH_INVALID: { step: string; need?: string } | { steps: string[] };
  WORKFLOW_JOURNAL_ACTIVE: { run_id: string; operation?: string; expires_at_ms?: number };
  WORKFLOW_JOURNAL_INCONSISTENT: { run_id: string };
  WORKFLOW_POLICY_STALE: { declared: string; current: string };
  WORKFLOW_RUN_CONFLICT: { run_id: string; retained_plan: string; offered_plan: string };
  WORKFLOW_RUN_TERMINAL: { run_id: string; state: string };
  WORKFLOW_SKILL_INVALID: { path: string };
  WORKFLOW_SOURCE_MISMATCH: { step: string };
  CHECK_INVALID: { name: string } | { flag: string } | { cause_code: string };
  CHECK_EXISTS: { name: string };
  CHECK_NOT_FOUND: { name: string };
  CHECK_LAST: { name: string };
  CHECKS_WORKSPACE_DIRTY: { paths: string[] };
}
