import type postgres from "postgres";

/** A pool as postgres.js hands it out: a tagged template that also carries begin/unsafe/end. */
export type Sql = postgres.Sql;

/** Checks one endpoint; resolves when it answered, rejects otherwise. */
export type ProbeFunction = (sql: Sql, timeoutMs: number) => Promise<void>;

/**
 * `SELECT 1` bounded by `timeoutMs`. The bound matters more than the query: an endpoint that
 * black-holes packets would otherwise hold the probe for postgres.js' connect_timeout (30 s).
 * The query is cancelled on timeout so it does not linger in the pool's queue.
 */
export const selectOne: ProbeFunction = async (sql, timeoutMs) => {
  const query = sql`select 1`;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      query.cancel();
      reject(new Error(`no answer to SELECT 1 within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    await Promise.race([query, deadline]);
  } finally {
    clearTimeout(timer);
  }
};
