/**
 * Generates examples/agent-tasks/: one valid request body per agent-task operation that takes
 * one, and the README that says how to send each with `agentscm agent-task call`.
 *
 *   npm run examples:agent-tasks                      (rewrites the files of this folder)
 *   npm run examples:agent-tasks -- --out DIR         (writes them to DIR instead)
 *   npm run examples:agent-tasks -- --store DIR       (also leaves a fresh demo store in DIR,
 *                                                      with a grant's token file, to try them on)
 *
 * The bodies are reproducible: they are derived from a demo store whose every input is fixed —
 * the repository ID, the file contents (the quickstart's container check), the Change, the
 * installed requirement, the enrolled public key (RFC 8032 test 1, a published key: never use it
 * for anything real) and the actor. Task ids and digests are digests of that subject, attempt
 * ids and digests digests of the claim, and no body holds a time. The generator runs the whole
 * walk through the facade against a real store, so every body it writes was accepted in order;
 * test/examples/agent-tasks.test.ts regenerates them, holds the committed files to the result,
 * decodes each strictly and runs them through the real CLI.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { collectorProfileId, decodeCollectorProfile } from '../../src/contracts/collector/profile.js';
import { encodeCanonical, formatJson } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../../src/contracts/json/json-value.js';
import type { AgentRef } from '../../src/contracts/task/common.js';
import { putSmallBlob } from '../../src/native/blobs.js';
import { appendChangeVersion } from '../../src/native/changes.js';
import { enrollExecutor } from '../../src/native/executor-registry.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { createGrant } from '../../src/native/grants.js';
import { createRepository } from '../../src/native/repositories.js';
import { createReviewContext } from '../../src/native/review-contexts.js';
import { comparePaths, recordRevision, type RevisionEntry } from '../../src/native/revisions.js';
import { createAuthority, writeTransaction, type Authority } from '../../src/native/store.js';
import { setTarget } from '../../src/native/targets.js';
import { installCollectorProfile } from '../../src/tasks/collector/profiles.js';
import type { TaskContext } from '../../src/tasks/context.js';
import { callTaskOperation } from '../../src/tasks/facade.js';
import { authorizeTaskToken } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';
import { installRequirementFile } from '../../src/workflows/requirement.js';

export const EXAMPLES_DIR = dirname(fileURLToPath(import.meta.url));

/** The fixed inputs of the demo store. */
export const DEMO = {
  repositoryId: 'de000000000000000000000000a9e175',
  repositoryName: 'demo',
  change: 'demo-1',
  profile: 'default',
  target: 'main',
  actor: { owner_id: 'demo', agent_id: 'agent-1' } as AgentRef,
  executor: 'demo-box',
  /** RFC 8032 section 7.1, TEST 1 public key: a published key, for examples only. */
  publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  /**
   * The runtime identity the demo collector profile pins. A stand-in: a real profile pins what
   * `agentscm agent-task runtime-probe` reports for the operator's runtime.
   */
  runtimeIdentity: createHash('sha256').update('agentscm example runtime identity').digest('hex'),
  skillPath: 'skills/container-check/SKILL.md',
  runnerPath: 'skills/container-check/runner.json',
} as const;

const SKILL_TEXT =
  '---\nname: container-check\ndescription: check the greeting inside an isolated container\n---\n\nRun runner.json.\n';
const RUNNER_TEXT = `${JSON.stringify(
  {
    version: 1,
    image: 'local/busybox:1',
    argv: ['sh', '-c', 'grep -q Welcome src/greet.js && echo src/greet.js has the new greeting'],
    env: {},
    workdir: '.',
    timeout_ms: 20000,
    limits: { memory_bytes: 67108864, pids: 64, cpu_millis: 1000, output_bytes: 65536, scratch_bytes: 1048576 },
    toolchain: 'busybox-1',
    environment: 'posix-sh-offline',
  },
  null,
  2,
)}\n`;

