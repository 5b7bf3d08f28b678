import { createHash } from "node:crypto";
import type { Analysis } from "@geo/sql";

/** A statement the client prepared, kept by the proxy and prepared lazily on backend connections. */
export interface ClientStatement {
  readonly name: string;
  readonly text: string;
  readonly paramTypes: readonly number[];
  readonly analysis: Analysis;
  /** When the client's Parse was processed: backend copies made earlier are never used. */
  readonly parsedAt: number;
  /** Its name on backend connections: derived from its text and types, so copies are shared. */
  readonly backendName: string;
  /** `backendName` and its NUL as a renamed Bind carries them, encoded once. */
  readonly backendNameBytes: Buffer;
  /** Parameter types a backend reported for it (ParameterDescription). */
  describedTypes: readonly number[] | null;
  /** The result columns the client was told when it described it (result-shape.ts), or null. */
  resultShape: string | null;
  /**
   * The server's check of the client's Parse, while its answer is due: resolves true when the
   * statement parsed. Messages the proxy answers itself wait for it, so a failed Parse fails
   * them as PostgreSQL would (they are skipped) rather than with a second error of their own.
   */
  checked: Promise<boolean> | null;
}

/** A backend copy of a client statement, in the connection's `preparedStatements` map. */
export interface BackendCopy {
  readonly preparedAt: number;
  /** Its result columns once a Describe of it was seen (result-shape.ts). */
  shape?: string;
}

/** How a copy's columns compare with the ones the client was told. */
export type ShapeCheck = "same" | "changed" | "failed";

/** The name a client statement gets on backend connections. */
export function backendNameOf(text: string, paramTypes: readonly number[]): string {
  const digest = createHash("sha1").update(text).update("\0").update(paramTypes.join(",")).digest("hex");
  return `geo_${digest.slice(0, 28)}`;
}
