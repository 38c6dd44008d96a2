import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../_base.js';
import { uploadEnvelopeFile, type UploadFileResult } from '../../collector/collect-upload.js';
import { formatJson } from '../../contracts/json/canonical-json.js';
import type { JsonObject } from '../../contracts/json/json-value.js';
import { openStore } from '../../tasks/store.js';

export default class AgentTaskUpload extends BaseCommand {
  static override summary = 'Upload a collector transfer envelope file as it is.';
  static override description =
    'Reads ENVELOPE (a regular file, or - for stdin; at most 16 MiB), checks its framing and record digests as ' +
    '`agent-task transfer show` does, and uploads its exact bytes: into the local authority of --data-dir, or to ' +
    'the hub when --endpoint is given. The authority then checks the signature, every binding and the records. ' +
    'For operators debugging a transfer; collections upload themselves.';

  static override examples = [
    '<%= config.bin %> --data-dir ./agentscm-data agent-task upload ' +
      '~/.agentscm-collector/collections/3f…/envelope.agscmtr --token-file ./collector.token',
    '<%= config.bin %> agent-task upload transfer.agscmtr --token-file ./collector.token --endpoint ' +
      'http://127.0.0.1:8080/v1/hub/workspace/repositories/acme/demo/profiles/default/agent-tasks --json',
  ];

  static override args = {
    envelope: Args.string({ description: 'Transfer envelope file, or - for stdin.', required: true }),
  };

  static override flags = {
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
    const { args, flags } = await this.parse(AgentTaskUpload);
    const store = openStore(this.resolveDataDir(flags['data-dir']), { mode: 'write' });
    let result: UploadFileResult;
    try {
      result = await uploadEnvelopeFile({
        store,
        envelopeFile: args.envelope,
        tokenFile: flags['token-file'],
        endpoint: flags.endpoint,
      });
    } finally {
      store.close();
    }
    this.log(
      `uploaded transfer ${result.transfer_digest} (${result.envelope_bytes} bytes) to ` +
        `${result.upload.target === 'local' ? 'the local authority' : 'the hub'}`,
    );
    this.log(formatJson(result.upload.answer));
    return {
      transfer_digest: result.transfer_digest,
      envelope_bytes: result.envelope_bytes,
      upload: { target: result.upload.target, answer: result.upload.answer },
    };
  }
}