/** The demo repository's one revision: the quickstart's edited greeting and its container check. */
export const DEMO_FILES: Readonly<Record<string, string>> = {
  'package.json': '{\n  "name": "demo",\n  "private": true,\n  "type": "module"\n}\n',
  'src/greet.js':
    '// Builds the greeting; the quickstart edits this file.\nexport function greet(name) {\n  return `Hello, ${name}! Welcome to agentscm.`;\n}\n',
  [DEMO.skillPath]: SKILL_TEXT,
  [DEMO.runnerPath]: RUNNER_TEXT,
};

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface DemoStore {
  readonly dataDir: string;
  readonly repository: string;
  readonly revision: string;
  readonly contextDigest: string;
  readonly registrationId: string;
  /** The executor binding of the demo registration (step lint). */
  readonly executor: JsonObject;
  /**
   * The collector profile for step lint, written to `profileFile` and installed only before
   * collector-claim.json: while it is installed, a plain claim of lint is refused
   * (TASK_COLLECTOR_CLAIM_REQUIRED), and the walk first shows the executor's own claim.
   */
  readonly collectorProfileId: string;
  readonly profileFile: string;
  /** The token file of the demo actor's agent grant. */
  readonly tokenFile: string;
}

/**
 * Build the demo store in `dataDir` (created; the requirement and collector profile files it
 * installs are written beside it): repository, revision, target main, Change demo-1
 * with its command/v1 review context, the requirement of target main with two command steps
 * (`greeting`, `lint`), the demo key enrolled for step `lint` with a collector profile for that
 * registration, and an agent grant for the demo
 * actor whose token file goes to `tokenFile`.
 */
export function buildDemoStore(dataDir: string, tokenFile: string): DemoStore {
  mkdirSync(dataDir, { recursive: true });
  const withAuthority = <T>(fn: (auth: Authority) => T): T => {
    const auth = createAuthority(dataDir);
    try {
      return fn(auth);
    } finally {
      auth.close();
    }
  };
  const built = withAuthority((auth) =>
    writeTransaction(auth, () => {
      createRepository(auth, DEMO.repositoryName, DEMO.repositoryId);
      const entries: RevisionEntry[] = Object.entries(DEMO_FILES).map(([path, text]) => {
        const bytes = Buffer.from(text, 'utf8');
        const blob = sha256(text);
        putSmallBlob(auth, bytes, blob);
        return { path, mode: 'file' as const, size: BigInt(bytes.byteLength), blob };
      });
      entries.sort((a, b) => comparePaths(a.path, b.path));
      const { id: revision } = recordRevision(auth, DEMO.repositoryId, null, entries);
      setTarget(auth, DEMO.repositoryId, DEMO.target, revision);
      appendChangeVersion(auth, DEMO.repositoryId, DEMO.change, {
        expectedCurrent: null,
        revision,
        baseRevision: null,
      });
      const context = createReviewContext(auth, {
        repository: DEMO.repositoryId,
        changeId: DEMO.change,
        runnerPath: DEMO.runnerPath,
      });
      return { revision, contextDigest: context.context_digest };
    }),
  );
  const commandStep = (id: string): JsonObject => ({
    id,
    needs: [],
    required: true,
    action: {
      kind: 'command',
      runner: 'runner.json',
      change: { repository: DEMO.repositoryId, id: DEMO.change },
      change_version: 1,
      context_digest: built.contextDigest,
    },
  });
  const definition: JsonObject = {
    version: 1,
    name: 'demo-checks',
    source: { repository: DEMO.repositoryId, revision: built.revision, policy_epoch: 0 },
    skill: { entrypoint: DEMO.skillPath, resources: [DEMO.runnerPath] },
    steps: [commandStep('greeting'), commandStep('lint')],
  };
  const definitionFile = join(dirname(dataDir), 'demo-requirement.json');
  writeFileSync(definitionFile, `${formatJson(definition)}\n`);
  withStore(dataDir, 'write', (store) => installRequirementFile(store, { target: DEMO.target, file: definitionFile }));
  return withAuthority((auth) => {
    const enrollment = enrollExecutor(auth, {
      repository: DEMO.repositoryId,
      profile: DEMO.profile,
      step: 'lint',
      executor: DEMO.executor,
      public_key: DEMO.publicKey,
    });
    createGrant(auth, {
      repository: DEMO.repositoryId,
      actor: DEMO.actor,
      scope: 'agent',
      tokenFile,
      nowMs: Date.now(),
    });
    const profile: JsonObject = {
      version: 1,
      kind: 'command',
      repository_id: DEMO.repositoryId,
      workflow_profile: DEMO.profile,
      step_id: 'lint',
      registration_id: enrollment.registration_id,
      registration_epoch: enrollment.registration_epoch,
      verification_key_id: enrollment.verification_key_id,
      recipe: JSON.parse(RUNNER_TEXT) as JsonObject,
      recipe_digest: sha256(RUNNER_TEXT),
      runtime_identity_digest: DEMO.runtimeIdentity,
    };
    const profileFile = join(dirname(dataDir), 'demo-collector-profile.json');
    writeFileSync(profileFile, `${formatJson(profile)}\n`);
    return {
      dataDir,
      repository: DEMO.repositoryId,
      revision: built.revision,
      contextDigest: built.contextDigest,
      registrationId: enrollment.registration_id,
      collectorProfileId: collectorProfileId(decodeCollectorProfile(readFileSync(profileFile))),
      profileFile,
      executor: {
        registration_id: enrollment.registration_id,
        executor_id: enrollment.executor_id,
        registration_epoch: enrollment.registration_epoch,
        verification_key_id: enrollment.verification_key_id,
      },
      tokenFile,
    };
  });
}

