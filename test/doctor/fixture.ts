/**
 * `agentscm doctor` as a real child process (bin/dev.js) with its own HOME (so the hook files of
 * whoever runs the tests are never read), the live engine socket, and helpers to pick findings
 * out of its --json document and to fingerprint a directory before and after a run.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { jsonOf, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { DOCKER_SOCKET } from '../support/collector.js';

export { DOCKER_SOCKET };

export interface Finding {
  readonly check: string;
  readonly status: 'pass' | 'warn' | 'fail' | 'skip';
  readonly code: string;
  readonly message: string;
  readonly fix: string | null;
}

export interface Report {
  readonly version: number;
  readonly data_dir: string;
  readonly ok: boolean;
  readonly counts: Record<string, number>;
  readonly findings: Finding[];
}

export interface DoctorRun {
  readonly result: CliResult;
  readonly report: Report;
}

/** A home directory of the test (empty unless the test writes hook files into it). */
export function testHome(t: TestContext): string {
  const home = tempDir(t, 'agentscm-doctor-home-');
  mkdirSync(home, { recursive: true });
  return home;
}

/** Run `agentscm doctor --json ...args` with HOME = home and the live engine's socket unless args name one. */
export async function doctor(
  home: string,
  args: readonly string[],
  options: { cwd?: string; json?: boolean; defaultSocket?: boolean; env?: Record<string, string | undefined> } = {},
): Promise<DoctorRun> {
  const socket =
    args.includes('--docker-socket') || options.defaultSocket === true ? [] : ['--docker-socket', DOCKER_SOCKET];
  const result = await runCli(['doctor', ...(options.json === false ? [] : ['--json']), ...socket, ...args], {
    env: { HOME: home, DOCKER_HOST: undefined, ...options.env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  if (options.json === false)
    return { result, report: { version: 0, data_dir: '', ok: result.code === 0, counts: {}, findings: [] } };
  const report = jsonOf<Report>(result);
  // The exit status is the report's verdict: 0 exactly when nothing fails, else DOCTOR_FAILED (1).
  if (report.ok) assert.equal(result.code, 0, result.stderr);
  else {
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^error\[DOCTOR_FAILED\]: /m);
  }
  return { result, report };
}

/** The findings of one check. */
export function findingsOf(report: Report, check: string): Finding[] {
  return report.findings.filter((f) => f.check === check);
}

/** The one finding of `check` with `code` (fails when there is none). */
export function findingOf(report: Report, check: string, code: string): Finding {
  const found = report.findings.find((f) => f.check === check && f.code === code);
  assert.ok(found, `no ${check} finding ${code} in:\n${JSON.stringify(report.findings, null, 2)}`);
  return found;
}

/** Every finding that is neither a pass nor a skip: what a healthy machine must not have. */
export function problems(report: Report): Finding[] {
  return report.findings.filter((f) => f.status === 'warn' || f.status === 'fail');
}

/**
 * Every file under dir with its mode, size and SHA-256. SQLite's reader sidecars of a WAL
 * database (the shared-memory index, an empty write-ahead log) hold no data and are left out, as
 * in the malformed-input campaign; a write-ahead log with frames in it stays in.
 */
export function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const stat = lstatSync(full);
      if (name.endsWith('.sqlite-shm') || (name.endsWith('.sqlite-wal') && stat.size === 0)) continue;
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isDirectory()) {
        out[`${full.slice(dir.length)}/`] = mode;
        visit(full);
      } else
        out[full.slice(dir.length)] =
          `${mode} ${stat.size} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
    }
  };
  visit(dir);
  return out;
}
