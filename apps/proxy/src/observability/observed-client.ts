import { performance } from "node:perf_hooks";
import type { PlanKind, ProxyMetrics } from "@geo/admin";
import { FrontendCode } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { Route } from "../routing/router.js";
import type { ObservableSession } from "./observable-session.js";
import { planKindOf } from "./plan-kind.js";
import type { RouteBook } from "./route-book.js";

/** Where a client's routes are written down with the analysis they were decided from. */
export interface RouteRecorder {
  readonly book: RouteBook;
  /** The analysis a route was decided from, when the router still knows it. */
  analysisOf(route: Route): Analysis | undefined;
}

/** How a client connection stands, as SHOW CLIENTS says it. */
export const CLIENT_STATES = ["login", "idle", "active", "idle in transaction", "closed"] as const;
export type ClientState = (typeof CLIENT_STATES)[number];

/**
 * One client connection as the metrics see it: the statements routed since its last
 * ReadyForQuery, and its counts for SHOW CLIENTS.
 *
 * A statement's time runs from the moment its route is decided to the start of the next statement
 * of the same exchange, or, for the last one, to the ReadyForQuery that ends the exchange (a simple
 * Query, or an extended batch at Sync). For the usual exchange of one statement that is its whole
 * answer; the statements of one exchange share its time without overlap.
 */
export class ObservedClient {
  readonly connectedAt = new Date();
  /** Statements routed (or answered by the proxy) on this connection. */
  statements = 0;
  readonly #session: ObservableSession;
  readonly #metrics: ProxyMetrics;
  readonly #home: string;
  /**
   * Statements are numbered as they are routed; those not timed yet are numbers `#first` up to
   * `#pending`, held in the two arrays below from number `#base` on. With a pipelining client the
   * next exchange's statements are routed before the previous exchange's ReadyForQuery is
   * written, so each exchange remembers the number its own statements end at.
   */
  #base = 0;
  #first = 0;
  #pending = 0;
  /** Kept and overwritten rather than emptied, so counting a statement allocates nothing. */
  readonly #kinds: PlanKind[] = [];
  readonly #starts: number[] = [];
  /** Reused for the one-region case, which is nearly every statement: no array per statement. */
  readonly #oneRegion: string[] = [""];
  readonly #routes: RouteRecorder | undefined;

  constructor(session: ObservableSession, metrics: ProxyMetrics, home: string, routes?: RouteRecorder) {
    this.#session = session;
    this.#metrics = metrics;
    this.#home = home;
    this.#routes = routes;
  }

  get id(): number {
    return this.#session.id;
  }

  get user(): string {
    return this.#session.user;
  }

  get database(): string {
    return this.#session.database;
  }

  get address(): string {
    const socket = this.#session.socket;
    return `${socket.remoteAddress ?? "?"}:${socket.remotePort ?? "?"}`;
  }

  get state(): ClientState {
    return stateOf(this.#session);
  }

  /** A statement's route was decided: counted now, timed at the end of its exchange. */
  routed(route: Route): void {
    this.#count(route, route);
  }

  /** Several statements of one simple Query sent together to `region` as one string. */
  routedTogether(routes: readonly Route[], region: string): void {
    for (const route of routes) {
      this.#count(route.kind === "region" ? { ...route, region } : route, route);
    }
  }

  /** Counts `route`; `decided` is the route as the router returned it (the key to its analysis). */
  #count(route: Route, decided: Route): void {
    const kind = planKindOf(route);
    if (kind === null) return;
    this.statements++;
    const at = this.#pending++ - this.#base;
    const now = performance.now();
    this.#kinds[at] = kind;
    this.#starts[at] = now;
    const routes = this.#routes;
    if (routes !== undefined && route.kind !== "local") {
      const analysis = routes.analysisOf(decided);
      if (analysis !== undefined) routes.book.record(analysis, route, kind, now);
    }
    switch (route.kind) {
      case "region":
        this.#oneRegion[0] = route.region;
        this.#metrics.countRegions(this.#oneRegion);
        return;
      case "deferred":
        this.#oneRegion[0] = this.#home;
        this.#metrics.countRegions(this.#oneRegion);
        return;
      case "multi-region":
        this.#metrics.countRegions(route.plan.regions);
        return;
      case "error":
        if (route.refusal !== undefined) this.#metrics.countRefusal(route.refusal);
        return;
      case "local":
        return;
    }
  }

  /** After the session handled one client message: a Query or a Sync ends an exchange. */
  afterMessage(code: number): void {
    if (this.#pending === this.#first) return;
    if (code !== FrontendCode.Query && code !== FrontendCode.Sync) return;
    const relay = this.#session.relay;
    const upTo = this.#pending;
    if (relay.pending === 0) {
      this.#observe(upTo, performance.now());
      return;
    }
    // The exchange's ReadyForQuery is still queued: time it when it has been written.
    relay.local({ bytes: nothing, effect: () => this.#observe(upTo, performance.now()) });
  }

  /** Times the statements before `upTo` that are not timed yet; their exchange ended at `end`. */
  #observe(upTo: number, end: number): void {
    const kinds = this.#kinds;
    const starts = this.#starts;
    const last = upTo - this.#base;
    for (let i = this.#first - this.#base; i < last; i++) {
      const until = i + 1 < last ? starts[i + 1]! : end;
      this.#metrics.observeStatement(kinds[i]!, Math.max(0, until - starts[i]!) / 1000);
    }
    this.#first = upTo;
    if (upTo === this.#pending) {
      // Nothing in flight: start the arrays over (kept, so nothing is allocated).
      this.#base = upTo;
    } else if (upTo - this.#base > COMPACT_AFTER) {
      // A client that always has the next exchange in flight: drop what was timed.
      kinds.splice(0, last);
      starts.splice(0, last);
      this.#base = upTo;
    }
  }
}

function stateOf(session: ObservableSession): ClientState {
  switch (session.phase) {
    case "startup":
    case "login":
      return "login";
    case "closed":
      return "closed";
    case "ready":
      if (session.txn === null) return session.idle ? "idle" : "active";
      return session.relay.pending === 0 ? "idle in transaction" : "active";
  }
}

/** Timed statements kept before the arrays are compacted, for a client that never pauses. */
const COMPACT_AFTER = 256;

function nothing(): null {
  return null;
}