/** One example body: its file, the operation it is sent to, and the answer it gets in the walk. */
export interface Example {
  readonly file: string;
  readonly operation: string;
  /** The member of the answer that says what happened, and its value in the walk. */
  readonly expect: { readonly member: string; readonly value: string };
  /** `--executor REGISTRATION_ID` may fill its executor (docs/agent-tasks.md "Filling agent and executor"). */
  readonly executorBound: boolean;
  readonly body: JsonObject;
  readonly purpose: string;
}

function member(answer: JsonValue, name: string): JsonValue {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    throw new Error(`not an object answer: ${String(answer)}`);
  return (answer as JsonObject)[name] as JsonValue;
}

/**
 * Run the demo walk against `store` through the facade, in order, and return the bodies it
 * sent. Each body is built from the answers before it, so every id in it is one the service
 * issued; each answer is checked against the example's expectation.
 */
export function runDemoWalk(store: DemoStore): Example[] {
  // As `agent-task call` runs them: as the actor of the demo grant, under its guard and origin.
  const grant = authorizeTaskToken({
    store: openStore(store.dataDir, { mode: 'write' }),
    token: readTokenFile(store.tokenFile),
  });
  const ctx: TaskContext = {
    store: openStore(store.dataDir, { mode: 'write' }),
    actor: grant.actor,
    repository: grant.repository,
    profile: DEMO.profile,
    target: DEMO.target,
    subject: { change_id: DEMO.change, context_digest: store.contextDigest },
    guard: grant.guard,
    origin: grant.origin,
  };
  const examples: Example[] = [];
  const send = (example: Omit<Example, 'body'> & { body: JsonObject }): JsonValue => {
    const answer = callTaskOperation(ctx, example.operation, encodeCanonical(example.body));
    const got = member(answer, example.expect.member);
    if (got !== example.expect.value)
      throw new Error(`${example.file}: ${example.expect.member} is ${String(got)}, expected ${example.expect.value}`);
    examples.push(example);
    return answer;
  };
  const agent: JsonObject = { owner_id: DEMO.actor.owner_id, agent_id: DEMO.actor.agent_id };
  const requirements = callTaskOperation(ctx, 'requirements', null);
  const task = (step: string): { task_id: string; task_digest: string } => {
    const row = (member(requirements, 'tasks') as JsonObject[]).find((t) => t.step_id === step);
    if (row === undefined) throw new Error(`no task for step ${step}`);
    return { task_id: row.task_id as string, task_digest: row.task_digest as string };
  };
  const greeting = task('greeting');
  const lint = task('lint');

  send({
    file: 'instructions.json',
    operation: 'instructions',
    expect: { member: 'status', value: 'entrypoint' },
    executorBound: false,
    purpose: 'the entrypoint of the `greeting` task: summary, criteria and named references',
    body: { version: 1, task_id: greeting.task_id, supported_schema_versions: [1] },
  });
  send({
    file: 'reference.json',
    operation: 'reference',
    expect: { member: 'status', value: 'available' },
    executorBound: false,
    purpose: 'the named reference `skill` (SKILL.md) of the task, by its expected SHA-256',
    body: {
      version: 1,
      task_id: greeting.task_id,
      task_digest: greeting.task_digest,
      name: 'skill',
      expected_sha256: sha256(SKILL_TEXT),
      expected_schema_version: 1,
      agent,
    },
  });
  const claimBody: JsonObject = {
    version: 1,
    request_id: 'demo-claim-1',
    task_id: greeting.task_id,
    task_digest: greeting.task_digest,
    execution_operation_id: 'demo-run-1',
    agent,
    executor: null,
    requested_lease_ms: 3_600_000,
  };
  const claimed = send({
    file: 'claim.json',
    operation: 'claim',
    expect: { member: 'status', value: 'claimed' },
    executorBound: true,
    purpose: 'claim the `greeting` task as an agent (no executor), with a one-hour lease',
    body: claimBody,
  });
  const attempt = (answer: JsonValue): JsonObject => {
    const a = member(answer, 'attempt') as JsonObject;
    return {
      task_id: member(answer, 'task_id'),
      task_digest: member(answer, 'task_digest'),
      attempt_id: a.attempt_id as string,
      attempt_digest: member(answer, 'attempt_digest'),
      execution_operation_id: a.execution_operation_id as string,
      agent,
      executor: a.executor as JsonValue,
      fence: a.fence as JsonValue,
    };
  };
  const first = attempt(claimed);
  const { task_id, task_digest, attempt_id, attempt_digest, execution_operation_id, fence } = first;
  send({
    file: 'heartbeat.json',
    operation: 'heartbeat',
    expect: { member: 'status', value: 'renewed' },
    executorBound: true,
    purpose: "renew the claimed attempt's lease (fence 1)",
    body: {
      version: 1,
      request_id: 'demo-heartbeat-1',
      action: 'heartbeat',
      task_id,
      task_digest,
      attempt_id,
      attempt_digest,
      execution_operation_id,
      agent,
      executor: null,
      fence,
      reason: null,
    } as JsonObject,
  });
  const result: JsonObject = {
    version: 1,
    task_id,
    task_digest,
    attempt_id,
    attempt_digest,
    request_id: 'demo-result-1',
    execution_operation_id,
    agent,
    executor: null,
    fence,
    trust_class: 'agent_assertion',
    outcome: 'passed',
    criteria: [
      {
        criterion: 'command',
        outcome: 'passed',
        findings: ['src/greet.js has the new greeting'],
        evidence_digests: [],
      },
    ],
    executor_provenance: null,
  } as JsonObject;
  send({
    file: 'result.json',
    operation: 'result',
    expect: { member: 'status', value: 'retained' },
    executorBound: true,
    purpose: 'report an agent assertion for the attempt: retained, never qualifying',
    body: result,
  });
  send({
    file: 'status.json',
    operation: 'status',
    expect: { member: 'state', value: 'finished' },
    executorBound: false,
    purpose: 'read the attempt back (an exact-attempt read: no request id, no effect)',
    body: { version: 1, task_id, task_digest, attempt_id, attempt_digest } as JsonObject,
  });
  send({
    file: 'recovery.json',
    operation: 'recovery',
    expect: { member: 'disposition', value: 'confirmed' },
    executorBound: true,
    purpose: 'ask whether the result committed (the exact original request, wrapped): confirmed',
    body: { version: 1, request_kind: 'result', request: result },
  });
  const lintClaimed = send({
    file: 'claim-executor.json',
    operation: 'claim',
    expect: { member: 'status', value: 'claimed' },
    executorBound: true,
    purpose: 'claim the `lint` task for the enrolled executor `demo-box` (its current registration)',
    body: {
      version: 1,
      request_id: 'demo-claim-2',
      task_id: lint.task_id,
      task_digest: lint.task_digest,
      execution_operation_id: 'demo-run-2',
      agent,
      executor: store.executor,
      requested_lease_ms: 3_600_000,
    },
  });
  const second = attempt(lintClaimed);
  send({
    file: 'cancel.json',
    operation: 'cancel',
    expect: { member: 'status', value: 'cancelled' },
    executorBound: true,
    purpose: 'cancel the `lint` attempt: it stays uncertain until it is reconciled',
    body: {
      version: 1,
      request_id: 'demo-cancel-1',
      action: 'cancel',
      ...second,
      reason: 'stopped before the check ran',
    } as JsonObject,
  });
  send({
    file: 'reconcile.json',
    operation: 'reconcile',
    expect: { member: 'status', value: 'reconciled' },
    executorBound: true,
    purpose:
      'supersede the cancelled attempt: it becomes replaced and the task can be claimed again with a fresh execution id',
    body: {
      version: 1,
      request_id: 'demo-reconcile-1',
      action: 'reconcile',
      ...second,
      reason: 'the cancelled run is known to have stopped',
    } as JsonObject,
  });
  // The operator installs the collector profile of lint (agentscm agent-task profile install FILE).
  installCollectorProfile(ctx.store.authority(), decodeCollectorProfile(readFileSync(store.profileFile)), Date.now());
  const collectorClaimed = send({
    file: 'collector-claim.json',
    operation: 'collector_claim',
    expect: { member: 'status', value: 'collector_claimed' },
    executorBound: false,
    purpose:
      "claim the `lint` task again, now under its collector profile (the executor is the profile's registration); the answer carries the collector descriptor",
    body: {
      version: 1,
      request_id: 'demo-claim-3',
      agent,
      collector_profile_id: store.collectorProfileId,
      task_id: lint.task_id,
      task_digest: lint.task_digest,
      execution_operation_id: 'demo-run-3',
      requested_lease_ms: 3_600_000,
    },
  });
  send({
    file: 'collector-descriptor.json',
    operation: 'collector_descriptor',
    expect: { member: 'collector_profile_id', value: store.collectorProfileId },
    executorBound: false,
    purpose: 'read the descriptor of that collector claim again, exactly as the claim answered it',
    body: {
      version: 1,
      agent,
      task_id: lint.task_id,
      attempt_id: (member(collectorClaimed, 'attempt') as JsonObject).attempt_id as string,
    },
  });
  send({
    file: 'collector-finalize.json',
    operation: 'collector_finalize',
    expect: { member: 'status', value: 'incomplete' },
    executorBound: false,
    purpose:
      'ask for the receipt of the subject: incomplete until every required task has an imported passing transfer',
    body: { version: 1, agent },
  });
  return examples;
}

