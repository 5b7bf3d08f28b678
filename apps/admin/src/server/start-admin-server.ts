import type { AddressInfo } from "node:net";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { CONTENT_SECURITY_POLICY } from "../dashboard/assets.js";
import { History } from "../dashboard/history.js";
import { renderLive, renderPage } from "../dashboard/render-dashboard.js";
import {
  emptyPassword,
  invalidPort,
  listenFailed,
  passwordRequiredBeyondLoopback,
  tlsIncomplete,
} from "../errors/admin-errors.js";
import type { ProxyMetrics } from "../metrics/proxy-metrics.js";
import type { AdminSource, KeyLocation, KeyLookupFailure, ProxySnapshot } from "../source/admin-source.js";
import { EventStreams, eventFrame } from "./event-streams.js";
import { isLoopbackHost } from "./loopback.js";
import { DEFAULT_LOCKOUT, type LockoutPolicy, PasswordGate } from "./password-gate.js";

/** What the admin port logs through; a pino logger fits as it is. */
export interface AdminLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface AdminServerOptions {
  /** `[admin] host`. Beyond loopback a password is required. */
  readonly host: string;
  /** `[admin] port`; 0 picks a free one. */
  readonly port: number;
  /** `[admin] password`: HTTP Basic (any user name) or `Authorization: Bearer <password>`. */
  readonly password?: string;
  /**
   * PEM certificate and key (contents, not paths): serve HTTPS only. Both are required; one left
   * out fails the start with `ADMIN_TLS_INCOMPLETE` (so `[admin] tls = true` without `[tls] cert`
   * can be passed through as it is).
   */
  readonly tls?: { readonly cert?: string | Buffer; readonly key?: string | Buffer };
  readonly source: AdminSource;
  readonly metrics: ProxyMetrics;
  readonly logger?: AdminLogger;
  /** Milliseconds clock for lockouts (tests pass a fake one). Default `Date.now`. */
  readonly now?: () => number;
  /** Changes to {@link DEFAULT_LOCKOUT}. */
  readonly lockout?: Partial<LockoutPolicy>;
  /** Server-sent-event streams open at once (default 16); one more is refused with 503. */
  readonly maxEventStreams?: number;
  /** How often the dashboard samples the source and pushes an update (default 1000 ms). */
  readonly updateIntervalMs?: number;
  /** How long /healthz waits for `ready()` before answering 503 (default 2000 ms). */
  readonly readyTimeoutMs?: number;
  /**
   * Bind the port in this process even in a node:cluster worker, rather than share one the
   * primary holds: each worker then serves a port of its own (port 0: a free one each).
   */
  readonly exclusive?: boolean;
}

export interface RunningAdminServer {
  /** The port listened on (the chosen one when 0 was asked). */
  readonly port: number;
  /** `http://host:port` or `https://host:port`. */
  readonly url: string;
  /** Open event streams now. */
  readonly eventStreams: number;
  /** Ends every event stream and stops listening. */
  close(): Promise<void>;
}

const NO_LOG: AdminLogger = { info() {}, warn() {}, error() {} };

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/**
 * Starts the admin port: /metrics, /snapshot, /key/<table>/<key>, /healthz, the dashboard at / and
 * its event stream at /events. Refuses to start beyond loopback without a password.
 *
 * @example
 * ```ts
 * const admin = await startAdminServer({ host: "127.0.0.1", port: 9930, source, metrics });
 * // ... later
 * await admin.close();
 * ```
 */
