import { BaseCommand } from '../_base.js';
import type { JsonValue } from '../../contracts/json/json-value.js';
import { inputArg, runOperation } from './_operation.js';

export default class AgentStateValidate extends BaseCommand {
  static override summary = 'Check an agent-state envelope v1 (exit 0 valid, 2 invalid).';
  static override description =
    'Strict decoding (docs/schemas/agent-state-v1.schema.json: unknown fields, missing capabilities and ' +
    'unsupported versions are refused) and the rules a schema cannot state: blocked_reason set exactly when the ' +
    'state is blocked, no result while queued or working, canonical scope paths each declared once. Prints ' +
    '{valid: true, state}.';
  static override examples = [
    '<%= config.bin %> agent-state validate state.json --json',
    'cat state.json | <%= config.bin %> agent-state validate',
  ];
  static override args = inputArg;

  async run(): Promise<JsonValue> {
    const { args } = await this.parse(AgentStateValidate);
    return runOperation('validate', args.file, (line) => this.log(line));
  }
}