function readme(store: DemoStore, examples: readonly Example[]): string {
  const rows = examples
    .map(
      (e) =>
        `| ${e.operation} | [\`${e.file}\`](${e.file}) | ${e.purpose} | \`${e.expect.member}: ${e.expect.value}\` |`,
    )
    .join('\n');
  return `# Example agent-task request bodies

Generated by \`npm run examples:agent-tasks\` (\`generate.ts\`); do not edit by hand.
\`test/examples/agent-tasks.test.ts\` regenerates them and fails when a committed file differs,
decodes each with its operation's strict decoder, and sends them in this order through
\`agentscm agent-task call\` against a fresh demo store, checking each answer.

Each body is sent with

\`\`\`
agentscm --data-dir D agent-task call OPERATION --input FILE --token-file F \\
    --change ${DEMO.change} --context ${store.contextDigest} --json
\`\`\`

where \`F\` is the token file of an agent grant (\`agentscm grant create\`). \`capabilities\`,
\`requirements\`, \`next\` and \`qualification\` take no body (no \`--input\`); \`next\` names the
task to claim.
The operations and their answers are described in docs/agent-tasks.md.

| operation | body | what it does | the answer says |
|---|---|---|---|
${rows}

## Trying them

\`npm run examples:agent-tasks -- --store DIR\` also leaves a fresh demo store in \`DIR/agentscm-data\`
with an agent grant for the actor \`${DEMO.actor.owner_id}/${DEMO.actor.agent_id}\` in \`DIR/agent-1.token\`;
the bodies above, sent in order, get exactly the answers listed. The demo store is fixed:
repository \`${DEMO.repositoryName}\` (ID \`${DEMO.repositoryId}\`), one revision holding the quickstart's
container check (\`${DEMO.skillPath}\`, \`${DEMO.runnerPath}\`), Change \`${DEMO.change}\` with its
review context, and the requirement of target \`${DEMO.target}\` with two command steps,
\`greeting\` and \`lint\`; executor \`${DEMO.executor}\` is enrolled for \`lint\` with the published
RFC 8032 test key (registration \`${store.registrationId}\`). Collector profile
\`${store.collectorProfileId}\` (\`demo-collector-profile.json\` beside the data directory: that
registration, the recipe and a stand-in runtime identity, so the descriptor can be claimed and
read, but not collected) is installed just before \`collector-claim.json\`, with
\`agentscm agent-task profile install demo-collector-profile.json\`: once a step has a collector
profile, a plain claim of it is refused (\`TASK_COLLECTOR_CLAIM_REQUIRED\`), so the executor's own
claim, cancel and reconcile come first. Never enroll that key anywhere else.

## On your own store

The ids in these bodies are digests of the demo subject; on another store substitute:

| field | where it comes from |
|---|---|
| \`task_id\`, \`task_digest\` | the \`next\` (or \`requirements\`) answer for your Change and context |
| \`attempt_id\`, \`attempt_digest\`, \`execution_operation_id\`, \`fence\` | the \`claim\` answer (\`attempt\`, \`attempt_digest\`) |
| \`request_id\`, a claim's \`execution_operation_id\` | chosen by you: fresh for every new request; an identical retry reuses them |
| \`collector_profile_id\` | \`agentscm agent-task profile install\` (or \`profile show\`) |
| \`expected_sha256\` of a reference | the \`references\` of the \`instructions\` answer |
| \`criteria\` of a result | one row per criterion of the \`instructions\` answer |
| \`agent\` | leave it out: \`agent-task call\` fills it with the actor of the grant behind \`--token-file\` |
| \`executor\` | \`null\` for an agent's own attempt; or leave it out and pass \`--executor REGISTRATION_ID\` (from \`agentscm agent-task registration list\`), which fills the registration's current binding |

A body that names another \`agent\` than the grant's actor is refused (\`TASK_ACTOR_MISMATCH\`),
and \`--executor\` beside a body whose \`executor\` differs is refused (\`TASK_INPUT_CONFLICT\`);
docs/agent-tasks.md "Filling agent and executor".
`;
}

