import type { Decision, DecisionLog, DecisionRecord } from "./decision-log.js";
import type { SqlExecutor } from "./participant.js";
import { quoteLiteral } from "./sql-text.js";

export interface TableDecisionLogOptions {
  /** Autocommit connection (or pool) to the home region's primary; each statement commits on its own. */
  executor: SqlExecutor;
  /** Table name, optionally schema-qualified; plain identifiers only. Default `geo_txn_decisions`. */
  table?: string;
  /** How long a completed abort is kept so a coordinator that wakes up late still reads it. Default 1 h. */
  abortRetentionMs?: number;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * The decision log as a table in the home region's PostgreSQL, for proxies without durable local disk
 * or sharing one log. The primary key on gid makes "first decision wins" hold across processes:
 * `INSERT ... ON CONFLICT DO NOTHING`, then read back whichever row won.
 */
export class TableDecisionLog implements DecisionLog {
  private readonly executor: SqlExecutor;
  private readonly table: string;
  private readonly abortRetentionMs: number;

  private constructor(options: TableDecisionLogOptions) {
    this.executor = options.executor;
    this.table = options.table ?? "geo_txn_decisions";
    if (!TABLE_NAME.test(this.table)) throw new TypeError(`invalid decision table name "${this.table}"`);
    this.abortRetentionMs = options.abortRetentionMs ?? 3_600_000;
  }

  /** Creates the table if it is missing; safe to run from several proxies at once. */
  static async open(options: TableDecisionLogOptions): Promise<TableDecisionLog> {
    const log = new TableDecisionLog(options);
    try {
      await log.executor.query(
        `CREATE TABLE IF NOT EXISTS ${log.table} (` +
          "gid text PRIMARY KEY, " +
          "decision text NOT NULL CHECK (decision IN ('commit', 'abort')), " +
          "participants text[] NOT NULL, " +
          "decided_at timestamptz NOT NULL, " +
          "completed_at timestamptz)",
      );
    } catch (error) {
      // Two proxies creating it at the same instant: one wins, the other trips over its catalog rows.
      const code = (error as { code?: unknown }).code;
      if (code !== "23505" && code !== "42P07") throw error;
    }
    return log;
  }

  async decide(record: DecisionRecord): Promise<DecisionRecord> {
    const participants = `ARRAY[${record.participants.map(quoteLiteral).join(", ")}]::text[]`;
    const inserted = await this.executor.query(
      `INSERT INTO ${this.table} (gid, decision, participants, decided_at) VALUES (` +
        `${quoteLiteral(record.gid)}, ${quoteLiteral(record.decision)}, ${participants}, ` +
        `to_timestamp(${record.decidedAt / 1000})) ON CONFLICT (gid) DO NOTHING RETURNING gid`,
    );
    if (inserted.rows.length === 1) return record;
    // Read in a new statement so the winner's committed row is visible to our snapshot.
    const winner = await this.lookup(record.gid);
    if (winner === undefined) throw new Error(`decision for ${record.gid} neither inserted nor found`);
    return winner;
  }

  async complete(gid: string): Promise<void> {
    await this.executor.query(
      `UPDATE ${this.table} SET completed_at = now() WHERE gid = ${quoteLiteral(gid)} AND completed_at IS NULL`,
    );
  }

  async lookup(gid: string): Promise<DecisionRecord | undefined> {
    const result = await this.executor.query(`${this.select()} WHERE gid = ${quoteLiteral(gid)}`);
    const row = result.rows[0];
    return row === undefined ? undefined : toRecord(row);
  }

  async pending(): Promise<DecisionRecord[]> {
    const result = await this.executor.query(`${this.select()} WHERE completed_at IS NULL`);
    return result.rows.map(toRecord);
  }

  async compact(): Promise<void> {
    await this.executor.query(
      `DELETE FROM ${this.table} WHERE completed_at IS NOT NULL AND (decision = 'commit' OR ` +
        `completed_at < now() - make_interval(secs => ${this.abortRetentionMs / 1000}))`,
    );
  }

  async close(): Promise<void> {}

  /** Text columns only, so a simple-protocol executor and a decoding driver read the same values. */
  private select(): string {
    return (
      "SELECT gid, decision, array_to_json(participants)::text AS participants, " +
      "(extract(epoch FROM decided_at) * 1000)::bigint::text AS decided_ms " +
      `FROM ${this.table}`
    );
  }
}

function toRecord(row: Readonly<Record<string, unknown>>): DecisionRecord {
  return {
    gid: String(row["gid"]),
    decision: String(row["decision"]) as Decision,
    participants: JSON.parse(String(row["participants"])) as string[],
    decidedAt: Number(row["decided_ms"]),
  };
}
