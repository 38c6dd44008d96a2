/**
 * The collector's private key file name (docs/wire.md "Keys"), apart from its decoder so that a
 * workspace scan, which only has to recognise the name, does not load the schema validator.
 */

/** The key file's name inside a collector state directory. */
export const KEY_FILE_NAME = 'signing-key.json';

/**
 * True for the key file's name and the temporary names it is written under
 * (`.signing-key.json.PID.HEX.tmp`): files a workspace scan never records.
 */
export function isKeyFileName(name: string): boolean {
  return name === KEY_FILE_NAME || (name.startsWith(`.${KEY_FILE_NAME}.`) && name.endsWith('.tmp'));
}
