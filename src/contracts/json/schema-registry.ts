/**
 * The one list of published wire schemas (docs/wire.md "Strict JSON decoding": schemas kept in one
 * place and published under docs/schemas/).
 *
 * TO REGISTER YOUR DECODERS: add one side-effect import of the module that calls
 * defineDecoder (or a helper built on it) to the list below, keep the list sorted, then run
 *
 *     node --import tsx test/tools/publish-schemas.ts
 *
 * and commit docs/schemas/ with your change. test/contracts/schema-registry.test.ts fails
 * when a module under src/ defines a decoder that is not reachable from here, or when
 * docs/schemas/ differs from what the publisher would write. Wire schemas belong in
 * src/contracts/ (this file must not import a higher layer).
 */
import { definedDecoders, type Decoder } from './schema.js';
// --- registered decoder modules (one line each, sorted) ---
import '../agent-state.js';
import '../collector/descriptor.js';
import '../collector/profile.js';
import '../collector/requests.js';
import '../collector/transfer.js';
import '../collector/command-recipe.js';
import '../hub-config.js';
import '../instruction-entrypoint.js';
import '../key-file.js';
import '../named-reference.js';
import '../task/qualification.js';
import '../receipt/bundle.js';
import '../receipt/receipt-v2.js';
import '../review/collector-descriptor.js';
import '../review/context.js';
import '../review/policy.js';
import '../review/profile.js';
import '../review/record.js';
import '../review/request.js';
import '../task/task.js';
import '../task/attempt.js';
import '../task/capabilities.js';
import '../task/operations.js';
import '../task/recovery.js';
import '../task/requests.js';
import '../task/result.js';
import '../task/subject.js';
import '../workflow-definition.js';

// --- end of registered decoder modules ---

/** Every published decoder, sorted by id (docs/wire.md "Strict JSON decoding"). */
export function allDecoders(): readonly Decoder<unknown>[] {
  return definedDecoders().filter((decoder) => !decoder.id.startsWith('test.'));
}
