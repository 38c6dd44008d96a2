/** A count with its noun in the right number, for human output: `1 file`, `0 files`, `4 changed paths`. */
export function counted(count: number | bigint, singular: string, plural = `${singular}s`): string {
  return `${String(count)} ${count === 1 || count === 1n ? singular : plural}`;
}
