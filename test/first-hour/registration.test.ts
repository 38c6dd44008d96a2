/**
 * docs/keys-and-enrollment.md: enroll uses the same default workflow profile as agent-task call,
 * warns when no installed requirement has the step, and every registration error names the
 * repository, profile, step and executor it looked up.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { AgentscmError } from '../../src/contracts/errors.js';
import { requireCurrentRegistration } from '../../src/native/executor-registry.js';
import { listRepositories } from '../../src/native/repositories.js';
import { openAuthority, readTransaction } from '../../src/native/store.js';
import { jsonOf, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const PUBLIC_KEY = '197f6b23e16c8532c6abc838facd5ea789be0c76b2920334039bfa8b3d368d61';

function ok(result: CliResult): CliResult {
  assert.equal(result.code, 0, result.stderr);
  return result;
}

interface Enrolled {
  registration_id: string;
  registration_epoch: number;
  verification_key_id: string;
  profile: string;
  warnings: string[];
}

// Not buildScenario: this test orders the set-up itself (enroll before and after a requirement install).
test('enroll defaults to the profile agent-task call uses and warns about a step no installed requirement has', async (t) => {
  const root = tempDir(t);
  const data = join(root, 'data');
  const ws = join(root, 'demo');
  cpSync(join(REPO_ROOT, 'examples', 'demo-repo'), ws, { recursive: true });
  mkdirSync(join(ws, 'skills'));
  cpSync(join(REPO_ROOT, 'examples', 'skills', 'native-workflow'), join(ws, 'skills', 'native-workflow'), {
    recursive: true,
  });
  const cli = (args: string[]): Promise<CliResult> => runCli(['--data-dir', data, ...args]);
  const init = jsonOf<{ repository: string; revision: string }>(
    ok(await cli(['init-repo', ws, '--name', 'demo', '--json'])),
  );
  const enroll = (step: string, executor: string): Promise<CliResult> =>
    cli(['agent-task', 'enroll', '--step', step, '--executor', executor, '--public-key', PUBLIC_KEY, '--json']);

  // No requirement installed yet.
  const early = ok(await enroll('verify-skill', 'box-0'));
  const earlyDoc = jsonOf<Enrolled>(early);
  assert.equal(earlyDoc.profile, 'default');
  assert.equal(earlyDoc.registration_epoch, 1);
  assert.deepEqual(earlyDoc.warnings, [
    'repository demo has no installed workflow requirement; the registration is recorded, ' +
      'but no task uses it until a requirement with step "verify-skill" is installed',
  ]);
  assert.equal(early.stderr, `warning: ${earlyDoc.warnings[0] ?? ''}\n`);

  const workflow = JSON.parse(
    readFileSync(join(REPO_ROOT, 'examples', 'workflows', 'verify-with-omission.json'), 'utf8'),
  ) as { source: Record<string, string>; steps: { id: string }[] };
  workflow.source.repository = init.repository;
  workflow.source.revision = init.revision;
  const file = join(root, 'workflow.json');
  writeFileSync(file, JSON.stringify(workflow));
  ok(await cli(['requirement', 'install', '--target', 'main', file]));
  const steps = workflow.steps.map((s) => s.id).sort();

  // A step the installed requirement lacks: recorded, with the warning naming the steps it has.
  const typo = ok(await enroll('nosuchstep', 'box-1'));
  const typoDoc = jsonOf<Enrolled>(typo);
  assert.equal(typoDoc.registration_epoch, 1);
  assert.deepEqual(typoDoc.warnings, [
    'no installed workflow requirement of repository demo has a step "nosuchstep" ' +
      `(its steps: ${steps.join(', ')}); ` +
      'the registration is recorded, but no task uses it until a requirement with step "nosuchstep" is installed',
  ]);
  assert.match(typo.stderr, /^warning: no installed workflow requirement of repository demo has a step "nosuchstep"/);
  // Human output: the warning on stderr, stdout unchanged.
  const human = ok(
    await cli(['agent-task', 'enroll', '--step', 'nosuchstep', '--executor', 'box-2', '--public-key', PUBLIC_KEY]),
  );
  assert.match(human.stderr, /^warning: no installed workflow requirement/);
  assert.match(human.stdout, /^registration_id: /);
  // A step it has: no warning.
  const good = ok(await enroll('verify-skill', 'box-3'));
  assert.deepEqual(jsonOf<Enrolled>(good).warnings, []);
  assert.equal(good.stderr, '');
});

test('REGISTRATION_NOT_CURRENT names the repository, profile, step and executor it looked up', async (t) => {
  const root = tempDir(t);
  const data = join(root, 'data');
  const ws = join(root, 'p');
  mkdirSync(ws);
  writeFileSync(join(ws, 'a.txt'), 'a');
  ok(await runCli(['--data-dir', data, 'init-repo', ws, '--name', 'demo']));
  const enrolled = jsonOf<Enrolled>(
    ok(
      await runCli([
        '--data-dir',
        data,
        'agent-task',
        'enroll',
        '--profile',
        'local',
        '--step',
        'unit',
        '--executor',
        'box-1',
        '--public-key',
        PUBLIC_KEY,
        '--json',
      ]),
    ),
  );
  const auth = openAuthority(data, { mode: 'read' });
  try {
    const repository = listRepositories(auth)[0]?.id ?? '';
    const binding = {
      registration_id: enrolled.registration_id,
      executor_id: 'box-1',
      registration_epoch: 1n,
      verification_key_id: enrolled.verification_key_id,
    };
    // Enrolled under profile local, looked up under the default profile (the quickstart's old mistake).
    let caught: unknown;
    try {
      readTransaction(auth, () =>
        requireCurrentRegistration(auth, { repository, profile: 'default', step: 'unit' }, binding),
      );
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof AgentscmError);
    assert.equal(caught.code, 'REGISTRATION_NOT_CURRENT');
    assert.equal(
      caught.message,
      `executor box-1 is not enrolled for repository demo (${repository}), profile default, step unit, executor box-1`,
    );
    assert.match(caught.hint ?? '', /--profile default --step unit --executor box-1/);
    assert.deepEqual(caught.details, {
      registration_id: enrolled.registration_id,
      repository,
      profile: 'default',
      step: 'unit',
      executor_id: 'box-1',
    });
    // Superseded: the message names the scope too.
    const superseded = { ...binding, registration_epoch: 0n };
    assert.throws(
      () =>
        readTransaction(auth, () =>
          requireCurrentRegistration(
            auth,
            { repository, profile: 'local', step: 'unit' },
            { ...superseded, registration_id: 'reg-old' },
          ),
        ),
      (e: unknown) =>
        e instanceof AgentscmError &&
        e.code === 'REGISTRATION_NOT_CURRENT' &&
        e.message.includes(
          `(repository demo (${repository}), profile local, step unit, executor box-1) is not current`,
        ),
    );
  } finally {
    auth.close();
  }
});
