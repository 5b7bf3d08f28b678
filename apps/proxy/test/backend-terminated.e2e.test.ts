import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";

// Transaction pooling: the backend running a client's statement is terminated. The server's
// FATAL reaches the client as the statement's answer, and then the connection ends, as it does
// directly: one error, then the close (node-postgres' query-error-handling-prepared-statement).
let region: OneRegion;

beforeAll(async () => {
  region = await startOneRegion({ extraToml: "\n[pool]\nmax = 4\n" });
});
afterAll(() => region?.close());

/** What a client sees when the backend running its `pg_sleep` is terminated from elsewhere. */
async function terminatedMidStatement(target: "direct" | "proxy", extended: boolean): Promise<string[]> {
  const port = target === "proxy" ? region.proxy.port : region.direct.port;
  const options = { host: "127.0.0.1", port, user: "postgres", database: "postgres" };
  const victim = new pg.Client(options);
  const seen: string[] = [];
  victim.on("error", (error: Error & { code?: string }) =>
    seen.push(`event ${error.code ?? ""} ${error.message}`),
  );
  const ended = new Promise<void>((resolve) => victim.once("end", () => resolve()));
  await victim.connect();
  // The sleeper's text, unique to this run, finds its backend in pg_stat_activity.
  const text = `SELECT pg_sleep(5) /* ${target} ${extended ? "extended" : "simple"} */`;
  const statement = victim.query(extended ? { text: `${text} WHERE $1::int = 1`, values: [1] } : text).then(
    () => seen.push("statement answered"),
    (error: Error & { code?: string }) => seen.push(`statement ${error.code} ${error.message}`),
  );
  const admin = new pg.Client({ ...options, port: region.direct.port });
  await admin.connect();
  try {
    let killed = 0;
    for (let i = 0; i < 100 && killed === 0; i++) {
      await new Promise((r) => setTimeout(r, 30));
      const result = await admin.query(
        "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()) AS t",
        [`${text}%`],
      );
      killed = result.rows[0].n;
    }
    expect(killed).toBe(1);
    await statement;
    const closed = await Promise.race([
      ended.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 3000)),
    ]);
    seen.push(closed ? "connection closed" : "connection still open");
    return seen;
  } finally {
    await admin.end();
    await victim.end().catch(() => undefined);
  }
}

describe("a client whose backend is terminated mid-statement, in transaction pooling", () => {
  it.each([
    ["a simple Query", false],
    ["an extended batch", true],
  ])("hears the server's FATAL once and is disconnected, as directly (%s)", async (_what, extended) => {
    const direct = await terminatedMidStatement("direct", extended);
    expect(direct[0]).toContain("57P01");
    expect(direct.at(-1)).toBe("connection closed");
    expect(await terminatedMidStatement("proxy", extended)).toEqual(direct);
  });
});
