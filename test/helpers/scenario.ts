/**
 * One call builds the world most end-to-end tests start from, the way an operator builds it:
 * every step is a real `agentscm` process (runCli), so the scenario follows the CLI and not the
 * internals. A workspace with a skill package and a command recipe, `init-repo`, an edit
 * checkpointed as a Change, its command/v1 context, a workflow whose command step is bound to
 * that Change and context installed as the requirement of `main`, a grant with its token file, a
 * collector key, its enrollment for the step and, on request, the collector profile that binds
 * them (probing the live container runtime for its identity).
 *
 * Tests that need a different workflow pass `steps`; tests that need other files pass `files`; a
 * review-only world passes `command: false`, a world before any requirement `requirement: false`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';

import { IMAGE, RUNTIME_FLAGS } from '../support/runtime.js';
import { jsonOf, runCli, type CliOptions, type CliResult } from './cli.js';
import { tempDir } from './tmp.js';

export const SCENARIO_SKILL = 'skills/check/SKILL.md';
export const SCENARIO_RECIPE = 'skills/check/runner.json';
/** Where a review step's policy lives in the scenario's skill (its `policy` is `review-policy.json`). */
export const SCENARIO_REVIEW_POLICY = 'skills/check/review-policy.json';
export const SCENARIO_CHANGE = 'c1';
export const SCENARIO_ACTOR = 'alice/agent-1';

/** A CommandRecipe v1 running `argv` in the local busybox image (limits small enough for a test). */
export function scenarioRecipe(
  argv: readonly string[],
  timeoutMs = 20_000,
  limits: Readonly<Record<string, number>> = {},
): Record<string, unknown> {
  return {
    version: 1,
    image: IMAGE,
    argv: [...argv],
    env: {},
    workdir: '.',
    timeout_ms: timeoutMs,
    limits: {
      memory_bytes: 67108864,
      pids: 64,
      cpu_millis: 1000,
      output_bytes: 65536,
      scratch_bytes: 1048576,
      ...limits,
    },
    toolchain: 'busybox-1',
    environment: 'posix-sh-offline',
  };
}

/** What a workflow step builder sees: the Change the checkpoint made and its context. */
export interface ScenarioBinding {
  readonly repository: string;
  readonly revision: string;
  readonly changeId: string;
  readonly changeVersion: number;
  readonly contextDigest: string;
}

/** The action of a command step that runs the scenario's recipe on the checkpointed Change. */
export function commandStepAction(binding: ScenarioBinding): Record<string, unknown> {
  return {
    kind: 'command',
    runner: 'runner.json',
    change: { repository: binding.repository, id: binding.changeId },
    change_version: binding.changeVersion,
    context_digest: binding.contextDigest,
  };
}

export interface ScenarioOptions {
  /** The recipe's argv (default: a check that passes when the edited file is in the revision). */
  readonly argv?: readonly string[];
  /** The recipe's timeout (default 20 s). */
  readonly timeoutMs?: number;
  /** Recipe limits that differ from the defaults (e.g. `output_bytes`). */
  readonly limits?: Readonly<Record<string, number>>;
  /** Extra workspace files (path → text), written before init-repo. */
  readonly files?: Readonly<Record<string, string>>;
  /** The edit checkpointed as the Change (path → text; default `src/a.txt` becomes `edited`). */
  readonly edits?: Readonly<Record<string, string>>;
  /** Extra skill resources the workflow names besides the recipe (paths in the workspace). */
  readonly resources?: readonly string[];
  /** The workflow's steps (default: one required command step `check`). */
  readonly steps?: (binding: ScenarioBinding) => readonly Record<string, unknown>[];
  /** The step the collector key is enrolled for (default `check`; null: no enrollment). */
  readonly enrollStep?: string | null;
  /** The executor the key is enrolled as (default `box-1`). */
  readonly executor?: string;
  /** Install the command collector profile for the enrolled step (probes the live runtime). */
  readonly profile?: boolean;
  /** The workflow's name (default `checks`). */
  readonly name?: string;
  /** Write the command recipe and create the Change's context (default true; false: contextDigest ''). */
  readonly command?: boolean;
  /** Install the workflow as the requirement of `main` (default true; false: requirementDigest ''). */
  readonly requirement?: boolean;
}

