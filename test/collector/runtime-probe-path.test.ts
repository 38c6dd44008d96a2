/**
 * `agent-task runtime-probe` without `--docker` (docs/command-collector.md "Runtime identity and
 * `runtime-probe`"): the docker executable is the first executable `docker` in PATH order, hashed
 * into the identity and named in
 * the output; PATH without one is RUNTIME_FLAGS_INVALID with the fix. Spawned as a user runs it,
 * against the real engine; the executable is only hashed, never run, so a script file serves.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { jsonOf, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET, IMAGE } from '../support/runtime.js';

/** A `docker` file with its own content in a new directory; returns the directory and the file's SHA-256. */
function fakeDocker(root: string, name: string, mode = 0o755): { dir: string; sha256: string } {
  const dir = join(root, name);
  mkdirSync(dir);
  const body = `#!/bin/sh\n# ${name}\nexit 0\n`;
  writeFileSync(join(dir, 'docker'), body);
  chmodSync(join(dir, 'docker'), mode);
  return { dir, sha256: createHash('sha256').update(body).digest('hex') };
}

function probe(path: string, extra: string[] = []): ReturnType<typeof runCli> {
  return runCli(['agent-task', 'runtime-probe', '--docker-socket', DOCKER_SOCKET, '--image', IMAGE, ...extra], {
    env: { PATH: path },
  });
}

test('without --docker the first executable docker in PATH order is hashed and named', async (t) => {
  const root = tempDir(t);
  const notExecutable = fakeDocker(root, 'a-plain', 0o644);
  const first = fakeDocker(root, 'b-first');
  const second = fakeDocker(root, 'c-second');
  const path = [notExecutable.dir, first.dir, second.dir, process.env.PATH ?? ''].join(':');
  const json = await probe(path, ['--json']);
  assert.equal(json.code, 0, json.stderr);
  const body = jsonOf<{ docker: string; identity: { executable_sha256: string } }>(json);
  assert.equal(body.docker, join(first.dir, 'docker'));
  assert.equal(body.identity.executable_sha256, first.sha256, 'the first executable one, not a later one');
  const human = await probe(path);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^executable ${join(first.dir, 'docker')} sha256 ${first.sha256}$`, 'm'));

  // --docker still wins over PATH.
  const named = await probe(path, ['--docker', join(second.dir, 'docker'), '--json']);
  assert.equal(named.code, 0, named.stderr);
  assert.equal(jsonOf<{ identity: { executable_sha256: string } }>(named).identity.executable_sha256, second.sha256);
});

test('without --docker and no executable docker on PATH: RUNTIME_FLAGS_INVALID naming the fix', async (t) => {
  const root = tempDir(t);
  const plain = fakeDocker(root, 'plain', 0o644);
  const empty = join(root, 'empty');
  mkdirSync(empty);
  const result = await probe(`${empty}:${plain.dir}`, ['--json']);
  assert.equal(result.code, 2, result.stderr);
  const { error } = jsonOf<{ error: { code: string; message: string; hint: string } }>(result);
  assert.equal(error.code, 'RUNTIME_FLAGS_INVALID');
  assert.match(error.message, /no executable docker was found on PATH/);
  assert.match(error.hint, /pass --docker PATH/);
});
