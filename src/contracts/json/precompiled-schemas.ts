/**
 * The validators of the registered schemas (src/contracts/json/schema-registry.ts), compiled when
 * the CLI is built. Run from the sources there are none (undefined) and every decoder compiles its
 * schema with ajv on first use; bin/bundle.js replaces this module in the built CLI with the code
 * bin/precompile-schemas.ts generates (ajv's standalone code, one validator per decoder id), so a
 * command neither loads ajv nor compiles a schema at run time (docs/dependencies.md "The built CLI").
 */
import type { ValidateFunction } from 'ajv';

export const PRECOMPILED: ReadonlyMap<string, ValidateFunction> | undefined = undefined;
