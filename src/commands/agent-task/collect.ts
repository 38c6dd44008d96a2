import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { requireBoundRepository } from '../_bound-repository.js';
import type { CollectResult } from '../../collector/collect-upload.js';
import { collect } from '../../collector/collect.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import {
  decodeAnyCollectorDescriptor,
  MAX_REVIEW_DESCRIPTOR_BYTES,
} from '../../contracts/review/collector-descriptor.js';
import { readBoundedInput } from '../../native/bounded-input.js';
import type { Store } from '../../native/store-handle.js';
import { openStore } from '../../tasks/store.js';
import { collectResultJson, printCollectResult } from './_collect-output.js';

/** --repository: the descriptor binds the repository; another is REPOSITORY_MISMATCH before anything runs. */
function requireDescriptorRepository(store: Store, descriptorFile: string, reference: string): void {
  const descriptor = decodeAnyCollectorDescriptor(
    readBoundedInput(descriptorFile, {
      limit: MAX_REVIEW_DESCRIPTOR_BYTES,
      what: 'the collector descriptor',
      missingHint: 'pass the descriptor file `agentscm agent-task claim --out FILE` wrote',
    }),
  );
  requireBoundRepository(store, reference, {
    id: descriptor.repository_id,
    what: 'the collector descriptor',
    instead: 'pass the descriptor of a task claimed in that repository',
  });
}

export default class AgentTaskCollect extends BaseCommand {
  static override summary =
    'Run a claimed command or review task as an operator-enrolled collector and upload the signed transfer.';
  static override description =
    'Reads the collector descriptor written by `agent-task claim --out`, recompiles it against the authority of ' +
    '--data-dir (any difference is refused: profile, registration, key, subject, recipe, runtime identity, task, ' +
    'attempt, fence, origin grant) and rechecks the grant, task and attempt before the run and again before ' +
    'signing. It reserves the collection durably in --state-dir before any container exists, materializes the ' +
    'exact revision (on a host with no store, fetched from the --endpoint hub by digest, every object checked), ' +
    'runs the recipe with the OCI command collector (network none, read-only source, non-root, ' +
    'no capabilities, limits), builds the ExecutionRequest and ExecutionRecord, signs the transfer envelope with ' +
    '--key, retains the envelope in --state-dir and only then uploads it: into the local authority, or to the ' +
    'hub when --endpoint is given. Running it again for the same descriptor never runs the command again; it ' +
    'uploads the retained envelope. A failed check is a completed collection (exit 0): its verdict is printed, ' +
    'qualification decides what it means. A review descriptor (a task claimed under a finite-review profile) ' +
    'runs the finite review controller instead: --review-executable names the Claude Code executable, whose ' +
    'SHA-256 must be the one the profile pins (model and provider scope come from the profile), --review-env ' +
    'names each variable it may see (nothing else is passed); every model call is reserved in --state-dir before ' +
    'it is made, and running it again never repeats a call. --docker and --docker-socket are then not needed. ' +
    'Progress goes to stderr when it is a terminal and --json is not given, or with AGENTSCM_PROGRESS=1.';

  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task collect --descriptor unit.descriptor.json --key ' +
      '~/.agentscm-collector/signing-key.json --state-dir ~/.agentscm-collector --docker /usr/bin/docker ' +
      '--docker-socket /var/run/docker.sock --token-file ./collector.token',
    '<%= config.bin %> agent-task collect --descriptor unit.descriptor.json --key ' +
      '~/.agentscm-collector/signing-key.json --state-dir ~/.agentscm-collector --docker /usr/bin/docker ' +
      '--docker-socket /var/run/docker.sock --token-file ./collector.token --endpoint ' +
      'http://127.0.0.1:8080/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks --json',
    '<%= config.bin %> agent-task collect --descriptor review.descriptor.json --key ' +
      '~/.agentscm-review/signing-key.json --state-dir ~/.agentscm-review --token-file ./collector.token ' +
      '--review-executable "$(readlink -f "$(command -v claude)")" --review-env HOME --review-env PATH ' +
      '--review-env ANTHROPIC_API_KEY',
  ];

  static override flags = {
    descriptor: Flags.string({
      description: 'Collector descriptor file written by `agent-task claim --out`.',
      required: true,
      helpValue: 'FILE',
    }),
    key: Flags.string({
      description: 'Key file of the enrolled registration the descriptor names (written by `agent-task key`).',
      required: true,
      helpValue: 'KEYFILE',
    }),
    'state-dir': Flags.string({
      description:
        'Owner-private (0700) collector state directory outside every workspace: the reservation, snapshot and ' +
        'retained envelope live here.',
      required: true,
      helpValue: 'DIR',
    }),
    docker: Flags.string({
      description:
        'The operator-selected docker executable; hashed into the runtime identity, never run (default: the ' +
        'first docker on PATH).',
      helpValue: 'PATH',
    }),
    'docker-socket': Flags.string({
      description: 'Unix socket of the Docker Engine API (default: /var/run/docker.sock).',
      helpValue: 'PATH',
    }),
    repository: Flags.string({
      description:
        "Repository ID or name; it must be the descriptor's (default: the descriptor's repository). Another is " +
        'refused before anything runs.',
      helpValue: 'ID_OR_NAME',
    }),
    'token-file': Flags.string({
      description:
        'Token file of the grant that claimed the task (the descriptor origin); also the upload bearer token.',
      required: true,
      helpValue: 'FILE',
    }),
    endpoint: Flags.string({
      description:
        "The hub's agent-tasks URL of the profile; the envelope is POSTed to its /collector-upload route instead " +
        'of the local authority. With no store at --data-dir (a collector on another host), the descriptor is ' +
        'checked through the hub and the claimed revision fetched from it by digest into --state-dir.',
      helpValue: 'URL',
    }),
    'review-executable': Flags.string({
      description:
        'A review descriptor: absolute path of the Claude Code executable (a symlink is not followed); its ' +
        'SHA-256 must be the one the finite-review profile pins.',
      helpValue: 'PATH',
    }),
    'review-env': Flags.string({
      description:
        'A review descriptor: name of an environment variable passed to the executable (repeatable); nothing ' +
        'else of the environment is inherited.',
      multiple: true,
      helpValue: 'NAME',
    }),
  };

  async run(): Promise<JsonObject> {
    const { flags } = await this.parse(AgentTaskCollect);
    const dataDir = this.resolveDataDir(flags['data-dir']);
    // Both open nothing until used: the checks read, a local upload imports (nothing with --endpoint).
    const store = openStore(dataDir, { mode: 'read' });
    const uploadStore = openStore(dataDir, { mode: 'write' });
    let result: CollectResult;
    try {
      if (flags.repository !== undefined) requireDescriptorRepository(store, flags.descriptor, flags.repository);
      result = await collect({
        store,
        uploadStore,
        descriptorFile: flags.descriptor,
        keyFile: flags.key,
        stateDir: flags['state-dir'],
        docker: flags.docker,
        dockerSocket: flags['docker-socket'],
        tokenFile: flags['token-file'],
        endpoint: flags.endpoint,
        reviewExecutable: flags['review-executable'],
        reviewEnv: flags['review-env'],
        agentscmVersion: this.config.version,
        onProgress: this.progressSink,
      });
    } finally {
      uploadStore.close();
      store.close();
    }
    printCollectResult((line) => this.log(line), result);
    return collectResultJson(result);
  }
}
