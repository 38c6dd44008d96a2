/**
 * The one error type of agentscm: a stable code from one table, the exit code that
 * code maps to (docs/wire.md "CLI conventions"), a message, and a hint that says what to do next.
 * `docs/errors.md` is checked against ERROR_CODES by test/contracts/errors-doc.test.ts.
 */

/** Exit codes of docs/wire.md: 0 ok, 1 reported failure/blocking, 2 usage/invalid input, 3 conflict, 4 unavailable. */
export const EXIT = {
  OK: 0,
  FAILED: 1,
  INVALID: 2,
  CONFLICT: 3,
  UNAVAILABLE: 4,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

interface CodeInfo {
  readonly exit: ExitCode;
  readonly summary: string;
}

/**
 * Every error code, grouped by the layer that raises it. Add a code to its own section and a
 * row to docs/errors.md in the same commit; the doc test fails otherwise.
 */
export const ERROR_CODES = {
  // --- generic ---
  USAGE: { exit: EXIT.INVALID, summary: 'The command line is malformed (unknown flag, missing argument).' },
  INTERNAL: {
    exit: EXIT.FAILED,
    summary: 'An unexpected internal failure; nothing was classified as valid or invalid.',
  },
  IO_ERROR: { exit: EXIT.UNAVAILABLE, summary: 'A file or directory could not be read or written.' },
  INPUT_NOT_REGULAR_FILE: {
    exit: EXIT.INVALID,
    summary: 'A file argument names a directory, FIFO, socket or device instead of a regular file; it was not read.',
  },

  // --- contracts: strict JSON decoding ---
  INPUT_TOO_LARGE: { exit: EXIT.INVALID, summary: 'The input exceeds its byte limit; it was refused before parsing.' },
  JSON_BOM: { exit: EXIT.INVALID, summary: 'The input starts with a byte order mark.' },
  JSON_INVALID_UTF8: { exit: EXIT.INVALID, summary: 'The input is not valid UTF-8.' },
  JSON_LONE_SURROGATE: { exit: EXIT.INVALID, summary: 'A string contains an unpaired UTF-16 surrogate escape.' },
  JSON_SYNTAX: { exit: EXIT.INVALID, summary: 'The input is not well-formed JSON.' },
  JSON_DUPLICATE_KEY: { exit: EXIT.INVALID, summary: 'An object repeats a key.' },
  JSON_NUMBER_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A number is not an unsigned integer up to 18446744073709551615 (no sign, fraction, exponent or leading zero).',
  },
  JSON_TOO_DEEP: { exit: EXIT.INVALID, summary: 'The input nests deeper than the decoder allows.' },
  SCHEMA_UNKNOWN_FIELD: { exit: EXIT.INVALID, summary: 'An object has a field the schema does not declare.' },
  SCHEMA_MISSING_FIELD: { exit: EXIT.INVALID, summary: 'A required field is missing.' },
  SCHEMA_TYPE: { exit: EXIT.INVALID, summary: 'A value has the wrong type or shape.' },
  SCHEMA_BOUND: { exit: EXIT.INVALID, summary: 'A collection, string or number is outside its bound.' },
  SCHEMA_VERSION_UNSUPPORTED: { exit: EXIT.INVALID, summary: 'The version or schema version is not supported.' },
  PATH_INVALID: { exit: EXIT.INVALID, summary: 'A path is not a canonical relative path.' },
  ID_INVALID: { exit: EXIT.INVALID, summary: 'An identifier or digest does not match its pattern.' },

  // --- crypto and keys ---
  KEY_FILE_INVALID: { exit: EXIT.INVALID, summary: 'A key file is malformed.' },
  KEY_FILE_EXISTS: { exit: EXIT.CONFLICT, summary: 'A key file already exists; it is never overwritten.' },
  KEY_PERMISSIONS: { exit: EXIT.INVALID, summary: 'A key file or its directory is accessible to group or others.' },
  KEY_STATE_DIR_IN_WORKSPACE: {
    exit: EXIT.INVALID,
    summary:
      'The collector state directory lies inside an agentscm workspace, where a checkpoint would record the private key; no key was written.',
  },
  SIGNATURE_INVALID: { exit: EXIT.FAILED, summary: 'A signature does not verify under strict Ed25519.' },

  // --- native store ---
  STORE_NOT_INITIALIZED: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The native store does not exist in --data-dir; nothing was created.',
  },
  STORE_SCHEMA_UNSUPPORTED: {
    exit: EXIT.UNAVAILABLE,
    summary: 'A database was written by a newer or unknown schema version.',
  },
  STORE_BUSY: { exit: EXIT.CONFLICT, summary: 'Another writer holds the database; retry after it finishes.' },
  REPOSITORY_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such repository in the native store.' },
  REPOSITORY_EXISTS: { exit: EXIT.CONFLICT, summary: 'A repository with that name already exists.' },
  REVISION_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such revision in the repository.' },
  PATH_NOT_FOUND: { exit: EXIT.INVALID, summary: 'The revision has no file at that path.' },
  CHANGE_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such Change.' },
  CHANGE_CONFLICT: { exit: EXIT.CONFLICT, summary: 'The Change moved on while this operation ran.' },
  TARGET_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such target.' },
  ID_PREFIX_AMBIGUOUS: {
    exit: EXIT.INVALID,
    summary: 'A revision or digest prefix matches more than one stored value; the message gives the count.',
  },
  POLICY_EPOCH_EXHAUSTED: {
    exit: EXIT.FAILED,
    summary: 'The policy epoch is at the u64 maximum and cannot be bumped.',
  },
  STORE_CORRUPT: {
    exit: EXIT.UNAVAILABLE,
    summary:
      'Stored data is damaged: a database file is not SQLite, malformed, or empty although its store is initialized, or stored bytes do not match their recorded digest or size; nothing was re-initialized, changed or returned.',
  },
  DATABASE_ACCESS_DENIED: {
    exit: EXIT.UNAVAILABLE,
    summary:
      'A database, its -wal/-shm files or its directory cannot be opened or written by this user; nothing was changed.',
  },

  // --- workspace ---
  WORKSPACE_NOT_FOUND: { exit: EXIT.UNAVAILABLE, summary: 'The directory is not an initialized agentscm workspace.' },
  WORKSPACE_EXISTS: { exit: EXIT.CONFLICT, summary: 'The directory is already bound to a repository.' },
  WORKSPACE_SCAN_INCOMPLETE: {
    exit: EXIT.FAILED,
    summary: 'The workspace scan hit a bound; nothing was checkpointed.',
  },
  WORKSPACE_CHANGED: { exit: EXIT.CONFLICT, summary: 'The workspace changed while it was being read.' },
  WORKSPACE_OPERATION_PENDING: { exit: EXIT.CONFLICT, summary: 'An earlier workspace operation did not finish.' },
  WORKSPACE_BUSY: {
    exit: EXIT.CONFLICT,
    summary: 'Another command is writing the workspace; retry after it finishes.',
  },
  WORKSPACE_DATA_DIR_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The workspace is bound to a different data directory than the one given.',
  },
  WORKSPACE_STATE_UNSAFE: {
    exit: EXIT.UNAVAILABLE,
    summary:
      'The workspace state directory .agentscm, or a file in it, is a symlink or not a real directory or regular file; nothing was read or written through it.',
  },
  WORKSPACE_LOCK_LOST: {
    exit: EXIT.CONFLICT,
    summary:
      'The workspace lock file was removed or replaced while this command held it; the command stopped before recording anything more.',
  },

  // --- revision trees and workspace paths ---
  WORKSPACE_PATH_NOT_UTF8: {
    exit: EXIT.FAILED,
    summary:
      'A workspace file or directory name is not valid UTF-8, so the scan is incomplete; nothing was registered or checkpointed.',
  },
  STORE_REVISIONS_OUTDATED: {
    exit: EXIT.UNAVAILABLE,
    summary:
      'The store holds revisions of the flat-manifest format that revision trees replaced; it was left unchanged (docs/native-store.md "Stores made before revision trees").',
  },

  // --- skill workflows (definitions, plans, journal, runs, requirements) ---
  WORKFLOW_GRAPH_INVALID: {
    exit: EXIT.INVALID,
    summary: 'Workflow step ids or dependencies are duplicated, unknown or cyclic.',
  },
  WORKFLOW_SKILL_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The skill package is invalid: entrypoint not SKILL.md, resource outside its directory, duplicate, missing or not a regular file.',
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
    summary: 'A command step is reachable but no command runtime was configured (--docker and --docker-socket).',
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
      "The run's repository, revision, policy epoch or skill bytes changed; continuation stopped, recorded observations kept.",
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

  // --- command collector (recipes, review contexts, OCI runtime) ---
  RUNTIME_FLAGS_INVALID: {
    exit: EXIT.INVALID,
    summary: 'The runtime flags are wrong: --docker and --docker-socket go together and the executable must exist.',
  },
  RUNTIME_UNSUPPORTED_PLATFORM: {
    exit: EXIT.UNAVAILABLE,
    summary: 'Command execution needs a Unix host; source-only workflows still run.',
  },
  RUNTIME_UNAVAILABLE: { exit: EXIT.UNAVAILABLE, summary: 'The container engine does not answer on its socket.' },
  RUNTIME_API_UNSUPPORTED: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The container engine speaks no Engine API version this build supports.',
  },
  RUNTIME_API_ERROR: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The container engine answered a request with an unexpected error.',
  },
  IMAGE_NOT_FOUND: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The recipe image is not present in the engine; images are never pulled.',
  },
  RECIPE_DIGEST_MISMATCH: {
    exit: EXIT.CONFLICT,
    summary: 'The recipe bytes in the revision do not match the digest the plan bound.',
  },
  RECIPE_WORKDIR_MISSING: {
    exit: EXIT.INVALID,
    summary: 'The recipe working directory is not a directory of the revision.',
  },
  CONTEXT_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No review context with that digest exists for the repository.' },
  CONTEXT_STALE: {
    exit: EXIT.CONFLICT,
    summary: "The review context no longer binds the Change's current version or the current policy epoch.",
  },
  CONTEXT_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The review context binds a different revision, recipe, toolchain, environment or Change.',
  },
  SNAPSHOT_UNSAFE: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The snapshot parent directory is not owner-private (0700, not a symlink, no symlinked parent).',
  },
  COMMAND_ATTEMPT_NOT_FOUND: {
    exit: EXIT.INVALID,
    summary: 'No command attempt with that ID (or for that run and step).',
  },
  COMMAND_ATTEMPT_RUNNING: {
    exit: EXIT.CONFLICT,
    summary: 'A command attempt is still running (or was interrupted); recover it before continuing.',
  },
  COMMAND_ATTEMPT_CONFLICT: {
    exit: EXIT.CONFLICT,
    summary: 'The retained command attempt was reserved for a different request.',
  },

  // --- agent-owned tasks (contract, registry, state machine) ---
  TASK_BINDING_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'A request, attempt or assertion names a different task, attempt, actor, executor or fence than the one it is bound to.',
  },
  LEASE_INVALID: {
    exit: EXIT.INVALID,
    summary: 'A lease is zero, longer than the maximum, or longer than the requested lease.',
  },
  CRITERION_DUPLICATE: { exit: EXIT.INVALID, summary: 'A result assertion reports one criterion twice.' },
  CRITERION_UNKNOWN: { exit: EXIT.INVALID, summary: 'A result assertion reports a criterion the task does not have.' },
  CRITERION_MISSING: { exit: EXIT.INVALID, summary: 'A result assertion omits a criterion of the task.' },
  CRITERION_CONTROLLER_ONLY: {
    exit: EXIT.INVALID,
    summary: 'A controller-only criterion is reported as anything but not_claimed.',
  },
  ASSERTION_PASS_INELIGIBLE: {
    exit: EXIT.INVALID,
    summary: 'A passed assertion has no eligible required criterion, or a row that did not pass.',
  },
  TRUST_CLASS_INVALID: {
    exit: EXIT.INVALID,
    summary: 'The trust class does not fit the assertion (executor, provenance) or is not accepted here.',
  },
  RECOVERY_ENVELOPE_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A recovery envelope breaks a rule of the Recovery section (disposition, effects, supersession or actions).',
  },
  PUBLIC_KEY_INVALID: {
    exit: EXIT.INVALID,
    summary: 'A public key is not 32 bytes of a valid Ed25519 point, or is of small order.',
  },
  SIGNING_KEY_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The signing key does not match the verification_key_id the observation names.',
  },
  REGISTRATION_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No such executor registration.' },
  REGISTRATION_NOT_CURRENT: {
    exit: EXIT.CONFLICT,
    summary: 'The executor registration is revoked, superseded by re-enrollment, or bound differently.',
  },
  // state machine (src/tasks/)
  TASK_OPERATION_UNKNOWN: {
    exit: EXIT.INVALID,
    summary: 'The agent-task operation name is not one of the capabilities operations.',
  },
  TASK_ACTOR_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The request names another owner/agent than the authenticated actor.',
  },
  TASK_INPUT_CONFLICT: {
    exit: EXIT.INVALID,
    summary:
      'A flag of agent-task call would fill a request field that the document already holds with another value; nothing was run.',
  },
  TASK_NOT_AUTHORIZED: {
    exit: EXIT.INVALID,
    summary: 'The authorization guard refused the actor for this operation; nothing was read or changed.',
  },
  TASK_SUBJECT_REQUIRED: {
    exit: EXIT.INVALID,
    summary: 'The operation derives tasks and needs the Change and review context of the subject.',
  },
  TASK_NOT_FOUND: {
    exit: EXIT.INVALID,
    summary: 'No task with that id (and digest) is derived for the current subject or retained in the journal.',
  },
  TASK_STALE: {
    exit: EXIT.CONFLICT,
    summary:
      'The task or attempt is bound to a subject that is no longer current (Change, context, policy, target or requirement moved).',
  },
  TASK_CONTROLLER_ONLY: {
    exit: EXIT.INVALID,
    summary: 'The task is controller-only (its progression is none); it can be read but never claimed or reported.',
  },
  TASK_ALREADY_CLAIMED: {
    exit: EXIT.CONFLICT,
    summary: 'The task already has an attempt that is not replaced; reconcile it before a fresh claim.',
  },
  TASK_DEPENDENCY_INCOMPLETE: {
    exit: EXIT.CONFLICT,
    summary:
      'A step the task needs is not complete; only the authority or a valid registered observation completes it.',
  },
  TASK_PRIOR_SUBJECT_UNRESOLVED: {
    exit: EXIT.CONFLICT,
    summary: 'An older subject of the same Change, profile and step has an unresolved attempt; reconcile it first.',
  },
  TASK_SCAN_LIMIT: {
    exit: EXIT.CONFLICT,
    summary: 'More than 4096 retained task identities share the scope of the fresh claim; the claim fails closed.',
  },
  TASK_ATTEMPT_LIMIT: { exit: EXIT.CONFLICT, summary: 'The task reached its bound of retained attempts.' },
  TASK_ATTEMPT_NOT_FOUND: {
    exit: EXIT.INVALID,
    summary: 'No retained attempt with that id (and digest) for the task.',
  },
  TASK_FENCE_STALE: {
    exit: EXIT.CONFLICT,
    summary: "The request's fence is not the current fence of the task: the attempt was superseded.",
  },
  TASK_ATTEMPT_NOT_ACTIVE: {
    exit: EXIT.CONFLICT,
    summary: 'The attempt is finished, cancelled or replaced; the operation needs a live attempt.',
  },
  TASK_LEASE_EXPIRED: {
    exit: EXIT.CONFLICT,
    summary: "The attempt's lease expired; it stays uncertain until explicitly reconciled.",
  },
  TASK_EXECUTION_ID_REUSED: {
    exit: EXIT.CONFLICT,
    summary: 'The execution operation id was already used by an attempt of the task; a fresh claim needs a fresh one.',
  },
  TASK_REQUEST_CONFLICT: {
    exit: EXIT.CONFLICT,
    summary: 'The request id was already used by this actor with other bytes or another kind.',
  },
  TASK_JOURNAL_INCONSISTENT: {
    exit: EXIT.FAILED,
    summary: 'A retained task, attempt or outcome does not match its stored digest.',
  },

  // --- grants and collector profiles ---
  GRANT_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No grant with that id in the native store.' },
  GRANT_REVOKED: { exit: EXIT.CONFLICT, summary: 'The grant was revoked; it can be neither rotated nor used again.' },
  GRANT_TOKEN_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The token file does not hold exactly one token (agentscm_ and 43 base64url characters, optionally one newline).',
  },
  GRANT_TOKEN_REJECTED: {
    exit: EXIT.INVALID,
    summary:
      'The token belongs to no live grant: unknown, rotated away, or its grant revoked; nothing was read or changed.',
  },
  GRANT_TOKEN_FILE_EXISTS: {
    exit: EXIT.CONFLICT,
    summary: 'The token file already exists; a token file is never overwritten.',
  },
  GRANT_TOKEN_FILE_UNSAFE: {
    exit: EXIT.INVALID,
    summary:
      'A token file is accessible to group or others, or it or a directory on its path could be replaced by another user (owned by neither you nor root, or writable by group or others without the sticky bit), or the directory of a new token file is not a directory; nothing was read or written.',
  },
  GRANT_NOT_LIVE: {
    exit: EXIT.CONFLICT,
    summary: 'The originating grant was revoked or rotated since the operation began; nothing was changed.',
  },
  COLLECTOR_PROFILE_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No installed collector profile with that id.' },
  COLLECTOR_PROFILE_BINDING_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'The profile names a registration whose repository, workflow profile, step, epoch or key differs from the profile.',
  },
  COLLECTOR_PROFILE_STEP_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The profile step is not a command step of an installed requirement of the repository that binds the profile recipe_digest.',
  },
  COLLECTOR_PROFILE_RECIPE_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The profile recipe is not the recipe its recipe_digest names, decoded.',
  },

  // --- collector transfer and receipts ---
  TRANSFER_TOO_LARGE: {
    exit: EXIT.INVALID,
    summary:
      'A collector transfer envelope, or the total its header declares, exceeds 16 MiB; it was refused before its records were read.',
  },
  TRANSFER_MAGIC_INVALID: {
    exit: EXIT.INVALID,
    summary: 'The input does not start with the 8 bytes AGSCMTR1 of a collector transfer envelope v1.',
  },
  TRANSFER_HEADER_TOO_LARGE: {
    exit: EXIT.INVALID,
    summary: 'The envelope declares a header longer than 65536 bytes; the header was not read.',
  },
  TRANSFER_TRUNCATED: {
    exit: EXIT.INVALID,
    summary: 'The envelope ends before the prefix, header, signature or records its framing declares.',
  },
  TRANSFER_TRAILING_BYTES: { exit: EXIT.INVALID, summary: 'Bytes follow the last record the header declares.' },
  TRANSFER_HEADER_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The transfer header is not strict JSON of the header schema (details.cause_code names the decoding rule).',
  },
  TRANSFER_HEADER_NOT_CANONICAL: {
    exit: EXIT.INVALID,
    summary: 'The transfer header is valid but not its canonical encoding (declared order, compact, exact escapes).',
  },
  TRANSFER_RECORDS_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The header does not list exactly an execution_request record followed by an execution_record, or the records given do not match the list.',
  },
  TRANSFER_SIGNATURE_INVALID: {
    exit: EXIT.INVALID,
    summary: 'The envelope signature does not verify under strict Ed25519 over the header digest with the given key.',
  },
  TRANSFER_KEY_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The envelope verifies under the given key but its header names another verification_key_id.',
  },
  TRANSFER_RECORD_DIGEST_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "A record's bytes do not have the length and SHA-256 its header entry names.",
  },
  RECEIPT_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A v2 receipt breaks a rule beyond its schema: a row shape, a repeated task or step, or a state its task outcomes do not give.',
  },
  QUALIFICATION_ANSWER_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A qualification answer breaks a rule beyond its schema: qualified without a current subject, a receipt or with failures, a receipt digest when not qualified, a superseded subject with tasks, or a task listed twice.',
  },

  // --- collector import ---
  COLLECTOR_CLAIM_PROFILE_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      "The collector profile is not for the task: another repository, workflow profile or step, a step that is not a command step, or a recipe the task's plan does not bind.",
  },
  COLLECTOR_ATTEMPT_NOT_FOUND: {
    exit: EXIT.INVALID,
    summary:
      'No collector claim is retained for that task and attempt (or upload request): the attempt was claimed with `claim`, not `collector_claim`, or never existed.',
  },
  COLLECTOR_ATTEMPT_RESULT_REFUSED: {
    exit: EXIT.INVALID,
    summary:
      'The attempt was claimed with collector_claim: only its imported transfer finishes it, never a result assertion.',
  },
  IMPORT_AUDIENCE_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The transfer header's audience is not this authority's authority_id.",
  },
  IMPORT_UPLOAD_UNKNOWN: {
    exit: EXIT.INVALID,
    summary: "The transfer's upload_request_id names no collector claim of this authority.",
  },
  IMPORT_UPLOAD_CONFLICT: {
    exit: EXIT.CONFLICT,
    summary:
      'Other bytes were already imported under the same upload_request_id; an upload is retried only with its identical retained bytes.',
  },
  IMPORT_REPOSITORY_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The transfer names another repository than the claimed task's.",
  },
  IMPORT_PROFILE_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'The transfer names another collector profile than the claim.',
  },
  IMPORT_TASK_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The transfer's task_id or task_digest is not the claimed task's.",
  },
  IMPORT_ATTEMPT_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The transfer's attempt_id or attempt_digest is not the claimed attempt's.",
  },
  IMPORT_EXECUTION_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The transfer's execution_operation_id is not the claimed attempt's.",
  },
  IMPORT_FENCE_STALE: {
    exit: EXIT.CONFLICT,
    summary:
      "The transfer's fence is not the attempt's, or the attempt was superseded by a reconcile; its evidence can no longer count.",
  },
  IMPORT_ORIGIN_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      "The transfer's origin (actor, grant, generation) is not the one the claim recorded, or the uploading grant is another.",
  },
  IMPORT_ORIGIN_NOT_LIVE: {
    exit: EXIT.CONFLICT,
    summary: 'The originating grant was revoked or rotated since the claim; nothing was imported.',
  },
  IMPORT_EXECUTOR_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The transfer's executor binding is not the claimed attempt's (registration, executor, epoch or key).",
  },
  IMPORT_REGISTRATION_NOT_CURRENT: {
    exit: EXIT.CONFLICT,
    summary:
      'The executor registration the transfer names is revoked or superseded by a newer epoch; nothing was imported.',
  },
  IMPORT_REQUEST_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      "The ExecutionRequest record, or the header's request_digest, is not the request the authority regenerates from the profile's recipe, the exact revision and the context.",
  },
  IMPORT_RUNTIME_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      "The runtime identity the transfer or its request names does not have the profile's runtime_identity_digest.",
  },
  IMPORT_RECORD_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The ExecutionRecord does not decode, names another attempt or request, or its outcome, exit status or output bounds are inconsistent.',
  },
  IMPORT_ISOLATION_VIOLATED: {
    exit: EXIT.INVALID,
    summary:
      "The ExecutionRecord does not show the pinned isolation (network none, read-only source, non-root, no capabilities, the recipe's limits).",
  },
  IMPORT_CLEANUP_UNCONFIRMED: {
    exit: EXIT.INVALID,
    summary: 'The ExecutionRecord does not confirm that the container and snapshot were removed.',
  },
  IMPORT_ATTEMPT_NOT_ACTIVE: {
    exit: EXIT.CONFLICT,
    summary:
      'The claimed attempt is finished, cancelled or replaced by another import or transition; nothing was imported.',
  },

  // --- receipt bundles ---
  RECEIPT_NOT_FOUND: {
    exit: EXIT.INVALID,
    summary: 'No retained v2 receipt has that digest (or a digest starting with that prefix).',
  },
  RECEIPT_BUNDLE_EXISTS: {
    exit: EXIT.CONFLICT,
    summary: 'The --out file of receipt export already exists; it is never overwritten and nothing was written.',
  },
  RECEIPT_BUNDLE_TOO_LARGE: {
    exit: EXIT.INVALID,
    summary:
      'The bundle, or the total its manifest declares, exceeds 537001996 bytes (32 transfers of 16 MiB with manifest and receipt); it was refused before its parts were read.',
  },
  RECEIPT_BUNDLE_MAGIC_INVALID: {
    exit: EXIT.INVALID,
    summary: 'The input does not start with the 8 bytes AGSCMRB1 of a receipt bundle v1.',
  },
  RECEIPT_BUNDLE_TRUNCATED: {
    exit: EXIT.INVALID,
    summary: 'The bundle ends before the prefix, manifest, receipt or envelopes its framing declares.',
  },
  RECEIPT_BUNDLE_TRAILING_BYTES: {
    exit: EXIT.INVALID,
    summary: 'Bytes follow the last envelope the manifest declares.',
  },
  RECEIPT_BUNDLE_MANIFEST_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The bundle manifest is longer than 64 KiB, not strict JSON of its schema, or not its canonical encoding (details.cause_code names the rule).',
  },
  RECEIPT_BUNDLE_VERSION_UNSUPPORTED: {
    exit: EXIT.INVALID,
    summary: 'The bundle manifest has a version this build does not read.',
  },
  RECEIPT_BUNDLE_RECEIPT_INVALID: {
    exit: EXIT.FAILED,
    summary: 'Check receipt_decodes: the bundled receipt is not a valid v2 receipt in its canonical encoding.',
  },
  RECEIPT_BUNDLE_RECEIPT_DIGEST_MISMATCH: {
    exit: EXIT.FAILED,
    summary: 'Check receipt_digest: the bundled receipt bytes do not have the receipt digest the manifest names.',
  },
  RECEIPT_BUNDLE_TRANSFER_SET_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'Check transfer_set: the manifest does not list exactly the transfers the receipt rows name (task and digest, in row order), or the receipt names none.',
  },
  RECEIPT_BUNDLE_REGISTRATION_SET_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'Check registration_set: the bundle does not hold exactly the registrations the receipt rows name, once each in first-row order.',
  },
  RECEIPT_BUNDLE_REGISTRATION_KEY_MISMATCH: {
    exit: EXIT.FAILED,
    summary: "Check registration_key: a registration's verification_key_id is not the SHA-256 of its public key.",
  },
  RECEIPT_BUNDLE_KEY_NOT_PINNED: {
    exit: EXIT.FAILED,
    summary:
      "Check public_key_pinned: --public-key was given and a registration's public key is not one of those values.",
  },
  RECEIPT_BUNDLE_REGISTRATION_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'Check registration_binding: a registration is not scoped to the row it backs (repository, workflow profile, step) or has another epoch or key than the row names.',
  },
  RECEIPT_BUNDLE_TRANSFER_DIGEST_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'Check transfer_digest: a bundled envelope does not have the transfer_digest (SHA-256) its receipt row names.',
  },
  RECEIPT_BUNDLE_TRANSFER_INVALID: {
    exit: EXIT.FAILED,
    summary:
      'Check envelope_framing: a bundled envelope is not a well-formed collector transfer envelope v1 (details.cause_code is the TRANSFER_* code).',
  },
  RECEIPT_BUNDLE_SIGNATURE_INVALID: {
    exit: EXIT.FAILED,
    summary:
      "Check envelope_signature: an envelope signature does not verify under strict Ed25519 with its registration's public key.",
  },
  RECEIPT_BUNDLE_HEADER_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'Check header_binding: a signed transfer header field differs from what the receipt says (details.field names it).',
  },
  RECEIPT_BUNDLE_RECORD_DIGEST_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'Check record_digest: a record of a bundled envelope does not have the length and SHA-256 its signed header names.',
  },
  RECEIPT_BUNDLE_REQUEST_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      "Check request_binding: a signed ExecutionRequest is not the request of the receipt's subject, task and attempt, or not the one its header names (details.field).",
  },
  RECEIPT_BUNDLE_RECORD_INVALID: {
    exit: EXIT.FAILED,
    summary:
      "Check record_valid: a signed ExecutionRecord fails the import's record checks (attempt, request, outcome flags, output bound, isolation, cleanup, image; details.cause_code).",
  },
  RECEIPT_BUNDLE_OUTCOME_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      "Check record_outcome: a signed record's outcome is not the outcome its receipt row names (a passed row needs a passed record).",
  },

  // --- collection ---
  COLLECT_DESCRIPTOR_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'A field of the collector descriptor differs from what the authority holds (details.field names it); nothing ran.',
  },
  COLLECT_ORIGIN_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'The token file authenticates another grant, generation or actor than the origin the descriptor names; nothing ran.',
  },
  COLLECT_KEY_MISMATCH: {
    exit: EXIT.INVALID,
    summary: "The key file's key is not the verification key of the registration the descriptor names; nothing ran.",
  },
  COLLECT_RUNTIME_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      "The runtime identity observed now does not have the collector profile's runtime_identity_digest; nothing was reserved or run.",
  },
  COLLECT_STATE_UNSAFE: {
    exit: EXIT.INVALID,
    summary:
      'The collector state directory or key file is inside a workspace or overlaps the data directory, or the state directory is not an owner-private (0700, no symlink) directory.',
  },
  COLLECT_STATE_CONFLICT: {
    exit: EXIT.CONFLICT,
    summary: 'The state directory already holds another descriptor or envelope under the same upload request id.',
  },
  COLLECT_STATE_CORRUPT: {
    exit: EXIT.FAILED,
    summary: 'A file of the collector state directory is larger than it can be.',
  },
  COLLECT_INTERRUPTED: {
    exit: EXIT.FAILED,
    summary:
      'The collection was reserved but retains no signed envelope (an earlier collect stopped while the command ran or before it signed); it is never run again.',
  },
  COLLECT_NOT_RETAINED: {
    exit: EXIT.INVALID,
    summary: 'The state directory retains no signed envelope for that upload request id.',
  },
  UPLOAD_ENDPOINT_INVALID: {
    exit: EXIT.INVALID,
    summary: '--endpoint is not an http(s) URL of a hub agent-tasks route without credentials, query or fragment.',
  },
  UPLOAD_ROUTE_MISSING: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The hub answered 404 for its collector upload route; the envelope stays retained.',
  },
  UPLOAD_UNAVAILABLE: {
    exit: EXIT.UNAVAILABLE,
    summary: 'The hub could not be reached or did not answer in time; the envelope stays retained.',
  },
  UPLOAD_REFUSED: {
    exit: EXIT.FAILED,
    summary:
      'The hub refused the upload with a status and no error code this build knows; the envelope stays retained.',
  },
  UPLOAD_ANSWER_INVALID: {
    exit: EXIT.FAILED,
    summary: "The hub's answer to an upload is larger than 512 KiB or not strict JSON.",
  },

  // --- review (finite review controller, transports, replay) ---
  REVIEW_COVERAGE_OUTSIDE_POLICY: {
    exit: EXIT.INVALID,
    summary:
      'A coverage path of the review action lies outside every exposure prefix of its review policy; nothing was reserved or called.',
  },
  REVIEW_TRANSPORT_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The review transport cannot be built: the executable is not an absolute path to a regular executable file, the working directory is not owner-private, an environment name is malformed, or the model or provider scope is invalid.',
  },
  REVIEW_TRANSPORT_NOT_QUALIFIED: {
    exit: EXIT.INVALID,
    summary:
      'The review transport basis is fixture (tests only) or not the claude-code identity that is pinned; installation, import and admission refuse it.',
  },
  REVIEW_JOURNAL_MISMATCH: {
    exit: EXIT.FAILED,
    summary:
      'The review journal retains, for this review and call index, another request or ticket than the controller derives now; nothing was called.',
  },
  REVIEW_REPLAY_REQUEST_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'Replay: a request the controller derives differs from the recorded request of the same call (changed, reordered or missing call); the record is refused.',
  },
  REVIEW_REPLAY_RESPONSE_TAMPERED: {
    exit: EXIT.INVALID,
    summary: 'Replay: a recorded response does not have its recorded SHA-256 or byte length; the record is refused.',
  },
  REVIEW_REPLAY_TRACE_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'Replay: the record holds more or fewer calls than the controller makes, or its requests do not match its calls; the record is refused.',
  },
  REVIEW_REPLAY_RECORD_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'Replay: the record the controller derives from the recorded responses is not byte-identical to the imported record (coverage, findings, outcome or usage differ); the record is refused.',
  },
  REVIEW_PROFILE_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      'A review record names another transport (basis, executable digest, provider scope, model), policy, coverage, budget or repository than its finite-review profile pins (details.field names it).',
  },
  REVIEW_STEP_INVALID: {
    exit: EXIT.INVALID,
    summary: 'A review step names a policy that is not a declared skill resource; no plan was compiled.',
  },
  ADMISSION_REVIEW_REQUIRED: {
    exit: EXIT.FAILED,
    summary:
      'A required review step of the subject has no passed review record in a completed server-executed run of its exact plan (missing, failed, incomplete or uncertain); nothing was approved or landed.',
  },
  REVIEW_RUNTIME_NOT_CONFIGURED: {
    exit: EXIT.UNAVAILABLE,
    summary:
      'A review step is reachable but no review transport was configured (--review-executable, --review-model, --review-provider-scope, --review-state-dir); a new run is refused before anything is created.',
  },

  // --- agent-state (envelope, operations, observed runs) ---
  AGENT_STATE_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'An agent-state envelope or operation input breaks a rule beyond its schema (blocked reason, result, duplicate scope or agent).',
  },
  AGENT_STATE_MISMATCH: {
    exit: EXIT.INVALID,
    summary: 'Observations given to reconcile name different agents, backends or tasks.',
  },
  AGENT_STATE_CONFLICT: {
    exit: EXIT.CONFLICT,
    summary: 'Two observations of equal authority and revision disagree; reconcile cannot choose.',
  },
  AGENT_STATE_HOOK_SETTINGS_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A Claude Code settings or Codex hooks file is not a JSON object agentscm can rewrite exactly; it was not changed.',
  },
  GIT_DIR_UNTRUSTED: {
    exit: EXIT.INVALID,
    summary:
      "The repository's .git is not a plain directory owned by the caller (a symlink, a gitdir file, another owner) or its config is not a regular file owned by the caller; no further git command ran there and nothing was started.",
  },

  // --- hooks ---
  HOOK_PAYLOAD_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The Stop hook input on stdin is not a Claude Code or Codex Stop payload (strict JSON; Codex: its input schema); the hook exits 1, which the client treats as non-blocking, and did nothing.',
  },
  HOOK_COUNTER_UNAVAILABLE: {
    exit: EXIT.FAILED,
    summary:
      "The Stop hook's continuation counter cannot be read, parsed or written; the hook exits 1 (non-blocking) and did none of its work.",
  },
  HOOK_SETTINGS_INVALID: {
    exit: EXIT.INVALID,
    summary:
      "A Claude Code settings or Codex hooks file is not a JSON object valid under the client's schema that agentscm can rewrite exactly; install-stop did not change it.",
  },
  HOOK_QUALIFICATION_FAILED: {
    exit: EXIT.UNAVAILABLE,
    summary:
      "The agent-owned Stop hook's qualification request failed: the service is offline or unreachable, did not answer within 30 seconds, or answered an error other than 401/403; the hook blocks.",
  },
  HOOK_TOKEN_REJECTED: {
    exit: EXIT.FAILED,
    summary:
      "The service answered the agent-owned Stop hook's qualification request with 401 or 403 (the grant was revoked or rotated, or does not cover the repository); the hook blocks.",
  },
  HOOK_ANSWER_MALFORMED: {
    exit: EXIT.FAILED,
    summary:
      "The service's answer to the agent-owned Stop hook is not a valid qualification answer (larger than its bound, not strict JSON, not the agent-tasks envelope, or breaking the answer's rules); the hook blocks.",
  },
  INSTRUCTION_BLOCK_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'An instruction file (AGENTS.md, .cursor/rules/agentscm.mdc, .github/copilot-instructions.md) has unbalanced or repeated agentscm markers, or is not a regular file; no instruction file was changed.',
  },

  // --- hub ---
  HUB_CONFIG_DATA_DIR_RELATIVE: {
    exit: EXIT.INVALID,
    summary:
      'A profile of the hub execution config names a data_dir that is not an absolute path; the hub did not start.',
  },
  HUB_CONFIG_PROFILE_DUPLICATE: {
    exit: EXIT.INVALID,
    summary:
      'Two profiles of the hub execution config have the same repository_id and profile_id; the hub did not start.',
  },
  HUB_CONFIG_LISTEN_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The listen address of the hub execution config is not HOST:PORT with an IP address and a port from 0 to 65535; the hub did not start.',
  },
  HUB_CONFIG_FORGE_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A profile of the hub execution config publishes forge status without a usable forge (missing forge, relative or unreadable or non-private token file, base URL with credentials, query or fragment) or names a forge without publish_forge_status; the hub did not start.',
  },
  FORGE_LINK_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'The forge link names a project or commit SHA the forge cannot have (GitHub: OWNER/NAME; GitLab: a project path or numeric ID; SHA: 40 or 64 lowercase hex digits); nothing was linked.',
  },
  HUB_PROFILE_UNAVAILABLE: {
    exit: EXIT.UNAVAILABLE,
    summary:
      "A profile's data_dir holds no native store, or the store has no repository native_repository; the hub did not start. At run time: a configured store could not be read to authenticate a request (HTTP 503); the answer names no path, the hub's log has the reason.",
  },
  HUB_AUTH_REQUIRED: {
    exit: EXIT.INVALID,
    summary:
      'The request has no Authorization: Bearer header with one grant token (HTTP 401); nothing was read or changed.',
  },
  HUB_GRANT_SCOPE_MISMATCH: {
    exit: EXIT.INVALID,
    summary:
      "The grant's scope does not allow this endpoint: reader grants reach only the legacy /mcp endpoint and the dashboard's read-only routes, agent grants only the task routes (HTTP 403).",
  },
  HUB_ROUTE_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No hub route has this method and path (HTTP 404).' },
  HUB_PROFILE_NOT_FOUND: {
    exit: EXIT.INVALID,
    summary: "The repository and profile of the request are not an agent task profile of the hub's config (HTTP 404).",
  },
  HUB_BODY_TOO_LARGE: {
    exit: EXIT.INVALID,
    summary:
      "The request body is larger than the route's bound (512 KiB for JSON routes); it was refused before being buffered (HTTP 413).",
  },
  HUB_UPLOAD_BUSY: {
    exit: EXIT.UNAVAILABLE,
    summary:
      'The hub is already reading as many collector uploads as it allows at once; nothing was read or changed; retry after the seconds Retry-After gives (HTTP 503).',
  },
  HUB_REQUIREMENT_CHANGED: {
    exit: EXIT.CONFLICT,
    summary:
      "The target's installed requirement is no longer the requirement_digest the profile pins; nothing was read or changed (HTTP 409).",
  },
  HUB_QUERY_INVALID: {
    exit: EXIT.INVALID,
    summary:
      'A query parameter of a dashboard route is unknown, repeated or out of range (limit, cursor, change); nothing was read (HTTP 400).',
  },

  // --- doctor ---
  DOCTOR_FAILED: {
    exit: EXIT.FAILED,
    summary:
      'agentscm doctor found at least one failing check; its findings (each with a code and a fix, docs/doctor.md) are the answer, on stdout.',
  },

  // --- admission (approval and landing) ---
  ADMISSION_SUBJECT_STALE: {
    exit: EXIT.CONFLICT,
    summary:
      'The subject to approve or land is no longer current (a newer Change version, another policy epoch, context or target requirement), or the newest approval names an older version; nothing was approved or landed.',
  },
  ADMISSION_NOT_QUALIFIED: {
    exit: EXIT.FAILED,
    summary:
      'The current subject does not qualify (the message names the qualification failure codes and the next step); nothing was approved or landed.',
  },
  ADMISSION_AUTHORIZATION_CHANGED: {
    exit: EXIT.FAILED,
    summary:
      'The origin grant or the executor registration of an imported task no longer passes the live checks (revoked, rotated, re-enrolled) since its receipt; nothing was approved or landed.',
  },
  ADMISSION_PROFILE_CHANGED: {
    exit: EXIT.FAILED,
    summary:
      "An imported task's collector profile is no longer the current profile of its step (a newer profile was installed, or its registration is not current); nothing was approved or landed.",
  },
  ADMISSION_COMMAND_REQUIRED: {
    exit: EXIT.FAILED,
    summary:
      "A command step bound to the subject's command/v1 context has no exact successful command (native or imported), optional or not; nothing was approved or landed.",
  },
  APPROVAL_NOT_FOUND: {
    exit: EXIT.FAILED,
    summary: 'No approval binds the exact current subject and the receipt that qualifies it now; nothing was landed.',
  },
  LAND_BASE_MISMATCH: {
    exit: EXIT.CONFLICT,
    summary:
      "The target's current revision is not the base the Change's revision descends from (another landing moved it), or the target already is at that revision; nothing was landed.",
  },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorOptions {
  /** What the user should do next; shown after the message. */
  readonly hint?: string;
  readonly cause?: unknown;
  /** Machine-readable detail for --json output (bounded, no secrets, no paths of secrets). */
  readonly details?: Record<string, unknown>;
}

/** The single error class of the project. */
export class AgentscmError extends Error {
  override readonly name = 'AgentscmError';
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  get exitCode(): ExitCode {
    return ERROR_CODES[this.code].exit;
  }
}

export function isAgentscmError(value: unknown): value is AgentscmError {
  return value instanceof AgentscmError;
}

/** Exit code for any thrown value: known codes map through the table, anything else is INTERNAL. */
export function exitCodeOf(error: unknown): ExitCode {
  return isAgentscmError(error) ? error.exitCode : ERROR_CODES.INTERNAL.exit;
}