export interface Scenario extends ScenarioBinding {
  readonly root: string;
  readonly ws: string;
  readonly dataDir: string;
  /** The revision init-repo recorded (before the edit). */
  readonly base: string;
  /** The workflow definition (written even when `requirement` is false). */
  readonly workflowFile: string;
  readonly requirementDigest: string;
  readonly recipe: Record<string, unknown>;
  readonly tokenFile: string;
  readonly stateDir: string;
  readonly keyFile: string;
  readonly publicKey: string;
  /** The enrollment of the collector key, or null when `enrollStep` is null. */
  readonly registration: {
    readonly registration_id: string;
    readonly registration_epoch: number;
    readonly verification_key_id: string;
  } | null;
  /** The installed collector profile's ID, or null without `profile`. */
  readonly profileId: string | null;
  /** `agentscm --data-dir DATA ...args`. */
  readonly cli: (args: readonly string[], options?: CliOptions) => Promise<CliResult>;
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (exit ${String(result.code)}): ${result.stderr}`);
  return result;
}

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Build the scenario in a new temporary directory that the test removes when it ends. */
export async function buildScenario(t: TestContext, options: ScenarioOptions = {}): Promise<Scenario> {
  const root = tempDir(t, 'agentscm-scenario-');
  const ws = join(root, 'ws');
  const dataDir = join(root, 'data');
  const recipe = scenarioRecipe(
    options.argv ?? ['/bin/sh', '-c', 'grep -q edited /src/src/a.txt'],
    options.timeoutMs,
    options.limits,
  );
  const command = options.command ?? true;
  const files: Record<string, string> = {
    [SCENARIO_SKILL]: '---\nname: check\ndescription: run the check\n---\n\nRun the check.\n',
    ...(command ? { [SCENARIO_RECIPE]: JSON.stringify(recipe) } : {}),
    'src/a.txt': 'original\n',
    ...options.files,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, path)), { recursive: true });
    writeFileSync(join(ws, path), text);
  }
  const cli = (args: readonly string[], cliOptions: CliOptions = {}): Promise<CliResult> =>
    runCli(['--data-dir', dataDir, ...args], cliOptions);

  const init = jsonOf<{ revision: string }>(ok(await cli(['init-repo', ws, '--name', 'demo', '--json']), 'init-repo'));
  for (const [path, text] of Object.entries(options.edits ?? { 'src/a.txt': 'edited\n' })) {
    writeFileSync(join(ws, path), text);
  }
  const cp = jsonOf<{ repository: string; revision: string; version: number }>(
    ok(await cli(['checkpoint', '--change', SCENARIO_CHANGE, '--workspace', ws, '--json']), 'checkpoint'),
  );
  const context = command
    ? jsonOf<{ context_digest: string }>(
        ok(
          await cli(['context', 'create', '--change', SCENARIO_CHANGE, '--runner', SCENARIO_RECIPE, '--json']),
          'context create',
        ),
      )
    : { context_digest: '' };
  const binding: ScenarioBinding = {
    repository: cp.repository,
    revision: cp.revision,
    changeId: SCENARIO_CHANGE,
    changeVersion: cp.version,
    contextDigest: context.context_digest,
  };
  const steps = options.steps?.(binding) ?? [
    { id: 'check', needs: [], required: true, action: commandStepAction(binding) },
  ];
  const workflowFile = join(root, 'workflow.json');
  writeFileSync(
    workflowFile,
    JSON.stringify({
      version: 1,
      name: options.name ?? 'checks',
      source: { repository: cp.repository, revision: cp.revision, policy_epoch: 0 },
      skill: {
        entrypoint: SCENARIO_SKILL,
        resources: [...(options.resources ?? []), ...(command ? [SCENARIO_RECIPE] : [])],
      },
      steps,
    }),
  );
  const installed =
    options.requirement === false
      ? { requirement_digest: '' }
      : jsonOf<{ requirement_digest: string }>(
          ok(await cli(['requirement', 'install', '--target', 'main', workflowFile, '--json']), 'requirement install'),
        );
  const tokenFile = join(root, 'alice.token');
  ok(await cli(['grant', 'create', '--actor', SCENARIO_ACTOR, '--token-file', tokenFile]), 'grant create');
  const stateDir = join(root, 'collector');
  ok(await runCli(['agent-task', 'key', '--state-dir', stateDir]), 'agent-task key');
  const keyFile = join(stateDir, 'signing-key.json');
  const publicKey = (JSON.parse(readFileSync(keyFile, 'utf8')) as { public_key: string }).public_key;

  const enrollStep = options.enrollStep === undefined ? 'check' : options.enrollStep;
  const registration =
    enrollStep === null
      ? null
      : jsonOf<{ registration_id: string; registration_epoch: number; verification_key_id: string }>(
          ok(
            await cli([
              'agent-task',
              'enroll',
              '--step',
              enrollStep,
              '--executor',
              options.executor ?? 'box-1',
              '--public-key',
              publicKey,
              '--json',
            ]),
            'agent-task enroll',
          ),
        );

  let profileId: string | null = null;
  if (options.profile === true) {
    assert.ok(registration !== null && enrollStep !== null, 'a collector profile needs an enrolled step');
    assert.ok(command, 'a command collector profile needs the command recipe');
    const probe = jsonOf<{ identity_sha256: string }>(
      ok(
        await runCli(['agent-task', 'runtime-probe', ...RUNTIME_FLAGS, '--image', IMAGE, '--json']),
        'agent-task runtime-probe',
      ),
    );
    const profileFile = join(root, 'profile.json');
    writeFileSync(
      profileFile,
      JSON.stringify({
        version: 1,
        kind: 'command',
        repository_id: cp.repository,
        workflow_profile: 'default',
        step_id: enrollStep,
        registration_id: registration.registration_id,
        registration_epoch: registration.registration_epoch,
        verification_key_id: registration.verification_key_id,
        recipe,
        recipe_digest: sha256(files[SCENARIO_RECIPE] ?? ''),
        runtime_identity_digest: probe.identity_sha256,
      }),
    );
    profileId = jsonOf<{ collector_profile_id: string }>(
      ok(await cli(['agent-task', 'profile', 'install', profileFile, '--json']), 'agent-task profile install'),
    ).collector_profile_id;
  }

  return {
    ...binding,
    root,
    ws,
    dataDir,
    base: init.revision,
    workflowFile,
    requirementDigest: installed.requirement_digest,
    recipe,
    tokenFile,
    stateDir,
    keyFile,
    publicKey,
    registration,
    profileId,
    cli,
  };
}
