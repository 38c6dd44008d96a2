/**
 * `agentscm status`: the human output says exactly what the --json document says — the
 * repository by name beside its ID, ready only when the document's `ready` is true, with the
 * reasons when it is not, and counts in the right number ("1 changed path", "4 changed paths").
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { fixture, initProject, type Fixture } from '../support/foundation.js';

interface StatusJson {
  readonly repository: string;
  readonly repository_name: string | null;
  readonly ready: boolean;
  readonly clean: boolean;
  readonly changes: readonly { path: string }[];
}

async function statusBoth(f: Fixture): Promise<{ human: string; json: StatusJson }> {
  const human = await runCli(['--data-dir', f.dataDir, 'status', '--workspace', f.workspace]);
  assert.equal(human.code, 0, human.stderr);
  const json = await runCli(['--data-dir', f.dataDir, 'status', '--workspace', f.workspace, '--json']);
  assert.equal(json.code, 0, json.stderr);
  return { human: human.stdout, json: jsonOf<StatusJson>(json) };
}

test('status names the repository and says ready exactly when --json says ready', async (t) => {
  const f = fixture(t);
  const { repository } = await initProject(f, 'my-project');

  const clean = await statusBoth(f);
  assert.equal(clean.json.repository, repository);
  assert.equal(clean.json.repository_name, 'my-project');
  assert.equal(clean.json.ready, true);
  assert.match(clean.human, new RegExp(`repository my-project \\(${repository}\\)`));
  assert.match(clean.human, /^ {2}clean$/m);
  assert.match(clean.human, /^ready: yes$/m);
  assert.doesNotMatch(clean.human, /^ready: no/m);

  writeFileSync(join(f.workspace, 'README.md'), '# changed\n');
  const one = await statusBoth(f);
  assert.equal(one.json.ready, false);
  assert.equal(one.json.changes.length, 1);
  assert.match(one.human, /^ {2}dirty: 1 changed path$/m);
  assert.match(one.human, /^ready: no \(1 changed path\)$/m);
  assert.doesNotMatch(one.human, /^ready: yes/m);

  writeFileSync(join(f.workspace, 'new-a.txt'), 'a\n');
  writeFileSync(join(f.workspace, 'new-b.txt'), 'b\n');
  rmSync(join(f.workspace, 'src', 'main.ts'));
  const four = await statusBoth(f);
  assert.equal(four.json.ready, false);
  assert.equal(four.json.changes.length, 4);
  assert.match(four.human, /^ {2}dirty: 4 changed paths$/m);
  assert.match(four.human, /^ready: no \(4 changed paths\)$/m);
  // Nothing in the human output claims a readiness the document does not have.
  assert.doesNotMatch(four.human, /\bready\)/);
});
