import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Flags } from '@oclif/core';

import { AgentscmError, ERROR_CODES } from '../contracts/errors.js';
import { oneLine } from '../contracts/message-text.js';
import { checkCollectorHost, collectorHostReport } from '../doctor/collector-host.js';
import { runDoctor, type DoctorReport } from '../doctor/doctor.js';
import type { DoctorFinding } from '../doctor/finding.js';
import { repairGitMirrors } from '../doctor/git-mirrors.js';
import { withStore } from '../tasks/store.js';
import { findEnclosingWorkspace, locateWorkspace } from '../workspace/locate.js';
import { BaseCommand } from './_base.js';

/** The package's engines.node range, when it declares one as a string. */
function nodeRangeOf(pjson: { engines?: { node?: unknown } }): string | undefined {
  const range = pjson.engines?.node;
  return typeof range === 'string' ? range : undefined;
}

/** The report with the findings of --fix first, counted like the others. */
function withFixes(report: DoctorReport, fixed: readonly DoctorFinding[]): DoctorReport {
  const findings = [...fixed.map((f) => ({ ...f })), ...report.findings];
  const counts = { ...report.counts };
  for (const f of fixed) counts[f.status] += 1;
  return { ...report, ok: counts.fail === 0, counts, findings };
}

const MARKS = { pass: '✓', warn: '!', fail: '✗', skip: '-' } as const;

export default class Doctor extends BaseCommand {
  static override description =
    'Check, without changing anything, what this machine needs: Node.js, the store (schema, integrity, ' +
    'permissions), keys, grants, requirements, the container runtime and pinned images, installed hooks and the ' +
    'hub; one line per finding with its fix. Exit 1 when a check fails. --fix first repairs what can be repaired ' +
    'without a decision: the landings of git-linked targets not yet written to git (docs/git.md "Repair after a ' +
    'crash"); its findings come first.';

  static override examples = [
    '<%= config.bin %> doctor',
    '<%= config.bin %> --data-dir ./agentscm-data doctor --state-dir ~/.agentscm-collector --docker ' +
      '/usr/bin/docker --docker-socket /var/run/docker.sock',
    '<%= config.bin %> doctor --hub-config hub.json --token-file ~/.agentscm/alice.token --json',
    '<%= config.bin %> doctor --endpoint http://hub.internal:8080/v1/hub/workspace/repositories/acme/demo/profiles/' +
      'default/agent-tasks --token-file agent.token --state-dir ~/.agentscm-collector --image local/busybox:1',
  ];

  static override flags = {
    fix: Flags.boolean({
      description: 'Write the pending git mirrors of landed targets before checking.',
      default: false,
    }),
    workspace: Flags.string({
      description:
        'Workspace whose hook settings are read (default: the nearest one at or above the current directory).',
      helpValue: 'PATH',
    }),
    'hub-config': Flags.string({
      description: 'Hub execution config to check; a fixed loopback listen address is also probed.',
      helpValue: 'FILE',
    }),
    'state-dir': Flags.string({
      description: 'Collector state directory whose key to check (repeatable).',
      multiple: true,
      helpValue: 'DIR',
    }),
    'token-file': Flags.string({
      description: 'Grant token file to authenticate (repeatable; the token is never printed).',
      multiple: true,
      helpValue: 'FILE',
    }),
    docker: Flags.string({
      description: 'The docker executable collector profiles were probed with (to compare runtime identities).',
      helpValue: 'PATH',
    }),
    'docker-socket': Flags.string({
      description: "Engine socket (default: DOCKER_HOST's unix:// path, else /var/run/docker.sock).",
      helpValue: 'PATH',
    }),
    endpoint: Flags.string({
      description:
        "On a collector host (no store): the hub's agent-tasks URL; checks its health, the --token-file, the " +
        '--state-dir key, the engine and each --image, and nothing of a store.',
      helpValue: 'URL',
    }),
    image: Flags.string({
      description: 'With --endpoint: an image the collector profile pins, to find in the engine (repeatable).',
      multiple: true,
      dependsOn: ['endpoint'],
      helpValue: 'NAME',
    }),
  };

  async run(): Promise<DoctorReport> {
    const { flags } = await this.parse(Doctor);
    const named: [string, string | undefined][] = [
      ['--workspace', flags.workspace],
      ['--docker', flags.docker],
      ['--docker-socket', flags['docker-socket']],
      ['--hub-config', flags['hub-config']],
      ...(flags['state-dir'] ?? []).map((value): [string, string] => ['--state-dir', value]),
      ...(flags['token-file'] ?? []).map((value): [string, string] => ['--token-file', value]),
    ];
    // resolve('') is the working directory: an empty value names no path at all.
    for (const [flag, value] of named) {
      if (value === '')
        throw new AgentscmError('USAGE', `${flag} needs a path, not an empty value`, {
          hint: `pass ${flag} PATH or leave it out`,
        });
    }
    if (flags.endpoint !== undefined)
      return this.report(
        collectorHostReport(
          await checkCollectorHost({
            endpoint: flags.endpoint,
            tokenFiles: (flags['token-file'] ?? []).map((file) => resolve(file)),
            stateDirs: (flags['state-dir'] ?? []).map((dir) => resolve(dir)),
            images: flags.image ?? [],
            dockerSocket: flags['docker-socket'],
          }),
        ),
      );
    const workspace =
      flags.workspace === undefined ? findEnclosingWorkspace(process.cwd()) : locateWorkspace(flags.workspace);
    const dataDir = this.resolveDataDir(flags['data-dir'], workspace ?? undefined);
    const fixed = flags.fix
      ? withStore(dataDir, 'write', (store) => repairGitMirrors(store.authority(), Date.now()))
      : [];
    const checked = await runDoctor({
      dataDir,
      nodeVersion: process.versions.node,
      nodeRange: nodeRangeOf(this.config.pjson as { engines?: { node?: unknown } }),
      workspace,
      home: homedir(),
      script: process.argv[1],
      path: process.env.PATH ?? '',
      stateDirs: (flags['state-dir'] ?? []).map((dir) => resolve(dir)),
      tokenFiles: (flags['token-file'] ?? []).map((file) => resolve(file)),
      docker: flags.docker,
      dockerSocket: flags['docker-socket'],
      hubConfig: flags['hub-config'],
    });
    return this.report(fixed.length === 0 ? checked : withFixes(checked, fixed));
  }

  private report(report: DoctorReport): DoctorReport {
    for (const f of report.findings)
      this.log(
        `${MARKS[f.status]} ${f.check}: ${oneLine(f.message)}${f.fix === null ? '' : `; fix: ${oneLine(f.fix)}`}`,
      );
    for (const h of report.hooks) {
      const where =
        h.excluded === null
          ? 'outside the workspace'
          : h.excluded
            ? 'excluded by .agentscm/exclude'
            : 'recorded with the Change';
      this.log(`hook: ${h.client} ${h.event} in ${h.file} (${h.scope}; ${where})`);
    }
    const { pass, warn, fail, skip } = report.counts;
    this.log(`${report.ok ? 'ok' : 'FAILED'}: ${pass} pass, ${warn} warn, ${fail} fail, ${skip} skipped`);
    if (!report.ok) {
      // The findings are the answer (with --json the one document on stdout); the error line and the exit status say it
      // failed.
      process.stderr.write(
        `error[DOCTOR_FAILED]: ${fail} check${fail === 1 ? '' : 's'} failed; fix each ✗ line and run agentscm ` +
          `doctor again\n`,
      );
      process.exitCode = ERROR_CODES.DOCTOR_FAILED.exit;
    }
    return report;
  }
}
