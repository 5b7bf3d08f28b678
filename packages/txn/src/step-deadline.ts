import type { ParticipantConnector, QueryResult, RecoveryConnection, SqlExecutor } from "./participant.js";

/** The error `withinDeadline` rejects with, made by the caller so it names the region and the step. */
export type TimeoutError = () => Error;

/**
 * Runs `sql` and waits at most `timeoutMs` for its answer. Past it the executor is abandoned (its
 * connection closed, as its state is unknown: the statement may still land) and the promise rejects
 * with `timedOut()`. A frozen server never answers and a TCP connection to it never breaks by
 * itself, so every statement the coordinator and recovery send goes through here.
 */
export async function queryWithin(
  executor: SqlExecutor,
  sql: string,
  timeoutMs: number,
  timedOut: TimeoutError,
): Promise<QueryResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        const error = timedOut();
        try {
          executor.abandon?.(error);
        } catch {
          // An adapter's failure to close changes nothing: the statement is no longer waited on.
        }
        reject(error);
      },
      Math.max(1, timeoutMs),
    );
  });
  try {
    return await Promise.race([executor.query(sql), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens a connection through `connector`, waiting at most `timeoutMs`; a connection that arrives
 * after the deadline is closed at once, so no connection is left behind by a caller that moved on.
 */
export async function connectWithin<C extends RecoveryConnection = RecoveryConnection>(
  connector: ParticipantConnector | { connect(region: string): Promise<C> },
  region: string,
  timeoutMs: number,
  timedOut: TimeoutError,
): Promise<C> {
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const opening = connector.connect(region) as Promise<C>;
  opening.then(
    (connection) => {
      if (expired) connection.close().catch(() => {});
    },
    () => {},
  );
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        expired = true;
        reject(timedOut());
      },
      Math.max(1, timeoutMs),
    );
  });
  try {
    return await Promise.race([opening, late]);
  } finally {
    clearTimeout(timer);
  }
}