/** Write every example body and the README into `outDir`; returns the file names written. */
export function generateExamples(outDir: string): string[] {
  const work = mkdtempSync(join(tmpdir(), 'agentscm-examples-'));
  try {
    const store = buildDemoStore(join(work, 'agentscm-data'), join(work, 'agent-1.token'));
    const examples = runDemoWalk(store);
    mkdirSync(outDir, { recursive: true });
    const written: string[] = [];
    for (const example of examples) {
      writeFileSync(join(outDir, example.file), `${formatJson(example.body)}\n`);
      written.push(example.file);
    }
    writeFileSync(join(outDir, 'README.md'), readme(store, examples));
    written.push('README.md');
    return written;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function main(argv: readonly string[]): void {
  let out = EXAMPLES_DIR;
  let storeDir: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if ((flag === '--out' || flag === '--store') && value !== undefined) {
      if (flag === '--out') out = resolve(value);
      else storeDir = resolve(value);
      i++;
    } else {
      process.stderr.write('usage: generate.ts [--out DIR] [--store DIR]\n');
      process.exit(2);
    }
  }
  for (const file of generateExamples(out)) process.stdout.write(`wrote ${join(out, file)}\n`);
  if (storeDir !== null) {
    mkdirSync(storeDir, { recursive: true, mode: 0o700 });
    const store = buildDemoStore(join(storeDir, 'agentscm-data'), join(storeDir, 'agent-1.token'));
    process.stdout.write(`demo store ${store.dataDir}, token file ${store.tokenFile}\n`);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
