/**
 * A process that imports one envelope file (what an upload does in the local authority), for the
 * tests that SIGKILL an import at a test pause point: argv = data dir, envelope file, token file.
 */
import { readFileSync } from 'node:fs';

import { formatJson } from '../../src/contracts/json/canonical-json.js';
import { readTokenFile } from '../../src/native/grant-token-file.js';
import { importCollectorTransfer } from '../../src/tasks/collector/import.js';
import { authorizeTaskToken } from '../../src/tasks/grant-guard.js';
import { openStore, withStore } from '../../src/tasks/store.js';

const [dataDir, envelopeFile, tokenFile] = process.argv.slice(2) as [string, string, string];
const grant = authorizeTaskToken({ store: openStore(dataDir, { mode: 'write' }), token: readTokenFile(tokenFile) });
const answer = withStore(dataDir, 'write', (held) => importCollectorTransfer(held, readFileSync(envelopeFile), grant));
process.stdout.write(`${formatJson(answer)}\n`);
