/**
 * A region answered with columns of other types than the cached shapes said (the schema changed):
 * the statement is described again and run once more.
 */
export class StaleShape extends Error {
  constructor(readonly region: string) {
    super(`the columns region ${region} answered with differ from the described ones`);
  }
}
