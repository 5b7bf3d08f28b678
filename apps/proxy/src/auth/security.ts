import { randomBytes } from "node:crypto";
import { type GeoConfig, type NetworkTimeouts, regionTimeouts } from "@geo/core";
import {
  BackendConnection,
  type ConnectFunction,
  type GuardedEndpoint,
  type HealthMonitor,
  type Lease,
  UnreachableGuard,
} from "@geo/pool";
import { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import { BackendTraffic } from "../observability/backend-traffic.js";
import type { CancelRegistry } from "../server/cancel-registry.js";
import { backendUpgrades } from "../tls/backend-upgrades.js";
import { type ClientTls, loadClientTls } from "../tls/client-tls.js";
import { passwordlessRefusedByHome } from "./auth-errors.js";
import { backendConnectFor } from "./backend-credentials.js";
import { FailureThrottle } from "./failure-throttle.js";
import { FrontDoor } from "./front-door.js";
import { PassthroughSecrets } from "./passthrough-secrets.js";
import { credentialFromConfig, type StoredCredential } from "./stored-credential.js";
import { homeVerifierLookup } from "./verifier-lookup.js";
import { VerifierStore } from "./verifier-store.js";

export interface SecurityOptions {
  /** Replaces how backend connections are opened (tests); TLS and credentials are added around it. */
  readonly connect?: ConnectFunction | undefined;
  /** Clock of the verifier cache and the failure throttle (tests). */
  readonly now?: (() => number) | undefined;
  /** How a failure's delay is waited out (tests). */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** What the proxy needs from `[auth]` and `[tls]`, prepared once at start. */
export interface Security {
  /** Opens backend connections with TLS and the right credentials for their role. */
  readonly connect: ConnectFunction;
  /** The bytes exchanged on the connections `connect` opened, by backend (the dashboard's map). */
  readonly traffic: BackendTraffic;
  readonly clientTls: ClientTls | null;
  readonly throttle: FailureThrottle;
  readonly store: VerifierStore | null;
  /** Bounds waits on backends that stopped answering (`[pool] unreachable_timeout_ms`). */
  readonly guard: UnreachableGuard;
  /**
   * Lets the health monitor's verdicts break connections to a backend it marked down, and tells it
   * of backends the guard found unreachable (SHOW HEALTH then says so).
   */
  watchHealth(monitor: HealthMonitor | undefined): void;
  /** Stops the guard's checks and closes its probe connections. */
  close(): Promise<void>;
  /** The front door, once the pools exist (the verifier lookup runs on the home region's pool). */
  openDoor(deps: {
    readonly acquireHome: () => Promise<Lease>;
    /** The home region's id, named by errors of the lookup. */
    readonly homeRegion: string;
    readonly cancels: CancelRegistry;
    readonly log: Logger;
  }): FrontDoor;
}

/**
 * Reads certificates and CA files, derives configured users' verifiers, and checks the rules that
 * keep a configuration from being silently unsafe. Throws Error lines for the startup report.
 */
export function prepareSecurity(config: GeoConfig, options: SecurityOptions = {}): Security {
  const problems: string[] = [];
  const auth = config.auth;
  if (auth.passthrough && auth.method === "trust") {
    problems.push(
      `${config.file}: auth.passthrough needs auth.method = "scram-sha-256" or "md5": under trust no client proves a secret to log in to backends with`,
    );
  }
  const configured = new Map<string, StoredCredential>();
  // Under passthrough, a role listed by name alone logs in without a password where the backends
  // let it in without one (their trust entries), as it would connecting to them directly.
  const withoutPassword = new Set<string>();
  if (auth.method !== "trust") {
    for (const user of auth.users) {
      if (auth.passthrough && user.password === undefined && user.verifier === undefined) {
        withoutPassword.add(user.name);
        continue;
      }
      const credential = credentialFromConfig(user, auth.method);
      if (credential === null) {
        problems.push(
          user.verifier === undefined
            ? `${config.file}: auth.users "${user.name}": no password or verifier is given; a role listed by name alone logs in without a password (its backends' trust entries decide) only with auth.passthrough = true`
            : `${config.file}: auth.users "${user.name}": verifier is neither a SCRAM-SHA-256 verifier nor an MD5 hash, and no password is given`,
        );
      } else configured.set(user.name, credential);
    }
  }
  let clientTls: ClientTls | null = null;
  let upgrades = new Map<string, undefined>() as ReturnType<typeof backendUpgrades>;
  try {
    clientTls = loadClientTls(config.tls);
  } catch (error) {
    problems.push(`${config.file}: ${(error as Error).message}`);
  }
  try {
    upgrades = backendUpgrades(config);
  } catch (error) {
    problems.push(`${config.file}: ${(error as Error).message}`);
  }
  if (problems.length > 0) throw new SecurityConfigError(problems);

  const passthrough = auth.passthrough ? new PassthroughSecrets() : null;
  const throttle = new FailureThrottle({
    baseMs: auth.failureDelayMs,
    maxMs: auth.failureDelayMaxMs,
    windowMs: auth.failureWindowMs,
    now: options.now,
  });
  let store: VerifierStore | null = null;
  let log: Logger | null = null;
  let monitor: HealthMonitor | undefined;
  const guard = new UnreachableGuard({
    endpoints: guardedEndpoints(config),
    timeoutMs: config.pool.unreachableTimeoutMs,
    keepaliveMs: config.pool.tcpKeepaliveMs,
    probeConnect: backendConnectFor(config, passthrough, upgrades, options.connect),
    onChange(change) {
      const fields = { region: change.endpoint.region, backend: change.address, broken: change.broken };
      if (change.unreachable) {
        log?.error({ ...fields, reason: change.reason }, "backend unreachable: its statements fail at once");
        if (monitor?.status(change.address) !== undefined)
          monitor.reportFailure(change.address, change.reason);
      } else log?.info(fields, "backend answers again");
    },
  });
  const traffic = new BackendTraffic();
  const base: ConnectFunction = traffic.meter(
    options.connect ?? ((connectOptions) => BackendConnection.connect(connectOptions)),
  );
  const connect = backendConnectFor(config, passthrough, upgrades, guard.wrap(base));
  const security: Security = {
    connect,
    traffic,
    clientTls,
    throttle,
    guard,
    get store() {
      return store;
    },
    watchHealth(health) {
      if (health === undefined || monitor !== undefined) return;
      monitor = health;
      guard.watch(health);
    },
    close() {
      return guard.close();
    },
    openDoor(deps) {
      log = deps.log;
      // The configuration refuses the secrets trust would leave unused; these remain, and serve
      // backend logins only. Said once, so no one reads them as checked.
      const backendOnly = auth.method === "trust" ? auth.users.filter((u) => u.password !== undefined) : [];
      if (backendOnly.length > 0)
        deps.log.warn(
          { users: backendOnly.map((u) => u.name) },
          'auth.method = "trust": clients are not asked for the passwords of auth.users; they only log in to backends whose endpoint names no user',
        );
      store = new VerifierStore({
        configured,
        lookup:
          auth.method !== "trust" && auth.lookup
            ? homeVerifierLookup(
                deps.acquireHome,
                auth.verifierQuery,
                homeTimeouts(config).lookupTimeoutMs,
                deps.homeRegion,
              )
            : undefined,
        ttlMs: auth.verifierCacheMs,
        now: options.now,
      });
      return new FrontDoor({
        method: auth.method,
        tls: clientTls,
        timeoutMs: auth.timeoutMs,
        startupTimeoutMs: auth.startupTimeoutMs,
        maxUnauthenticated: auth.maxUnauthenticated,
        maxUnauthenticatedPerAddress: auth.maxUnauthenticatedPerAddress,
        store,
        throttle,
        cancels: deps.cancels,
        passthrough,
        withoutPassword:
          withoutPassword.size === 0
            ? undefined
            : { roles: withoutPassword, check: (role) => homeLetsIn(config, connect, role) },
        mockSecret: randomBytes(32),
        log: deps.log,
        regions: config.regions.length,
        sleep: options.sleep,
      });
    },
  };
  return security;
}

/**
 * Whether the home region's primary lets `role` in with no secret at all (a trust entry for the
 * proxy's address): null when it does, else the login error to send. The connection is a login
 * only, closed at once; the session's own connections open as the role the same way.
 */
async function homeLetsIn(
  config: GeoConfig,
  connect: ConnectFunction,
  role: string,
): Promise<PgError | null> {
  const home = config.regions.find((region) => region.home) ?? config.regions[0]!;
  const endpoint = home.primary;
  try {
    const connection = await connect({
      host: endpoint.host,
      port: endpoint.port,
      database: endpoint.database,
      user: role,
      applicationName: "geoproxy",
      connectTimeoutMs: regionTimeouts(config.pool, home).connectTimeoutMs,
    });
    await connection.close();
    return null;
  } catch (error) {
    if (!(error instanceof PgError)) throw error;
    // The server's own refusal (28xxx), or the pool's of what the server asked the role for (a
    // password, an unknown method: those errors name the role). A server that could not be reached
    // said nothing about the role: the login is unavailable (57P03), not refused.
    if (!error.code.startsWith("28") && !error.message.includes(`role "${role}"`)) throw error;
    return passwordlessRefusedByHome(role, home.id, error);
  }
}

/** The home region's network timeouts: those of the proxy's own lookups at login. */
function homeTimeouts(config: GeoConfig): NetworkTimeouts {
  const home = config.regions.find((region) => region.home) ?? config.regions[0]!;
  return regionTimeouts(config.pool, home);
}

/** Every backend of the configuration, as the guard names them, with its region's own timings. */
function guardedEndpoints(config: GeoConfig): GuardedEndpoint[] {
  return config.regions.flatMap((region) => {
    const timeouts = regionTimeouts(config.pool, region);
    return [region.primary, ...region.replicas].map((endpoint, index) => ({
      region: region.id,
      role: index === 0 ? ("primary" as const) : ("replica" as const),
      host: endpoint.host,
      port: endpoint.port,
      database: endpoint.database,
      user: endpoint.user ?? "postgres",
      ...(endpoint.password === undefined ? {} : { password: endpoint.password }),
      timeoutMs: timeouts.unreachableTimeoutMs,
      keepaliveMs: timeouts.tcpKeepaliveMs,
    }));
  });
}

/** One line per unsafe or unreadable setting, for the startup report. */
export class SecurityConfigError extends Error {
  override readonly name = "SecurityConfigError";
  constructor(readonly lines: readonly string[]) {
    super(lines.join("\n"));
  }
}
