import { resolve } from 'node:path';
import { Flags } from '@oclif/core';

import { requirementStepFlags, runtimeIdentityFlags } from '../_profile-flags.js';
import { BaseCommand } from '../../_base.js';
import {
  addRemoteCollector,
  REMOTE_PLACEHOLDERS,
  type RemoteCollectorResult,
} from '../../../collector/collector-setup-remote.js';
import {
  addCollector,
  AGENT_PLACEHOLDERS,
  shellLine,
  type CollectorAddResult,
} from '../../../collector/collector-setup.js';
import { recordCollectorSetup } from '../../../native/collector-setups.js';
import { readPublicKeyFile } from '../../../native/public-key-file.js';
import { openStore } from '../../../tasks/store.js';

export default class AgentTaskCollectorAdd extends BaseCommand {
  static override summary = 'Set up a command collector for one step: key, enrollment, runtime probe and profile.';
  static override description =
    'One operator command for one command step of the target requirement: creates the signing key in ' +
    '--state-dir when it has none (owner-private, outside every workspace and the data directory) or reuses it, ' +
    "reuses the key's current enrollment for the step or enrolls it, observes the runtime identity on the " +
    "recipe's image (never pulled) and installs the collector profile. Prints the profile ID and the exact " +
    '`agent-task claim` and `agent-task collect` commands an agent runs, with placeholders for what only the ' +
    'agent knows. A refusal changes nothing in the store; a rerun answers the same profile and enrolls nothing ' +
    '(docs/collect.md "One command: collector add").';
  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task collector add --step unit-tests ' +
      '--state-dir ~/.agentscm-collector',
    '<%= config.bin %> agent-task collector add --step unit-tests --state-dir ~/.agentscm-collector ' +
      '--docker /usr/bin/docker --docker-socket /var/run/docker.sock --json',
    '<%= config.bin %> agent-task collector add --step unit-tests --state-dir /home/ci/.agentscm-collector --remote',
    '<%= config.bin %> agent-task collector add --step unit-tests --state-dir /home/ci/.agentscm-collector --remote ' +
      '--public-key 3b6a27bc… --endpoint http://hub.internal:8080/v1/hub/workspace/repositories/acme/demo/profiles/' +
      'default/agent-tasks',
  ];
  static override flags = {
    step: Flags.string({ description: 'Command step of the target requirement.', required: true, helpValue: 'ID' }),
    'state-dir': Flags.string({
      description:
        'Owner-private collector state directory (0700) holding signing-key.json; the key is created when absent.',
      required: true,
      helpValue: 'DIR',
    }),
    ...requirementStepFlags,
    executor: Flags.string({
      description: 'Executor id of a new enrollment (default: collector- and the first 12 hex of the key id).',
      helpValue: 'ID',
    }),
    ...runtimeIdentityFlags,
    remote: Flags.boolean({
      description:
        'The collector runs on another host: --state-dir is a path there. Without a public key, prints the key ' +
        'command to run there; with it, enrolls it and prints the lines to carry (docs/collect.md).',
      default: false,
    }),
    'public-key': Flags.string({
      description: 'With --remote: the public_key the key command printed on the collector host (64 hex).',
      exclusive: ['public-key-file'],
      dependsOn: ['remote'],
      helpValue: 'HEX',
    }),
    'public-key-file': Flags.string({
      description: 'With --remote: a file holding that public key, or the signing-key.json itself.',
      dependsOn: ['remote'],
      helpValue: 'FILE',
    }),
    endpoint: Flags.string({
      description: "With --remote: the hub's agent-tasks URL printed into the collector host's lines.",
      dependsOn: ['remote'],
      helpValue: 'URL',
    }),
  };

  async run(): Promise<CollectorAddResult | RemoteCollectorResult> {
    const { flags } = await this.parse(AgentTaskCollectorAdd);
    if (flags.remote) return this.remote(flags);
    const store = openStore(this.resolveDataDir(flags['data-dir']), { mode: 'write' });
    let result: CollectorAddResult;
    try {
      result = await addCollector({
        store,
        stateDir: flags['state-dir'],
        step: flags.step,
        target: flags.target,
        repository: flags.repository,
        executor: flags.executor,
        docker: flags.docker,
        dockerSocket: flags['docker-socket'],
        nowMs: Date.now(),
      });
      // Where the agent's collect runs from: next, qualification and the Stop feedback print it.
      recordCollectorSetup(store.authority(), {
        collector_profile_id: result.collector_profile_id,
        state_dir: resolve(flags['state-dir']),
        key_file: result.key.key_file,
        docker: result.runtime.docker,
        docker_socket: result.runtime.docker_socket,
        recorded_at_ms: Date.now(),
      });
    } finally {
      store.close();
    }
    const { key, registration: reg, runtime } = result;
    this.log(
      `${result.installed ? 'installed' : 'already installed'} collector profile ${result.collector_profile_id}`,
    );
    this.log(
      `  key ${key.key_file} (${key.created ? 'created' : 'existing'}), verification_key_id ${key.verification_key_id}`,
    );
    this.log(
      `  registration ${reg.registration_id} epoch ${reg.registration_epoch}, executor ${reg.executor_id} ` +
        `(${reg.enrolled ? 'enrolled' : 'existing'})`,
    );
    const bound = result.bound_by;
    this.log(`  step ${result.profile.step_id as string}, recipe ${bound.recipe_path} (target ${bound.target})`);
    this.log(
      `  runtime identity ${runtime.identity_sha256} (image ${runtime.image}, docker ${runtime.docker}, socket ` +
        `${runtime.docker_socket})`,
    );
    this.log('');
    this.log(`An agent collects with (replace ${Object.keys(AGENT_PLACEHOLDERS).join(', ')}):`);
    this.log(`  ${shellLine(result.agent_commands.claim)}`);
    this.log(`  ${shellLine(result.agent_commands.collect)}`);
    return result;
  }

  private async remote(flags: {
    readonly 'data-dir'?: string;
    readonly 'state-dir': string;
    readonly step: string;
    readonly target: string;
    readonly repository?: string;
    readonly executor?: string;
    readonly docker?: string;
    readonly 'docker-socket'?: string;
    readonly 'public-key'?: string;
    readonly 'public-key-file'?: string;
    readonly endpoint?: string;
  }): Promise<RemoteCollectorResult> {
    const dataDir = this.resolveDataDir(flags['data-dir']);
    const publicKey =
      flags['public-key'] ??
      (flags['public-key-file'] === undefined ? undefined : readPublicKeyFile(flags['public-key-file']));
    const store = openStore(dataDir, { mode: 'write' });
    let result: RemoteCollectorResult;
    try {
      result = await addRemoteCollector({
        store,
        stateDir: flags['state-dir'],
        step: flags.step,
        target: flags.target,
        repository: flags.repository,
        executor: flags.executor,
        docker: flags.docker,
        dockerSocket: flags['docker-socket'],
        nowMs: Date.now(),
        publicKey,
        endpoint: flags.endpoint,
        hubBase: ['agentscm', '--data-dir', resolve(dataDir)],
      });
    } finally {
      store.close();
    }
    const line = (argv: readonly string[]): string => `  ${shellLine(argv, REMOTE_PLACEHOLDERS)}`;
    if (result.stage === 'key') {
      this.log(`1. On the collector host, create its key (the state directory is made there and stays there):`);
      this.log(line(result.collector_host.key));
      this.log(`2. Here, enroll the public_key it printed (replace <PUBLIC_KEY>):`);
      this.log(line(result.hub_host.add));
      return result;
    }
    const reg = result.registration;
    this.log(
      `${result.installed ? 'installed' : 'already installed'} collector profile ${result.collector_profile_id}`,
    );
    this.log(
      `  verification_key_id ${result.verification_key_id}, registration ${reg.registration_id} epoch ` +
        `${reg.registration_epoch}, executor ${reg.executor_id} (${reg.enrolled ? 'enrolled' : 'existing'})`,
    );
    this.log(`  runtime identity ${result.runtime.identity_sha256} (image ${result.runtime.image}, observed here)`);
    this.log('');
    this.log('Here, an agent claims (replace <CHANGE>, <TOKEN_FILE>, <DESCRIPTOR_FILE>):');
    this.log(line(result.hub_host.claim));
    this.log('On the collector host, with the token file and the descriptor copied there:');
    this.log(line(result.collector_host.doctor));
    this.log(line(result.collector_host.collect));
    return result;
  }
}
