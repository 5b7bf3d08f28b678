/** The result of one simple-protocol statement, as much of it as @geo/txn reads. */
export interface QueryResult {
  /** Rows keyed by column name; values as text or as the driver decoded them. */
  readonly rows: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /**
   * The CommandComplete tag, or at least its first word. PREPARE TRANSACTION in a transaction that
   * already failed answers `ROLLBACK` instead of an error, so the coordinator must see it.
   */
  readonly command?: string | null | undefined;
}

/** Runs one simple-protocol statement; rejects with an error carrying `.code` (a SQLSTATE). */
export interface SqlExecutor {
  query(sql: string): Promise<QueryResult>;
  /**
   * Told when the coordinator or recovery stopped waiting for the answer to a statement (its step
   * deadline passed): the connection's state is unknown, since the statement may still take effect,
   * so it must be closed and never reused. Adapters without it are simply no longer waited on.
   */
  abandon?(reason: Error): void;
}

/**
 * One region's connection inside an open transaction (after BEGIN and the writes). The proxy adapts
 * its pooled backend connections to this; tests adapt node-postgres or an in-memory fake.
 */
export interface Participant extends SqlExecutor {
  readonly region: string;
}

/** A connection opened for recovery: outside any transaction, to the database the proxy writes to. */
export interface RecoveryConnection extends SqlExecutor {
  close(): Promise<void>;
}

/** Opens connections to a region, for recovery and for retrying COMMIT PREPARED on a fresh connection. */
export interface ParticipantConnector {
  connect(region: string): Promise<RecoveryConnection>;
}
