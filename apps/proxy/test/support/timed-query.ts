import pg from "pg";

/** A node-postgres client of the proxy on `port`, its connection errors left to the test's queries. */
export async function proxyClient(port: number): Promise<pg.Client> {
  const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

export interface Outcome {
  readonly ms: number;
  readonly error: (Error & { code?: string; hint?: string }) | undefined;
  readonly rows: unknown[][];
}

/** Runs `sql` and tells how long the answer or the error took to come. */
export async function timed(c: pg.Client, sql: string): Promise<Outcome> {
  const started = Date.now();
  try {
    const result = await c.query({ text: sql, rowMode: "array" });
    return { ms: Date.now() - started, error: undefined, rows: result.rows };
  } catch (error) {
    return { ms: Date.now() - started, error: error as Outcome["error"], rows: [] };
  }
}
