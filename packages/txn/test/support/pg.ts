import pg from "pg";
import type { Participant, ParticipantConnector, QueryResult, RecoveryConnection } from "../../src/index.js";

/** node-postgres adapted to the coordinator's interfaces: simple protocol (no parameters), tag kept. */
export class PgConnection implements Participant, RecoveryConnection {
  readonly client: pg.Client;

  private constructor(
    readonly region: string,
    client: pg.Client,
  ) {
    this.client = client;
    // A terminated backend surfaces as an 'error' event; the failing query reports it to the coordinator.
    client.on("error", () => {});
  }

  static async open(region: string, url: string): Promise<PgConnection> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new PgConnection(region, client);
  }

  async query(sql: string): Promise<QueryResult> {
    const result = await this.client.query(sql);
    return { rows: result.rows as Array<Record<string, unknown>>, command: result.command };
  }

  async pid(): Promise<number> {
    return (await this.client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

export class PgConnector implements ParticipantConnector {
  constructor(private readonly urls: ReadonlyMap<string, string>) {}

  async connect(region: string): Promise<RecoveryConnection> {
    const url = this.urls.get(region);
    if (url === undefined) throw new Error(`no server for region ${region}`);
    return PgConnection.open(region, url);
  }
}

/** Rows with this id in each region's table t, in region order. */
export async function countsById(admins: readonly PgConnection[], id: number): Promise<number[]> {
  return Promise.all(
    admins.map(async (admin) =>
      Number((await admin.query(`SELECT count(*) AS n FROM t WHERE id = ${id}`)).rows[0]!["n"]),
    ),
  );
}

export async function preparedGids(admins: readonly PgConnection[]): Promise<string[]> {
  const lists = await Promise.all(
    admins.map(async (admin) => (await admin.query("SELECT gid FROM pg_prepared_xacts ORDER BY gid")).rows),
  );
  return lists.flat().map((row) => String(row["gid"]));
}

export const SCHEMA =
  "CREATE TABLE t (id int PRIMARY KEY, v text);" +
  "CREATE TABLE u (id int, CONSTRAINT u_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED);";
