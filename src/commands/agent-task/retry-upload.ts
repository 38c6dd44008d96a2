import { Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { retryUpload, type CollectResult } from '../../collector/collect-upload.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { openStore } from '../../tasks/store.js';
import { collectResultJson, printCollectResult } from './_collect-output.js';

export default class AgentTaskRetryUpload extends BaseCommand {
  static override summary = 'Send the signed envelope a collection retained again, byte for byte.';
  static override description =
    'Reads the envelope `agent-task collect` retained in --state-dir for --upload-request-id and uploads the ' +
    'identical bytes again: into the local authority of --data-dir, or to the hub when --endpoint is given. ' +
    'Nothing runs and nothing is signed again; an authority that already imported those bytes answers its ' +
    'retained view. COLLECT_NOT_RETAINED when the state directory holds no signed envelope for that id.';

  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task retry-upload --state-dir ~/.agentscm-collector ' +
      '--upload-request-id up-7 --token-file ./collector.token',
    '<%= config.bin %> agent-task retry-upload --state-dir ~/.agentscm-collector --upload-request-id up-7 ' +
      '--token-file ./collector.token --endpoint ' +
      'http://127.0.0.1:8080/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks --json',
  ];

  static override flags = {
    'state-dir': Flags.string({
      description: 'The collector state directory the collection used.',
      required: true,
      helpValue: 'DIR',
    }),
    'upload-request-id': Flags.string({
      description: 'The upload_request_id of the collection (printed by collect; in its descriptor).',
      required: true,
      helpValue: 'ID',
    }),
    'token-file': Flags.string({
      description: 'Token file of the grant to upload as (the bearer token).',
      required: true,
      helpValue: 'FILE',
    }),
    endpoint: Flags.string({
      description:
        "The hub's agent-tasks URL of the profile; the envelope is POSTed to its /collector-upload route instead " +
        'of the local authority.',
      helpValue: 'URL',
    }),
  };

  async run(): Promise<JsonObject> {
    const { flags } = await this.parse(AgentTaskRetryUpload);
    const store = openStore(this.resolveDataDir(flags['data-dir']), { mode: 'write' });
    let result: CollectResult;
    try {
      result = await retryUpload({
        store,
        stateDir: flags['state-dir'],
        uploadRequestId: flags['upload-request-id'],
        tokenFile: flags['token-file'],
        endpoint: flags.endpoint,
        onProgress: this.progressSink,
      });
    } finally {
      store.close();
    }
    printCollectResult((line) => this.log(line), result);
    return collectResultJson(result);
  }
}
