/** Exit codes of docs/wire.md "CLI conventions", and the shape of one family's rows of the error table. */

/** Exit codes of docs/wire.md: 0 ok, 1 reported failure/blocking, 2 usage/invalid input, 3 conflict, 4 unavailable. */
export const EXIT = {
  OK: 0,
  FAILED: 1,
  INVALID: 2,
  CONFLICT: 3,
  UNAVAILABLE: 4,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface CodeInfo {
  readonly exit: ExitCode;
  readonly summary: string;
}

/** One family of codes: `title` is its section heading in docs/errors.md. */
export interface ErrorSection {
  readonly title: string;
  readonly codes: Readonly<Record<string, CodeInfo>>;
}
