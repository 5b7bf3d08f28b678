import { BackendCode, type Frame } from "@geo/proto";
import type { Leg } from "./leg.js";

// The entries of a session's output queue (relay.ts): what a backend answers one message with,
// and the bytes the proxy answers itself in their place.

/**
 * What a backend answers one message with. A `query` unit (simple Query, the proxy's own
 * statements) ends at ReadyForQuery; the extended-protocol units end at their own reply, or at an
 * ErrorResponse, after which the backend skips everything up to Sync.
 */
export const UNIT_KINDS = [
  "query",
  "parse",
  "bind",
  "describe-statement",
  "describe-portal",
  "execute",
  "close",
  "sync",
] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

/**
 * `relay`: every message goes to the client. `quiet`: only errors do (the proxy's own preparation:
 * a replayed SET, the lazily sent Parse whose failure is the client's statement's failure).
 * `silent`: nothing does.
 */
export type UnitMode = "relay" | "quiet" | "silent";

export interface Unit {
  readonly type: "unit";
  readonly leg: Leg;
  readonly kind: UnitKind;
  readonly mode: UnitMode;
  /** For `query` units answering inside a larger exchange: keep the ReadyForQuery from the client. */
  readonly dropReadyForQuery?: boolean | undefined;
  /** Set when the unit's answer included an ErrorResponse. */
  failed: boolean;
  /** Called once the unit's answer is complete (also after an error). */
  readonly done?: ((unit: Unit, status: string | null) => void) | undefined;
  /** Called instead of `done` when the backend skipped the message after an earlier error. */
  readonly skipped?: (() => void) | undefined;
  /** Sees every frame of the answer before it is relayed (e.g. to read a ParameterDescription). */
  readonly inspect?: ((frame: Frame) => void) | undefined;
  /** The proxy's own deliberate error (aborting a batch): it ends the unit and nothing else. */
  readonly expectError?: boolean | undefined;
}

/** Bytes the proxy answers itself, in their place among the backends' answers. */
export interface LocalEntry {
  readonly type: "local";
  /** Bytes, or a function computing them when their turn comes (e.g. ReadyForQuery's status). */
  readonly bytes: Buffer | (() => Buffer | null);
  /** An ErrorResponse in extended mode: what follows up to Sync is skipped, as PostgreSQL does. */
  readonly error?: boolean | undefined;
  /** The answer to the client's Sync: skipping stops here. */
  readonly syncAnswer?: boolean | undefined;
  readonly effect?: (() => void) | undefined;
  readonly skipped?: (() => void) | undefined;
}

export type Entry = Unit | LocalEntry;

/** Whether a backend message of `code` completes the answer of a unit of `kind` (an error aside). */
export function endsUnit(kind: UnitKind, code: number): boolean {
  switch (kind) {
    case "parse":
      return code === BackendCode.ParseComplete;
    case "bind":
      return code === BackendCode.BindComplete;
    case "close":
      return code === BackendCode.CloseComplete;
    case "describe-statement":
    case "describe-portal":
      return code === BackendCode.RowDescription || code === BackendCode.NoData;
    case "execute":
      return (
        code === BackendCode.CommandComplete ||
        code === BackendCode.EmptyQueryResponse ||
        code === BackendCode.PortalSuspended
      );
    case "query":
    case "sync":
      return false;
  }
}
