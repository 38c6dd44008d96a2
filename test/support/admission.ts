/**
 * Qualification in tests: the evidence chain of test/support/evidence.ts (real store, enrolled
 * key, installed collector profile, live grant, real collector claims and signed envelopes) and
 * one call of the facade operation as the grant's actor, its answer checked with the strict
 * decoder every client uses.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { encodeCanonical } from '../../src/contracts/json/canonical-json.js';
import type { JsonObject } from '../../src/contracts/json/json-value.js';
import { qualificationAnswerDecoder, type QualificationAnswer } from '../../src/contracts/task/qualification.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { decodeTaskCall } from '../../src/tasks/facade.js';
import { withStore } from '../../src/tasks/store.js';
import { ALICE, authorization, type Evidence } from './evidence.js';
import { CHANGE_ID, PROFILE } from './tasks.js';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');

export interface QualifyOptions {
  readonly tokenFile?: string;
  readonly now?: number;
  readonly contextDigest?: string;
}

/** Call `qualification` through the facade as the grant of `tokenFile` (default: the evidence grant). */
export function qualifyAs(ev: Evidence, options: QualifyOptions = {}): QualificationAnswer {
  const grant = authorization(ev, options.tokenFile ?? ev.tokenFile);
  const now = options.now;
  const answer = withStore(ev.store.dataDir, 'read', (store) =>
    decodeTaskCall('qualification', null).run({
      store,
      actor: grant.actor,
      repository: grant.repository,
      profile: PROFILE,
      target: 'main',
      subject: { change_id: CHANGE_ID, context_digest: options.contextDigest ?? ev.store.contextDigest },
      guard: grant.guard,
      origin: grant.origin,
      now: now === undefined ? undefined : () => now,
    }),
  );
  return qualificationAnswerDecoder.validate(answer);
}

/** Import an envelope as the evidence grant (what `agent-task upload` does locally). */
export function importEnvelope(ev: Evidence, envelope: Buffer, tokenFile = ev.tokenFile): JsonObject {
  return withStore(ev.store.dataDir, 'write', (held) =>
    importCollectorTransfer(held, envelope, authorization(ev, tokenFile)),
  );
}

/** collector_finalize as the evidence grant. */
export function finalize(ev: Evidence): JsonObject {
  const grant = authorization(ev);
  return withStore(ev.store.dataDir, 'write', (store) =>
    decodeTaskCall('collector_finalize', encodeCanonical({ version: 1, agent: { ...ALICE } })).run({
      store,
      actor: grant.actor,
      repository: grant.repository,
      profile: PROFILE,
      target: 'main',
      subject: { change_id: CHANGE_ID, context_digest: ev.store.contextDigest },
      guard: grant.guard,
      origin: grant.origin,
    }),
  ) as JsonObject;
}

/**
 * Import in a child process that is SIGKILLed right after the import's journal commit, before
 * its receipt transaction (the real crash window the receipt is written later for).
 */
export async function killedImport(ev: Evidence, envelope: Buffer): Promise<void> {
  const file = join(ev.dir, `transfer-${Date.now()}.bin`);
  writeFileSync(file, envelope);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join('test', 'evidence', 'import-child.ts'), ev.store.dataDir, file, ev.tokenFile],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENTSCM_TEST_PAUSE_AT: 'task:after-journal-commit' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('agentscm-test-paused:task:after-journal-commit')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, sig) => resolve(sig));
  });
  if (signal !== 'SIGKILL')
    throw new Error(`the import child was not killed at its pause point (signal ${String(signal)})`);
}

/** The state of each task by step id. */
export function statesOf(answer: QualificationAnswer): Record<string, string> {
  return Object.fromEntries(answer.tasks.map((task) => [task.step_id, task.state]));
}