export async function startAdminServer(options: AdminServerOptions): Promise<RunningAdminServer> {
  const { host, port, password, tls, source, metrics } = options;
  const logger = options.logger ?? NO_LOG;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw invalidPort(port);
  if (password === "") throw emptyPassword();
  const loopback = isLoopbackHost(host);
  if (!loopback && password === undefined) throw passwordRequiredBeyondLoopback(host);
  let pem: { cert: string | Buffer; key: string | Buffer } | undefined;
  if (tls !== undefined) {
    if (tls.cert === undefined || tls.cert.length === 0) throw tlsIncomplete("cert");
    if (tls.key === undefined || tls.key.length === 0) throw tlsIncomplete("key");
    pem = { cert: tls.cert, key: tls.key };
  }
  if (!loopback && tls === undefined) {
    logger.warn(
      { host },
      "admin port beyond loopback without TLS: the password crosses the network in clear",
    );
  }

  const gate =
    password === undefined
      ? undefined
      : new PasswordGate(password, options.now ?? Date.now, { ...DEFAULT_LOCKOUT, ...options.lockout });
  const streams = new EventStreams(options.maxEventStreams ?? 16);
  const history = new History();
  const readyTimeoutMs = options.readyTimeoutMs ?? 2000;

  let sampleFailing = false;
  const takeSnapshot = (): ProxySnapshot | undefined => {
    try {
      const snapshot = source.snapshot();
      if (sampleFailing) logger.info({}, "admin snapshot works again");
      sampleFailing = false;
      return snapshot;
    } catch (error) {
      if (!sampleFailing)
        logger.warn({ err: error }, "admin snapshot failed; the dashboard keeps its last update");
      sampleFailing = true;
      return undefined;
    }
  };
  const first = takeSnapshot();
  if (first !== undefined) history.push(first, Date.now());

  const app = Fastify({
    https: pem ?? null,
    logger: false,
    forceCloseConnections: true,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 512 },
    bodyLimit: 1024,
  });

  app.addHook("onRequest", async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    if (gate === undefined) return;
    const address = request.socket.remoteAddress ?? "unknown";
    const verdict = gate.check(address, request.headers.authorization);
    switch (verdict.kind) {
      case "allowed":
        return;
      case "missing":
        return challenge(reply, "a password is required");
      case "wrong":
        logger.warn({ address, lockedForMs: verdict.lockedForMs }, "admin port: wrong password");
        return challenge(reply, "wrong password");
      case "locked":
        return reply
          .code(429)
          .header("retry-after", String(Math.ceil(verdict.retryAfterMs / 1000)))
          .send(errorBody("locked_out", "too many wrong passwords from this address; wait and try again"));
    }
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody("not_found", `no such page: ${request.method} ${request.url}`)),
  );
  app.setErrorHandler((error, request, reply) => {
    logger.error({ err: error, url: request.url }, "admin request failed");
    return reply
      .code(500)
      .send(errorBody("internal", "the admin port could not answer; see the proxy's log"));
  });

  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });

  app.get("/snapshot", async (_request, reply) => reply.type("application/json").send(source.snapshot()));

  app.get<{ Params: { table: string; "*": string } }>("/key/:table/*", async (request, reply) => {
    const table = request.params.table;
    const key = request.params["*"];
    if (table === "" || key === "") {
      return reply.code(400).send(errorBody("bad_request", "use /key/<table>/<key>"));
    }
    const answer: KeyLocation | KeyLookupFailure = await source.whereIs(table, key);
    if ("error" in answer) {
      const body = {
        error: answer.error,
        sqlstate: answer.sqlstate,
        ...(answer.hint === undefined ? {} : { hint: answer.hint }),
      };
      return reply.code(answer.sqlstate === "42P01" ? 404 : 400).send(body);
    }
    return reply.send(answer);
  });

  app.get("/healthz", async (_request, reply) => {
    const ready = await withTimeout(source.ready(), readyTimeoutMs).catch(() => false);
    return reply.code(ready ? 200 : 503).send({ ready });
  });

  app.get("/", async (_request, reply) => {
    const snapshot = source.snapshot();
    return reply.type("text/html; charset=utf-8").send(renderPage({ snapshot, history }));
  });

  app.get("/events", { exposeHeadRoute: false }, (request: FastifyRequest, reply: FastifyReply) => {
    if (streams.full) {
      return reply
        .code(503)
        .header("retry-after", "5")
        .send(
          errorBody("too_many_streams", "the dashboard's live streams are all in use; it reloads instead"),
        );
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    streams.add(raw);
    request.socket.setNoDelay(true);
    raw.write("retry: 3000\n\n");
    const snapshot = takeSnapshot();
    if (snapshot !== undefined) streams.sendTo(raw, eventFrame("update", renderLive({ snapshot, history })));
    return reply;
  });

  const timer = setInterval(() => {
    const snapshot = takeSnapshot();
    if (snapshot === undefined) return;
    history.push(snapshot, Date.now());
    if (streams.size > 0) streams.broadcast(eventFrame("update", renderLive({ snapshot, history })));
  }, options.updateIntervalMs ?? 1000);
  timer.unref();

  try {
    await app.listen({ host, port, exclusive: options.exclusive ?? false });
  } catch (error) {
    clearInterval(timer);
    await app.close().catch(() => undefined);
    throw listenFailed(host, port, error);
  }
  const address = app.server.address() as AddressInfo;
  const scheme = tls === undefined ? "http" : "https";
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  logger.info({ host, port: address.port, tls: tls !== undefined }, "admin port listening");

  return {
    port: address.port,
    url: `${scheme}://${urlHost}:${address.port}`,
    get eventStreams() {
      return streams.size;
    },
    async close() {
      clearInterval(timer);
      streams.closeAll();
      await app.close();
    },
  };
}

function errorBody(code: string, message: string): { error: string; code: string } {
  return { error: message, code };
}

function challenge(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .code(401)
    .header("www-authenticate", 'Basic realm="geoproxy admin", charset="UTF-8"')
    .send(errorBody("unauthorized", message));
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
