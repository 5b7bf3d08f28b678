import { createHash } from "node:crypto";
import type { ParamValue } from "@geo/core";
import {
  BackendCode,
  BindView,
  decodeBind,
  decodeClose,
  decodeDescribe,
  decodeParameterDescription,
  decodeParse,
  encodeClose,
  encodeDescribe,
  encodeExecute,
  encodeParameterDescription,
  encodeParse,
  type Frame,
  FrontendCode,
  isProtocolFault,
  Messages,
  PgError,
  protocolViolation,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { finishDistributedBatch } from "../distributed/distributed-batch.js";
import { copyBind, DistributedPortal } from "../distributed/distributed-portal.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { runTransactionControl } from "../engine/transaction-control.js";
import {
  duplicateStatement,
  refuseBatchAcrossRegions,
  unknownPortal,
  unknownStatement,
  unreadableBinaryKey,
} from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import type { Unit } from "../executor/relay.js";
import type { Route } from "../routing/router.js";
import { resultTypeChanged } from "../scatter/errors.js";
import { boundParams, ScatterPortal } from "../scatter/scatter-portal.js";
import { decodeBinaryParam } from "./binary-params.js";
import { consoleDescription, runConsole } from "./console-statement.js";
import { shapeOf } from "./result-shape.js";
import { runSessionStatement } from "./session-statement.js";

const EXTENDED: StatementMode = { extended: true, final: false };

/** A statement the client prepared, kept by the proxy and prepared lazily on backend connections. */
interface ClientStatement {
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

interface Portal {
  readonly statement: ClientStatement;
  /** The backend connection holding it, or null for a statement the proxy answers itself. */
  readonly leg: Leg | null;
  readonly local: "transaction" | "session" | "console" | "empty" | null;
  /** A read spanning regions: Describe and Execute go to the scatter executor. */
  readonly scatter?: ScatterPortal;
  /** A write spanning regions: Execute runs it in each region, in one distributed transaction. */
  readonly distributed?: DistributedPortal;
}

/** A backend copy of a client statement, in the connection's `preparedStatements` map. */
interface BackendCopy {
  readonly preparedAt: number;
  /** Its result columns once a Describe of it was seen (result-shape.ts). */
  shape?: string;
}

/** How a copy's columns compare with the ones the client was told. */
type ShapeCheck = "same" | "changed" | "failed";

/** The portal name the proxy executes to fail a backend's batch on purpose (it never exists). */
const ABORT_PORTAL = "geoproxy abort";

/**
 * The extended query protocol. Parse is answered by the proxy, which keeps the statement; Bind
 * decides the route from the bound values and prepares the statement on the chosen connection
 * if that connection has no copy newer than the client's Parse; Describe, Execute and Close go
 * to the connection holding the portal. Messages are written to backends as they come
 * (pipelined); answers are put back in order by the relay. After an error everything up to Sync
 * is skipped, by the backends and by the proxy alike.
 *
 * One handler per message of the protocol, all sharing the batch's state (statements, portals,
 * the connections touched, the skip after an error): hence one file longer than most.
 */
export class ExtendedQuery {
  private readonly statements = new Map<string, ClientStatement>();
  private readonly portals = new Map<string, Portal>();
  private readonly touched = new Set<Leg>();
  private skipping = false;
  private syncsPending = 0;
  /** Outside a transaction block: the region this batch wrote in (a batch may not go on elsewhere). */
  batchWriteRegion: string | null = null;
  /** Between the first extended message and its Sync. */
  inBatch = false;
  /** Errors the client had been sent when the batch began: more at Sync means it failed. */
  private errorsAtBatchStart = 0;

  constructor(private readonly session: SessionPort) {}

  touch(leg: Leg): void {
    this.touched.add(leg);
  }

  /** A backend error was sent to the client: skip its messages up to Sync if it was not sent yet. */
  onError(): void {
    if (this.syncsPending === 0) this.skipping = true;
  }

  forgetStatement(name: string): boolean {
    const statement = name === "" ? undefined : this.statements.get(name);
    if (statement === undefined) return false;
    this.statements.delete(name);
    this.closeOwnCopy(statement);
    return true;
  }

  /**
   * With a connection of its own (session pooling) the client's statements are its alone there:
   * a deallocated one is closed on the server too, as its pg_prepared_statements would show,
   * unless another of its statements (same text and types) shares the copy.
   */
  private closeOwnCopy(statement: ClientStatement): void {
    const session = this.session;
    const leg = session.pinnedLeg;
    if (!session.ownConnection || leg === null || leg.broken !== null || leg !== session.currentLeg) return;
    for (const other of this.statements.values()) if (other.backendName === statement.backendName) return;
    const copies = leg.connection.preparedStatements;
    if (!copies.delete(statement.backendName)) return;
    session.relay.expect({ leg, kind: "close", mode: "silent" });
    leg.write([encodeClose({ target: "S", name: statement.backendName }), Messages.flush]);
  }

  holdsStatement(name: string): boolean {
    return name !== "" && this.statements.has(name);
  }

  forgetStatements(): void {
    for (const name of [...this.statements.keys()]) if (name !== "") this.statements.delete(name);
  }

  refuseAcross(written: string, attempted: string): PgError {
    return refuseBatchAcrossRegions(written, attempted);
  }

  /**
   * The proxy refuses a statement mid-batch: backends that already ran part of the batch outside
   * a transaction block must not commit it at Sync, so each is made to fail (as the batch would
   * have failed on one server), which rolls its part back.
   */
  abortBatch(): void {
    this.skipping = true;
    if (this.session.txn !== null) return;
    // Only the leg in use can have part of the batch in flight; the others were synced... or not:
    // each gets the failing Execute in turn, after the previous one answered.
    const legs = [...this.touched].filter((leg) => leg.broken === null);
    this.aborting = (async () => {
      for (const leg of legs) {
        await this.session.activate(leg);
        this.session.relay.expect({ leg, kind: "execute", mode: "silent", expectError: true });
        leg.write(encodeExecute({ portal: ABORT_PORTAL, maxRows: 0 }));
      }
    })();
  }

  /**
   * Where the client's unnamed statement was last parsed: a Bind or Describe on that connection
   * with nothing written in between uses it as it is.
   */
  private unnamed: { leg: Leg; statement: ClientStatement; writeCount: number } | null = null;

  /** The abort of the current batch, which must be written before its Sync. */
  private aborting: Promise<void> | null = null;

  async handle(frame: Frame): Promise<void> {
    if (frame.code === FrontendCode.Sync) {
      await this.sync();
      return;
    }
    if (!this.inBatch) this.errorsAtBatchStart = this.session.relay.errorsSent;
    this.inBatch = true;
    if (this.skipping) return;
    switch (frame.code) {
      case FrontendCode.Parse:
        await this.parse(frame);
        return;
      case FrontendCode.Bind:
        await this.bind(frame);
        return;
      case FrontendCode.Describe:
        await this.describe(frame);
        return;
      case FrontendCode.Execute:
        await this.execute(frame);
        return;
      case FrontendCode.Close:
        await this.close(frame);
        return;
      case FrontendCode.Flush: {
        const leg = this.session.currentLeg;
        if (leg !== null && leg.outstanding > 0 && leg.broken === null) leg.write(Messages.flush);
        return;
      }
    }
  }

  private async parse(frame: Frame): Promise<void> {
    const message = decodeParse(frame.payload);
    if (isProtocolFault(message)) {
      this.session.fatal(protocolViolation(message));
      return;
    }
    const session = this.session;
    if (message.name !== "" && this.statements.has(message.name)) {
      session.fail(duplicateStatement(message.name), EXTENDED);
      return;
    }
    const analysis = session.runtime.router.analyze(message.sql);
    if (analysis instanceof PgError) {
      session.fail(analysis, EXTENDED);
      return;
    }
    // PostgreSQL refuses every Parse but ROLLBACK and COMMIT in a failed block (25P02).
    if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
    const backendName = message.name === "" ? "" : backendNameOf(message.sql, message.paramTypes);
    const statement: ClientStatement = {
      name: message.name,
      text: message.sql,
      paramTypes: message.paramTypes,
      analysis,
      parsedAt: session.runtime.nextSequence(),
      backendName,
      backendNameBytes: Buffer.from(`${backendName}\0`, "utf8"),
      describedTypes: null,
      resultShape: null,
      checked: null,
    };
    const previous = this.statements.get(message.name);
    this.statements.set(message.name, statement);
    const undo = (): void => {
      if (this.statements.get(message.name) !== statement) return;
      if (previous === undefined) this.statements.delete(message.name);
      else this.statements.set(message.name, previous);
    };
    const route = session.runtime.router.route(analysis, undefined, session.searchPath());
    // A named SET, RESET, DISCARD... the proxy runs itself. With a connection of its own
    // (session pooling) the client's server lists every statement it prepared in
    // pg_prepared_statements, those too: they are prepared there as well (never executed there).
    const ownCopy =
      route.kind === "local" && route.what === "session" && message.name !== "" && session.ownConnection
        ? session.pinnedLeg
        : null;
    if (
      // Only a statement whose region is known now is checked now: one routed by its parameters
      // (or read across regions) would hold a connection here that its Bind may not use, so its
      // server error arrives at Bind, from the region that runs it.
      (route.kind !== "region" && ownCopy === null) ||
      // A server's Parse of a write takes the table's RowExclusiveLock until Sync, and the Bind
      // after it may wait for a move of its key, which waits for that lock: with moves, writes
      // are checked by the server at Bind instead.
      (session.runtime.moves !== undefined && !analysis.readOnly)
    ) {
      // The proxy answers these itself (or refuses them at Bind): no server has to check them.
      session.relay.local({ bytes: Messages.parseComplete, skipped: undo });
      return;
    }
    // The server checks the statement now, so its error (or ParseComplete) arrives where
    // PostgreSQL sends it; the Bind that follows on the same connection reuses this copy.
    const region = ownCopy?.region ?? session.runtime.router.describeRegion(analysis);
    const checkRoute: Route = { kind: "region", region, readOnly: true, anywhere: false };
    let settle: (parsed: boolean) => void = () => undefined;
    statement.checked = new Promise((resolve) => {
      settle = resolve;
    });
    const leg = await session.runRouted(analysis, checkRoute, EXTENDED, (l) => {
      this.prepareOn(l, statement, {
        done: (unit) => {
          if (unit.failed) undo();
          statement.checked = null;
          settle(!unit.failed);
        },
        // Skipped after an earlier error of the batch: the Parse never happened, as on one server.
        skipped: () => {
          undo();
          statement.checked = null;
          settle(false);
        },
      });
    });
    if (leg === null) {
      statement.checked = null;
      settle(false);
    }
  }

  private async bind(frame: Frame): Promise<void> {
    const session = this.session;
    const view = BindView.from(frame.payload);
    if (isProtocolFault(view)) {
      session.fatal(protocolViolation(view));
      return;
    }
    const statement = this.statements.get(view.statement);
    if (statement === undefined) {
      session.fail(unknownStatement(view.statement), EXTENDED);
      return;
    }
    const analysis = statement.analysis;
    if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
    const moves = session.runtime.moves;
    if (moves !== undefined) {
      // Held while a move has its key; released once the batch's Sync is answered.
      const values = this.paramValues(view, statement, []);
      const admission = await moves.admit(
        session,
        [analysis],
        values instanceof PgError ? undefined : values,
      );
      if (admission instanceof PgError) {
        session.fail(admission, EXTENDED);
        return;
      }
      moves.admitted(session, admission);
    }
    const router = session.runtime.router;
    let route: Route = router.route(analysis, undefined, session.searchPath());
    if (route.kind === "deferred") {
      if (this.bindsUntypedBinaryKey(view, statement, route.params)) {
        // Its type decides how to read it: ask a server, as PostgreSQL computes it at Parse.
        await this.learnParameterTypes(statement);
        if (this.skipping) return;
      }
      const params = this.paramValues(view, statement, route.params);
      if (params instanceof PgError) {
        session.fail(params, EXTENDED);
        return;
      }
      route = router.route(analysis, params, session.searchPath());
    }
    session.observed.routed(route);
    if ((route.kind === "local" || route.kind === "multi-region") && statement.checked !== null) {
      // The proxy answers this portal itself: first the server's verdict on the Parse.
      await session.settle();
      await statement.checked;
      if (this.skipping) return;
    }
    if (route.kind === "local") {
      this.portals.set(view.portal, { statement, leg: null, local: route.what });
      session.relay.local({ bytes: Messages.bindComplete });
      return;
    }
    if (route.kind === "multi-region" && route.plan.kind === "scatter") {
      const bind = decodeBind(frame.payload);
      if (isProtocolFault(bind)) {
        session.fatal(protocolViolation(bind));
        return;
      }
      const scatter = new ScatterPortal(
        analysis,
        route.plan,
        boundParams(bind, statement.paramTypes),
        bind.resultFormats,
      );
      this.portals.set(view.portal, { statement, leg: null, local: null, scatter });
      session.relay.local({ bytes: Messages.bindComplete });
      return;
    }
    if (route.kind === "multi-region" && route.plan.kind === "distributed-write") {
      const bind = decodeBind(frame.payload);
      if (isProtocolFault(bind)) {
        session.fatal(protocolViolation(bind));
        return;
      }
      const distributed = new DistributedPortal(analysis, route.plan, copyBind(bind), statement.paramTypes);
      this.portals.set(view.portal, { statement, leg: null, local: null, distributed });
      session.relay.local({ bytes: Messages.bindComplete });
      return;
    }
    const portalName = view.portal;
    const sendBind = (leg: Leg, name: string): void => {
      session.relay.expect({ leg, kind: "bind", mode: "relay" });
      // The unnamed statement keeps its name on the backend: the Bind goes as the client sent it.
      leg.write(name === "" ? frame.bytes : renameBind(frame.payload, statement.backendNameBytes));
      this.portals.set(portalName, { statement, leg, local: null });
    };
    let check: { leg: Leg; outcome: Promise<ShapeCheck> } | null = null;
    await session.runRouted(analysis, route, EXTENDED, (leg) => {
      const name = this.prepareOn(leg, statement);
      const copy = name === "" ? undefined : (leg.connection.preparedStatements.get(name) as BackendCopy);
      if (statement.resultShape !== null && copy !== undefined && copy.shape !== statement.resultShape) {
        // The client decodes rows by the columns it was told: a copy not known to have them is
        // described first, and nothing runs until it is (a write must not run to then fail).
        check = { leg, outcome: this.checkShape(leg, statement, copy) };
        return;
      }
      sendBind(leg, name);
    });
    if (check === null) return;
    const { leg, outcome } = check as { leg: Leg; outcome: Promise<ShapeCheck> };
    const checked = await outcome;
    if (checked === "changed") session.fail(resultTypeChanged(), EXTENDED);
    // "failed": the server's error went to the client, and the batch skips to its Sync.
    else if (checked === "same" && !this.skipping) sendBind(leg, statement.backendName);
  }

  /**
   * Describes `copy` of `statement` on `leg` (flushed, so the answer comes now) and compares its
   * columns with those the client was told. A copy with other columns is forgotten: every Bind
   * to it fails the same way until the client prepares the statement again, as on one server.
   */
  private checkShape(leg: Leg, statement: ClientStatement, copy: BackendCopy): Promise<ShapeCheck> {
    const relay = this.session.relay;
    return new Promise((resolve) => {
      let shape: string | null = null;
      relay.expect({
        leg,
        kind: "describe-statement",
        mode: "silent",
        inspect: (reply) => {
          shape = shapeOf(reply) ?? shape;
        },
        done: (unit) => {
          if (unit.failed || shape === null) return resolve("failed");
          copy.shape = shape;
          if (shape === statement.resultShape) return resolve("same");
          const copies = leg.connection.preparedStatements;
          if (copies.get(statement.backendName) === copy) copies.delete(statement.backendName);
          resolve("changed");
        },
        skipped: () => resolve("failed"),
      });
      leg.write([encodeDescribe({ target: "S", name: statement.backendName }), Messages.flush]);
    });
  }

  /** True when a parameter the route needs is bound in binary with no type known for it yet. */
  private bindsUntypedBinaryKey(
    view: BindView,
    statement: ClientStatement,
    needed: readonly number[],
  ): boolean {
    if (statement.describedTypes !== null) return false;
    return needed.some(
      (n) => n <= view.paramCount && view.format(n - 1) !== 0 && !statement.paramTypes[n - 1],
    );
  }

  /**
   * Learns the statement's parameter types from a server's ParameterDescription (what the client
   * would get from Describe), without relaying it. Outside a block the connection is borrowed
   * and synced at once; inside one, the block's connection answers (after a Flush), so the types
   * are those the block sees.
   */
  private async learnParameterTypes(statement: ClientStatement): Promise<void> {
    const region = this.session.runtime.router.describeRegion(statement.analysis);
    await this.describeOnServer(statement, region, false);
    await this.session.settle();
  }

  /** The bound values the route needs, as text; binary keys of known types are decoded. */
  private paramValues(
    view: BindView,
    statement: ClientStatement,
    needed: readonly number[],
  ): ParamValue[] | PgError {
    const values: ParamValue[] = [];
    for (let i = 0; i < view.paramCount; i++) {
      if (view.format(i) === 0) {
        values.push(view.text(i));
        continue;
      }
      const value = view.value(i);
      if (value === null) {
        values.push(null);
        continue;
      }
      const type = statement.paramTypes[i] || statement.describedTypes?.[i] || 0;
      const decoded = decodeBinaryParam(type, value);
      if (decoded === undefined) {
        if (needed.includes(i + 1)) return unreadableBinaryKey(i + 1, type);
        values.push(null);
        continue;
      }
      values.push(decoded);
    }
    return values;
  }

  /**
   * Makes sure the connection holds a copy of the statement at least as new as the client's
   * Parse, and returns its name there. The unnamed statement is parsed every time, as a client's
   * unnamed statement is meant to be.
   */
  private prepareOn(
    leg: Leg,
    statement: ClientStatement,
    answersParse?: { done: NonNullable<Unit["done"]>; skipped: () => void },
  ): string {
    const relay = this.session.relay;
    // The client's Parse is answered by the server (relayed) when `answersParse` is given.
    const mode = answersParse === undefined ? "quiet" : "relay";
    if (statement.name === "") {
      const unnamed = this.unnamed;
      if (unnamed?.leg === leg && unnamed.statement === statement && unnamed.writeCount === leg.writeCount) {
        // Parsed there by the client's own Parse, and nothing written since could have replaced it.
        return "";
      }
      relay.expect({
        leg,
        kind: "parse",
        mode,
        done: answersParse?.done,
        skipped: answersParse?.skipped,
      });
      leg.write(encodeParse({ name: "", sql: statement.text, paramTypes: statement.paramTypes }));
      this.unnamed = { leg, statement, writeCount: leg.writeCount };
      return "";
    }
    const copies = leg.connection.preparedStatements;
    const name = statement.backendName;
    const existing = copies.get(name) as BackendCopy | undefined;
    if (existing !== undefined && existing.preparedAt > statement.parsedAt) {
      // Kept in the order of use: the first entries are the least recently used.
      copies.delete(name);
      copies.set(name, existing);
      return name;
    }
    const copy: BackendCopy = { preparedAt: this.session.runtime.nextSequence() };
    copies.delete(name);
    copies.set(name, copy);
    this.closeLeastRecentlyUsed(leg, name);
    const forget = (): void => {
      if (copies.get(name) === copy) copies.delete(name);
    };
    // Close first: an older copy may hold the name (closing a missing statement is not an error).
    relay.expect({ leg, kind: "close", mode: "silent" });
    relay.expect({
      leg,
      kind: "parse",
      mode,
      done: (unit, status) => {
        if (unit.failed) forget();
        answersParse?.done(unit, status);
      },
      skipped: () => {
        forget();
        answersParse?.skipped();
      },
    });
    leg.write([
      encodeClose({ target: "S", name }),
      encodeParse({ name, sql: statement.text, paramTypes: statement.paramTypes }),
    ]);
    return name;
  }

  /**
   * Keeps a connection's copies of client statements within `[pool] max_prepared_statements`: the
   * least recently used are closed on the server (a portal bound from one keeps working, as in
   * PostgreSQL) and prepared again there when next bound.
   */
  private closeLeastRecentlyUsed(leg: Leg, keep: string): void {
    const copies = leg.connection.preparedStatements;
    const max = this.session.runtime.config.pool.maxPreparedStatements;
    if (copies.size <= max) return;
    const closing: Buffer[] = [];
    for (const name of copies.keys()) {
      if (copies.size <= max) break;
      if (name === keep) continue;
      copies.delete(name);
      this.session.relay.expect({ leg, kind: "close", mode: "silent" });
      closing.push(encodeClose({ target: "S", name }));
    }
    leg.write(closing);
  }

  private async describe(frame: Frame): Promise<void> {
    const session = this.session;
    const message = decodeDescribe(frame.payload);
    if (isProtocolFault(message)) {
      session.fatal(protocolViolation(message));
      return;
    }
    if (message.target === "P") {
      const portal = this.portals.get(message.name);
      if (portal === undefined) {
        await this.toCursor(message.name, frame, "describe-portal");
        return;
      }
      if (portal.scatter !== undefined) {
        await portal.scatter.describe(session);
        return;
      }
      if (portal.distributed !== undefined) {
        await portal.distributed.describe(session);
        return;
      }
      if (portal.leg === null) {
        session.relay.local({ bytes: this.localDescription(portal.statement, portal.local, false) });
        return;
      }
      const leg = await session.activate(portal.leg);
      const statement = portal.statement;
      session.relay.expect({
        leg,
        kind: "describe-portal",
        mode: "relay",
        // The first columns the client is told are the statement's, as one server fixes them.
        inspect: (reply) => {
          const shape = shapeOf(reply);
          if (shape === null) return;
          statement.resultShape ??= shape;
          if (shape !== statement.resultShape || statement.name === "") return;
          const copy = leg.connection.preparedStatements.get(statement.backendName) as
            | BackendCopy
            | undefined;
          if (copy !== undefined) copy.shape = shape;
        },
      });
      leg.write(frame.bytes);
      return;
    }
    const statement = this.statements.get(message.name);
    if (statement === undefined) {
      session.fail(unknownStatement(message.name), EXTENDED);
      return;
    }
    const route = session.runtime.router.route(statement.analysis, undefined, session.searchPath());
    // SQL EXECUTE answers with its prepared statement's columns: the server holding it describes it.
    const executes = statement.analysis.sessionEffects.some((effect) => effect.kind === "execute");
    if (route.kind === "local" && !executes) {
      session.relay.local({ bytes: this.localDescription(statement, route.what, true) });
      return;
    }
    const region =
      executes && session.pinnedLeg !== null
        ? session.pinnedLeg.region
        : session.runtime.router.describeRegion(statement.analysis);
    await this.describeOnServer(statement, region, true);
  }

  /**
   * Describes `statement` on a connection of `region`, prepared there first if need be: for the
   * client (its answer relayed, the columns it will decode by recorded) or for the proxy alone
   * (only the parameter types kept; flushed, so the answer comes now). Outside a transaction, a
   * connection taken only to describe is synced and given back at once (pipelined, no extra
   * round trip): the Bind that follows may well go elsewhere.
   */
  private async describeOnServer(
    statement: ClientStatement,
    region: string,
    forClient: boolean,
  ): Promise<void> {
    const session = this.session;
    const borrowed =
      session.txn === null && !session.batchLegs.has(region) && session.pinnedLeg?.region !== region;
    const mode: StatementMode = borrowed ? { extended: false, final: false } : EXTENDED;
    const describeRoute: Route = { kind: "region", region, readOnly: true, anywhere: false };
    await session.runRouted(statement.analysis, describeRoute, mode, (leg) => {
      const name = this.prepareOn(leg, statement);
      session.relay.expect({
        leg,
        kind: "describe-statement",
        mode: forClient ? "relay" : "silent",
        inspect: (reply) => {
          const shape = forClient ? shapeOf(reply) : null;
          if (shape !== null) {
            // What the client now decodes rows by, and what this copy answers with.
            statement.resultShape = shape;
            const copy = leg.connection.preparedStatements.get(name) as BackendCopy | undefined;
            if (copy !== undefined) copy.shape = shape;
            return;
          }
          if (reply.code !== BackendCode.ParameterDescription) return;
          const description = decodeParameterDescription(reply.payload);
          if (!isProtocolFault(description)) statement.describedTypes = description.typeOids;
        },
      });
      if (!borrowed) {
        // The client's own Flush or Sync follows its Describe; the proxy's needs one now.
        leg.write(
          forClient
            ? encodeDescribe({ target: "S", name })
            : [encodeDescribe({ target: "S", name }), Messages.flush],
        );
        // A Describe leaves the unnamed statement as it was.
        if (this.unnamed?.leg === leg && this.unnamed.statement === statement)
          this.unnamed.writeCount = leg.writeCount;
        return;
      }
      session.relay.expect({ leg, kind: "sync", mode: "silent", done: () => session.releaseLeg(leg) });
      leg.write([encodeDescribe({ target: "S", name }), Messages.sync]);
    });
  }

  /**
   * The connection where a cursor the client declared in SQL (DECLARE) lives: a portal of the
   * same namespace as the protocol's. Only while the session holds one connection a cursor can
   * be on: its transaction's only leg, or the connection it is pinned to (WITH HOLD).
   */
  private cursorLeg(): Leg | null {
    const session = this.session;
    const txn = session.txn;
    if (txn !== null) return txn.legs.size === 1 ? txn.legs.values()[0]! : null;
    return session.pinnedLeg;
  }

  /** Describe, Execute or Close of a portal the proxy did not bind: a SQL cursor, or 34000. */
  private async toCursor(
    name: string,
    frame: Frame,
    kind: "describe-portal" | "execute" | "close",
  ): Promise<void> {
    const session = this.session;
    const held = this.cursorLeg();
    if (held === null || held.broken !== null) {
      session.fail(unknownPortal(name), EXTENDED);
      return;
    }
    const leg = await session.activate(held);
    session.relay.expect({ leg, kind, mode: "relay" });
    leg.write(frame.bytes);
  }

  /** ParameterDescription (for a statement) and the row shape of a statement the proxy answers. */
  private localDescription(
    statement: ClientStatement,
    local: Portal["local"],
    withParameters: boolean,
  ): Buffer {
    const parts: Buffer[] = [];
    if (withParameters) {
      parts.push(encodeParameterDescription({ typeOids: [...statement.paramTypes] }));
    }
    if (local === "console") {
      parts.push(consoleDescription(this.session, statement.analysis) ?? Messages.noData);
    } else parts.push(Messages.noData);
    return Buffer.concat(parts);
  }

  private async execute(frame: Frame): Promise<void> {
    const session = this.session;
    const portalName = readPortalName(frame.payload);
    const portal = portalName === null ? undefined : this.portals.get(portalName);
    if (portal === undefined) {
      await this.toCursor(portalName ?? "", frame, "execute");
      return;
    }
    const analysis = portal.statement.analysis;
    if (portal.scatter !== undefined) {
      if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
      await portal.scatter.execute(session, readMaxRows(frame.payload));
      return;
    }
    if (portal.distributed !== undefined) {
      if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
      await portal.distributed.execute(session);
      return;
    }
    if (portal.leg === null) {
      if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
      switch (portal.local) {
        case "transaction":
          await runTransactionControl(session, analysis, EXTENDED);
          return;
        case "session":
          await runSessionStatement(session, analysis, EXTENDED, analysis.text);
          return;
        case "console":
          runConsole(session, analysis, EXTENDED, false);
          return;
        case "empty":
        case null:
          session.relay.local({ bytes: Messages.emptyQueryResponse });
          return;
      }
    }
    const leg = await session.activate(portal.leg);
    if (session.log.isLevelEnabled("debug"))
      session.log.debug({ region: leg.region, sql: analysis.text }, "execute");
    session.relay.expect({
      leg,
      kind: "execute",
      mode: "relay",
      done: (unit) => {
        if (!unit.failed) session.recordEffects(leg, [analysis]);
      },
    });
    leg.write(frame.bytes);
  }

  private async close(frame: Frame): Promise<void> {
    const session = this.session;
    const message = decodeClose(frame.payload);
    if (isProtocolFault(message)) {
      session.fatal(protocolViolation(message));
      return;
    }
    if (message.target === "S") {
      // Backend copies stay: they are shared by name and never used for a newer Parse.
      this.statements.delete(message.name);
      session.relay.local({ bytes: Messages.closeComplete });
      return;
    }
    const portal = this.portals.get(message.name);
    this.portals.delete(message.name);
    if (portal === undefined && this.cursorLeg() !== null) {
      await this.toCursor(message.name, frame, "close");
      return;
    }
    if (portal?.leg == null || portal.leg.broken !== null) {
      session.relay.local({ bytes: Messages.closeComplete });
      return;
    }
    const leg = await session.activate(portal.leg);
    session.relay.expect({ leg, kind: "close", mode: "relay" });
    leg.write(frame.bytes);
  }

  /**
   * Sync: every connection the batch used gets its own Sync (ending its implicit transaction, or
   * not, inside a block); the client gets one ReadyForQuery with the session's status.
   */
  private async sync(): Promise<void> {
    const session = this.session;
    if (this.aborting !== null) {
      await this.aborting;
      this.aborting = null;
    }
    const errorsBefore = this.errorsAtBatchStart;
    this.skipping = false;
    this.inBatch = false;
    this.batchWriteRegion = null;
    this.unnamed = null;
    if (session.txn === null) this.portals.clear();
    // The leg in use first (its Sync pipelines behind its answers), then the others one at a time.
    const active = session.currentLeg;
    const legs = [...this.touched].sort((a, b) => (a === active ? -1 : b === active ? 1 : 0));
    this.touched.clear();
    this.syncsPending++;
    for (const leg of legs) {
      if (leg.broken !== null) continue;
      // The leg in use needs no activation: no promise for the common one-leg batch.
      if (leg !== session.currentLeg) await session.activate(leg);
      // Relayed but for its ReadyForQuery (the client gets one, the proxy's): a server reports
      // changed settings (ParameterStatus) just before it, and an implicit block's COMMIT fails
      // there (a deferred constraint), which the client must hear.
      session.relay.expect({
        leg,
        kind: "sync",
        mode: "relay",
        dropReadyForQuery: true,
        done: (_unit, status) => {
          if (session.txn === null && (status === "T" || status === "E"))
            session.block.begin("BEGIN", false, session.settings.snapshot()).legs.add(leg);
        },
      });
      leg.write(Messages.sync);
    }
    this.touched.clear();
    if (session.txn?.endsAtSync === true) await finishDistributedBatch(session);
    session.relay.local({
      bytes: () => session.readyForQuery(),
      syncAnswer: true,
      effect: () => {
        this.syncsPending--;
        // The batch is over: its connections go back unless the block (or a pin) keeps them.
        const legs = session.legs;
        for (const leg of [...legs.batch.clear(), ...legs.replicaBatch.clear()]) legs.release(leg);
        session.settleBatchPins(session.relay.errorsSent > errorsBefore);
      },
    });
    session.runtime.moves?.afterSync(session, session.relay.idle());
  }
}

/** The name a client statement gets on backend connections. */
function backendNameOf(text: string, paramTypes: readonly number[]): string {
  const digest = createHash("sha1").update(text).update("\0").update(paramTypes.join(",")).digest("hex");
  return `geo_${digest.slice(0, 28)}`;
}

/** A Bind with the statement name replaced by the backend's name for it (NUL included); the rest as sent. */
function renameBind(payload: Buffer, name: Buffer): Buffer {
  const portalEnd = payload.indexOf(0);
  const statementEnd = payload.indexOf(0, portalEnd + 1);
  const portal = payload.subarray(0, portalEnd + 1);
  const rest = payload.subarray(statementEnd + 1);
  const length = 4 + portal.length + name.length + rest.length;
  const header = Buffer.allocUnsafe(5);
  header[0] = FrontendCode.Bind;
  header.writeInt32BE(length, 1);
  return Buffer.concat([header, portal, name, rest], length + 1);
}

/** An Execute's row limit (0: all rows), after its portal name. */
function readMaxRows(payload: Buffer): number {
  const end = payload.indexOf(0);
  return end < 0 || payload.length < end + 5 ? 0 : payload.readInt32BE(end + 1);
}

function readPortalName(payload: Buffer): string | null {
  const end = payload.indexOf(0);
  return end < 0 ? null : payload.toString("utf8", 0, end);
}
