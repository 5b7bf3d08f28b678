import { type ConnectionParts, urlFromParts, urlProblem } from "./dsn.js";
import {
  invalidPort,
  invalidUrl,
  primaryConflict,
  primaryMissing,
  primaryPartMissing,
  replicaConflict,
  replicaHostWithoutParts,
} from "./errors.js";

/** Variable names read by {@link clusterDsnsFromEnv}, before the prefix. */
export const ENV_VARIABLES = {
  primaryUrl: "DATABASE_URL",
  replicaUrl: "DATABASE_RO_URL",
  host: "DB_HOST",
  port: "DB_PORT",
  user: "DB_USER",
  password: "DB_PASSWORD",
  database: "DB_NAME",
  sslmode: "DB_SSLMODE",
  replicaHost: "DB_RO_HOST",
} as const;

export type Environment = Readonly<Record<string, string | undefined>>;

/** The two endpoints, ready for {@link Cluster.connect}, and where each came from. */
export interface ClusterDsns {
  readonly primary: string;
  /** Undefined when no replica variable is set: the cluster then runs on the primary alone. */
  readonly replica: string | undefined;
  /** The variables each endpoint was read from, as spelled in the environment (for a start-up log). */
  readonly sources: { readonly primary: readonly string[]; readonly replica: readonly string[] };
}

interface Found {
  readonly variable: string;
  readonly value: string;
}

class Lookup {
  constructor(
    private readonly prefix: string,
    private readonly env: Environment,
  ) {}

  /** The prefixed variable when set, else the bare one; an empty value counts as unset. */
  find(name: string): Found | undefined {
    for (const variable of this.prefix === "" ? [name] : [this.prefix + name, name]) {
      const value = this.env[variable];
      if (value !== undefined && value !== "") return { variable, value };
    }
    return undefined;
  }

  /** How to name a variable that was searched for and not found. */
  searched(name: string): string {
    return this.prefix === "" ? name : `${this.prefix}${name} or ${name}`;
  }
}

function parsePort(found: Found | undefined): number {
  if (found === undefined) return 5432;
  const text = found.value.trim();
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) throw invalidPort(found.variable, found.value);
  return port;
}

function checkedUrl(found: Found): string {
  const problem = urlProblem(found.value);
  if (problem !== undefined) throw invalidUrl(found.variable, problem);
  return found.value;
}

/**
 * Resolves the primary and the optional replica from the environment. Each variable is looked up
 * as `<prefix><NAME>` first and as the bare `<NAME>` second, so one service in a shared
 * environment can override just what differs. The replica is only ever read from its own
 * variables: nothing is derived from the primary's host.
 *
 * @param prefix for example `"ORDERS_"`; a missing trailing underscore is added (`"ORDERS"` reads `ORDERS_DATABASE_URL`).
 * @throws ClientError naming the variable that was actually read (prefixed or bare).
 * @example
 * const dsns = clusterDsnsFromEnv("ORDERS_");
 * const cluster = await Cluster.connect({ primary: dsns.primary, replica: dsns.replica });
 */
export function clusterDsnsFromEnv(prefix = "", env: Environment = process.env): ClusterDsns {
  const normalizedPrefix = prefix === "" || prefix.endsWith("_") ? prefix : `${prefix}_`;
  const lookup = new Lookup(normalizedPrefix, env);
  const names = ENV_VARIABLES;

  const primaryUrl = lookup.find(names.primaryUrl);
  const host = lookup.find(names.host);
  const replicaUrl = lookup.find(names.replicaUrl);
  const replicaHost = lookup.find(names.replicaHost);

  if (primaryUrl !== undefined && host !== undefined)
    throw primaryConflict(primaryUrl.variable, host.variable);
  if (replicaUrl !== undefined && replicaHost !== undefined)
    throw replicaConflict(replicaUrl.variable, replicaHost.variable);

  if (primaryUrl !== undefined) {
    const primary = checkedUrl(primaryUrl);
    if (replicaHost !== undefined) throw replicaHostWithoutParts(replicaHost.variable, primaryUrl.variable);
    return {
      primary,
      replica: replicaUrl === undefined ? undefined : checkedUrl(replicaUrl),
      sources: {
        primary: [primaryUrl.variable],
        replica: replicaUrl === undefined ? [] : [replicaUrl.variable],
      },
    };
  }

  if (host === undefined)
    throw primaryMissing(lookup.searched(names.primaryUrl), lookup.searched(names.host));

  const required = (name: string): Found => {
    const found = lookup.find(name);
    if (found === undefined) throw primaryPartMissing(host.variable, lookup.searched(name));
    return found;
  };
  const user = required(names.user);
  const database = required(names.database);
  const port = lookup.find(names.port);
  const password = lookup.find(names.password);
  const sslmode = lookup.find(names.sslmode);
  const parts: ConnectionParts = {
    host: host.value,
    port: parsePort(port),
    user: user.value,
    password: password?.value,
    database: database.value,
    sslmode: sslmode?.value,
  };
  const shared = [user, database, port, password, sslmode].flatMap((found) =>
    found === undefined ? [] : [found.variable],
  );
  const primary = urlFromParts(parts);
  if (urlProblem(primary) !== undefined)
    throw invalidUrl(host.variable, "the host does not form a valid URL");

  let replica: string | undefined;
  let replicaSources: string[] = [];
  if (replicaUrl !== undefined) {
    replica = checkedUrl(replicaUrl);
    replicaSources = [replicaUrl.variable];
  } else if (replicaHost !== undefined) {
    replica = urlFromParts({ ...parts, host: replicaHost.value });
    if (urlProblem(replica) !== undefined)
      throw invalidUrl(replicaHost.variable, "the host does not form a valid URL");
    replicaSources = [replicaHost.variable, ...shared];
  }
  return { primary, replica, sources: { primary: [host.variable, ...shared], replica: replicaSources } };
}
