import type { Lease } from "@geo/pool";
import {
  BackendCode,
  decodeDataRow,
  decodeErrorResponse,
  encodeBind,
  encodeExecute,
  encodeParse,
  isProtocolFault,
  Messages,
  PgError,
} from "@geo/proto";
import { leaseWithin } from "../executor/lease-within.js";
import { loginLookupTimedOut } from "./auth-errors.js";
import { parseStoredPassword } from "./stored-credential.js";
import type { VerifierLookup } from "./verifier-store.js";

/**
 * Reads a role's stored password from the home region with `sql`, the role bound as $1 (text) in
 * the extended protocol, so a role name is never spliced into SQL text. The first column of the
 * first row is read; no row, or NULL, means no usable password. An answer later than `timeoutMs`
 * (`[pool] lookup_timeout_ms`) fails the lookup naming `region`, and the connection is discarded.
 * The deadline covers the checkout too (it may reset a connection first): one budget per lookup.
 */
export function homeVerifierLookup(
  acquire: () => Promise<Lease>,
  sql: string,
  timeoutMs: number,
  region: string,
): VerifierLookup {
  return async (role) => {
    const timedOut = () => loginLookupTimedOut(region, "the verifier lookup", timeoutMs);
    const started = Date.now();
    const lease = await leaseWithin(acquire, timeoutMs, timedOut);
    try {
      const left = Math.max(1, timeoutMs - (Date.now() - started));
      const text = await firstValue(lease, sql, role, left, timedOut);
      lease.release();
      return parseStoredPassword(text);
    } catch (error) {
      lease.discard("verifier lookup failed");
      throw error;
    }
  };
}

function firstValue(
  lease: Lease,
  sql: string,
  role: string,
  timeoutMs: number,
  timedOut: () => Error,
): Promise<string | null> {
  const connection = lease.connection;
  return new Promise((resolve, reject) => {
    let value: string | null = null;
    let seen = false;
    let failure: Error | null = null;
    const timer = setTimeout(() => {
      connection.setReceiver(null);
      reject(timedOut());
    }, timeoutMs);
    connection.setReceiver({
      onFrame(frame) {
        switch (frame.code) {
          case BackendCode.DataRow: {
            if (seen) return;
            const row = decodeDataRow(frame.payload);
            seen = true;
            const first = isProtocolFault(row) ? null : row.values[0];
            value = first === null || first === undefined ? null : first.toString("utf8");
            return;
          }
          case BackendCode.ErrorResponse: {
            const error = decodeErrorResponse(frame.payload);
            failure = isProtocolFault(error) ? new Error(error.message) : PgError.fromFields(error.fields);
            return;
          }
          case BackendCode.ReadyForQuery:
            clearTimeout(timer);
            connection.setReceiver(null);
            if (failure !== null) reject(failure);
            else resolve(value);
            return;
          default:
            return;
        }
      },
      onBroken(error) {
        clearTimeout(timer);
        reject(error);
      },
    });
    connection.write([
      encodeParse({ name: "", sql, paramTypes: [25] }),
      encodeBind({
        portal: "",
        statement: "",
        paramFormats: [0],
        params: [Buffer.from(role, "utf8")],
        resultFormats: [0],
      }),
      encodeExecute({ portal: "", maxRows: 1 }),
      Messages.sync,
    ]);
  });
}
