import { Args } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { DEFAULT_DOCKER_SOCKET, dockerExecutable } from '../../collector/docker-path.js';
import { recoverCommandStep, type RecoverReport } from '../../collector/recover.js';
import { openStore } from '../../tasks/store.js';
import { runtimeFlags } from './_runtime.js';

export default class SkillWorkflowRecover extends BaseCommand {
  static override summary = 'Reconcile an interrupted command step without running its command again.';
  static override description =
    "Finds every container of the step's durable command attempt by its custody label, removes it and confirms " +
    'it is gone, removes the snapshot, and finalizes the attempt (interrupted, or uncertain when cleanup cannot ' +
    'be confirmed); then records the step from the attempt. Holds the workflow journal lease while it ' +
    'reconciles. Exit 1 when the attempt stays uncertain.';

  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data skill-workflow recover local-run-1 run-command --docker ' +
      '/usr/local/bin/docker --docker-socket /var/run/docker.sock',
    '<%= config.bin %> skill-workflow recover local-run-1 run-command --json',
  ];

  static override args = {
    'run-id': Args.string({ description: 'Run ID.', required: true }),
    'step-id': Args.string({ description: 'ID of the interrupted command step.', required: true }),
  };

  static override flags = { ...runtimeFlags };

  async run(): Promise<RecoverReport> {
    const { args, flags } = await this.parse(SkillWorkflowRecover);
    // Each left out: the docker on PATH (none: RUNTIME_FLAGS_INVALID naming --docker) and the default socket.
    const docker = dockerExecutable(flags.docker);
    const dockerSocket = flags['docker-socket'] ?? DEFAULT_DOCKER_SOCKET;
    const store = openStore(this.resolveDataDir(flags['data-dir']), { mode: 'write' });
    let report: RecoverReport;
    try {
      report = await recoverCommandStep({
        store,
        runId: args['run-id'],
        stepId: args['step-id'],
        docker,
        dockerSocket,
      });
    } finally {
      store.close();
    }
    this.log(
      `attempt ${report.attempt_id}: ${report.state} ` +
        `(${report.outcome})${report.reconciled ? '' : ' — already final, nothing reconciled'}`,
    );
    if (report.custody !== null) {
      this.log(
        `  containers found ${report.custody.containers_found}, removed ${report.custody.containers_removed}; ` +
          `snapshot ${report.custody.snapshot_cleanup}; cleanup ` +
          `${report.custody.confirmed ? 'confirmed' : 'NOT confirmed'}`,
      );
    }
    this.log(`  step ${report.step_id}: ${report.step_state}; run ${report.run_id}: ${report.run_state}`);
    if (report.state === 'uncertain') process.exitCode = 1;
    return report;
  }
}
