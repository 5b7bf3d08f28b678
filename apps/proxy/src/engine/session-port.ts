import type { Socket } from "node:net";
import type { Frame, PgError, TransactionStatus } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { ClientWriter } from "../executor/client-writer.js";
import type { Leg } from "../executor/leg.js";
import type { Relay, Unit } from "../executor/relay.js";
import type { Logger } from "../log.js";
import type { ObservedClient } from "../observability/observed-client.js";
import type { SessionReplicas } from "../replicas/session-replicas.js";
import type { Route } from "../routing/router.js";
import type { ProxyRuntime } from "../server/runtime.js";
import type { HeldSqlStatements } from "../session/held-sql-statements.js";
import type { SessionPins } from "../session/session-pins.js";
import type { SessionSettings } from "../session/session-settings.js";
import type { Transaction } from "../session/transaction.js";
import type { ClientConnection, SessionPhase } from "../wire/client-connection.js";
import type { LegSet, RegionRole } from "./leg-set.js";
import type { StatementMode } from "./statement-mode.js";
import type { TransactionBlock } from "./transaction-block.js";

/**
 * The extended-protocol batch in flight (session/extended-query.ts), as the executors see it:
 * whether one is open, the region it wrote, and the connections it used (each gets the Sync).
 */
export interface ExtendedBatch {
  readonly inBatch: boolean;
  /** The region the batch (outside a block) wrote, or null: a second one makes it distributed. */
  batchWriteRegion: string | null;
  /** `leg` took part in the batch: it gets the batch's Sync. */
  touch(leg: Leg): void;
  /** The batch failed at the proxy: messages up to the Sync are skipped, as the server skips them. */
  abortBatch(): void;
  /**
   * SQL DEALLOCATE of a statement the client prepared with the protocol (one namespace in
   * PostgreSQL): forgets it and returns true, or false when the proxy holds no such statement.
   */
  forgetStatement(name: string): boolean;
  /** Whether the client prepared a statement of this name with the protocol. */
  holdsStatement(name: string): boolean;
  /** DEALLOCATE ALL or DISCARD ALL succeeded: every named statement of the protocol goes too. */
  forgetStatements(): void;
  /** The refusal of a batch outside a block that wrote `written` and now writes `attempted`. */
  refuseAcross(written: string, attempted: string): PgError;
}

/** The fast lane (session/fast-lane.ts) as the rest of the session sees it. */
export interface FastLanePort {
  /**
   * The analyses the lane made of the Query `sql` (or the error) before leaving it to the
   * general path, once: the general path takes them rather than analysing the text again, so the
   * analysis cache counts one hit or miss per Query, as without the lane.
   */
  takeAnalyses(sql: string): readonly Analysis[] | PgError | undefined;
  /** A CancelRequest: the statement's backend is cancelled, and its connection closed afterwards. */
  cancel(): void;
  /** The session ends: a statement still running is cancelled and its connection closed. */
  abandon(): void;
  /** Writes what was read of the answer so far (before an error of the proxy's own). */
  flush(): void;
}

/** Where a client's messages go instead of its statements' path: a replication connection's backend. */
export interface ClientPipe {
  fromClient(frame: Frame): Promise<void>;
}

/**
 * What a statement executor (single region, scatter-gather, distributed write, transaction
 * control, settings) may use of the client's session. Defined apart from the Session class so
 * the executors, which the session calls, never import it back: dependencies point one way.
 */
export interface SessionPort {
  readonly id: number;
  readonly log: Logger;
  readonly socket: Socket;
  readonly client: ClientConnection;
  readonly writer: ClientWriter;
  readonly relay: Relay;
  readonly runtime: ProxyRuntime;
  readonly phase: SessionPhase;
  readonly closed: Promise<void>;
  /** True when nothing is in flight and no block is open. */
  readonly idle: boolean;
  user: string;
  database: string;
  settings: SessionSettings;
  readonly pins: SessionPins;
  readonly replicas: SessionReplicas;
  /** Replicated tables this session wrote at their writer: read from there from now on. */
  readonly writerReads: Set<string>;
  /** SQL-level prepared statements the proxy holds because they run outside the session's region. */
  readonly sqlStatements: HeldSqlStatements;
  /** Work outside the connections that a CancelRequest must stop too (a scatter's regions). */
  readonly cancelHooks: Set<() => void>;
  readonly observed: ObservedClient;
  /** The statement the fast lane carries, if any. */
  readonly fastLane: FastLanePort;

  // Connections and the block.
  readonly legs: LegSet;
  readonly block: TransactionBlock;
  readonly txn: Transaction | null;
  readonly pinnedLeg: Leg | null;
  readonly batchLegs: RegionRole;
  readonly currentLeg: Leg | null;
  readonly extended: ExtendedBatch;
  /** Session pooling: the client keeps one connection for its whole session. */
  ownConnection: boolean;
  /** A replication connection: every message of the client's goes to its backend as it is. */
  replication: ClientPipe | null;
  cancelKey: { processId: number; secretKey: Buffer } | null;

  searchPath(): readonly string[] | undefined;
  status(): TransactionStatus;
  readyForQuery(): Buffer;

  /** The connection a statement for `region` runs on (session/leg-choice.ts explains the choice). */
  legFor(
    region: string,
    anywhere: boolean,
    mode: StatementMode,
    readsReplica?: boolean,
  ): Promise<Leg | PgError>;
  replaySettings(leg: Leg): Promise<PgError | null> | null;
  activate(leg: Leg): Promise<Leg>;
  reattach(leg: Leg): void;
  holdForBatch(leg: Leg): void;
  quiesceActive(): Promise<void>;
  settle(): Promise<void>;
  releaseLeg(leg: Leg): void;

  runRouted(
    analysis: Analysis,
    route: Route,
    mode: StatementMode,
    send: (leg: Leg) => void,
  ): Promise<Leg | null>;
  forwardUnread(bytes: Buffer): Promise<void>;
  runOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): Promise<void>;
  writeOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): void;
  recordEffects(leg: Leg | null, analyses: readonly Analysis[]): void;
  settleBatchPins(batchFailed: boolean): void;
  afterReady(leg: Leg, status: string | null): void;
  fail(error: PgError, mode: StatementMode): void;
  refuseInFailedBlock(analysis: Analysis, mode: StatementMode): boolean;
  fatal(error: PgError): void;
  cancel(): void;
  close(): void;
}
