/**
 * `npm run bench`: runs every bench/*.bench.ts in name order (or those named on the command
 * line). Each bench measures agentscm and a baseline in the same run and prints ratios; after
 * each, nine `node -e 0` runs print the floor of any Node CLI from the same run.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { floorLine, floorRuns } from './_floor.js';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => wanted.length === 0 || wanted.some((w) => name.includes(w)))
  .sort();
if (files.length === 0) {
  process.stderr.write('no benchmark matched\n');
  process.exit(2);
}
for (const file of files) {
  process.stdout.write(`\n=== ${file}\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { main?: () => Promise<void> };
  if (typeof mod.main !== 'function') throw new Error(`${file} exports no main()`);
  await mod.main();
  // The floor of any Node CLI, measured in this run right after the bench (bench/_floor.ts).
  process.stdout.write(floorLine(floorRuns()));
}
