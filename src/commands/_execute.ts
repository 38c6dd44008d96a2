/**
 * The entry of the built CLI (bin/run.js imports it from dist/commands/_execute.js): oclif's
 * `execute` from the same bundle chunk that every built command imports, so the CLI framework
 * is loaded once (bin/bundle.js).
 */
export { execute } from '@oclif/core';
