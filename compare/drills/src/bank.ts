/**
 * The drill's bank: one account and one counter per key, three keys per region, a record of every
 * transfer on both sides and of every increment next to its counter.
 */
export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;
export type RegionName = (typeof REGIONS)[number];

export const INITIAL_BALANCE = 1000;

/** Keys `k0`..`k8`, placed round-robin over the regions. */
export const KEYS: readonly { key: string; region: RegionName }[] = Array.from({ length: 9 }, (_, i) => ({
  key: `k${i}`,
  region: REGIONS[i % REGIONS.length]!,
}));

/** The role the workloads log in as, and the operator the move scenarios run RELOCATE as. */
export const APP_USER = { name: "app", password: "app-secret" } as const;
export const OPS_USER = { name: "ops", password: "ops-secret" } as const;

export const DIRECTORY_TABLE = "geoproxy_directory";
/** The table decision log's table (`[txn] log_table` left at its default). */
export const DECISION_TABLE = "geo_txn_decisions";

export const SCHEMA_SQL = `
CREATE TABLE accounts (
  tenant_id text   NOT NULL,
  id        int    NOT NULL,
  balance   bigint NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE transfers (
  tenant_id text   NOT NULL,
  id        text   NOT NULL,
  amount    bigint NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE counters (
  tenant_id text   PRIMARY KEY,
  n         bigint NOT NULL
);
CREATE TABLE increments (
  tenant_id text   NOT NULL,
  id        text   NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE ${DIRECTORY_TABLE} (
  key text PRIMARY KEY, region text NOT NULL, moved_at timestamptz NOT NULL DEFAULT now()
);`;

/** The rows a region starts with: its keys' accounts and counters, and the directory of every key. */
export function seedSql(region: RegionName): string {
  const mine = KEYS.filter((k) => k.region === region);
  return [
    `INSERT INTO accounts (tenant_id, id, balance) VALUES ${mine.map((k) => `('${k.key}', 1, ${INITIAL_BALANCE})`).join(", ")};`,
    `INSERT INTO counters (tenant_id, n) VALUES ${mine.map((k) => `('${k.key}', 0)`).join(", ")};`,
    `INSERT INTO ${DIRECTORY_TABLE} (key, region) VALUES ${KEYS.map((k) => `('${k.key}', '${k.region}')`).join(", ")};`,
  ].join("\n");
}

export function directoryTsv(): string {
  return `${KEYS.map((k) => `${k.key}\t${k.region}`).join("\n")}\n`;
}

/** Where the proxy keeps its two-phase commit decisions. */
export type DecisionLogKind = "file" | "table";

export interface ConfigOptions {
  readonly proxyPort: number;
  /** The port the proxy is told each region's primary listens on (a relay's, when one is in front). */
  readonly regionPorts: readonly number[];
  /** Replica ports per region index, for the replica scenarios. */
  readonly replicaPorts?: Readonly<Partial<Record<number, number>>>;
  readonly logPath: string;
  readonly decisionLog?: DecisionLogKind;
  /** `[directory_store]`: the directory in PostgreSQL, so RELOCATE and REBALANCE can run. */
  readonly directoryStore?: boolean;
  /**
   * `[admin]` on an ephemeral loopback port: the proxy then probes every backend each second, and
   * SHOW REGIONS reads the probes instead of what the pools saw.
   */
  readonly healthProbes?: boolean;
  /**
   * `[txn]` left at its defaults (grace 10 s, recovery every 5 s, deadlines 5 s), for scenarios
   * that measure what those give; otherwise shortened so a run settles within its seconds.
   */
  readonly txnDefaults?: boolean;
  /** `[server] node`; default `drill`. Proxies sharing a directory each need their own. */
  readonly node?: string;
  /** The region (index into REGIONS) marked `home = true`; default 0, eu-west. */
  readonly home?: number;
  /** `[txn] data_dir`, for a proxy beside another: each keeps its own. */
  readonly dataDir?: string;
  /** With `directoryStore`: the store shared with other proxies, agreed in `authority`. */
  readonly shared?: SharedStore;
}

/** `[directory_store] shared = true` and its timings. */
export interface SharedStore {
  readonly authority: RegionName | "majority";
  readonly pollMs: number;
  readonly leaseMs: number;
}

export function configToml(options: ConfigOptions): string {
  const regions = REGIONS.map((id, i) => {
    const replica = options.replicaPorts?.[i];
    return `[[topology.regions]]
id = "${id}"
${i === (options.home ?? 0) ? "home = true\n" : ""}primary = { host = "127.0.0.1", port = ${options.regionPorts[i]}, database = "postgres", user = "postgres" }
${replica === undefined ? "" : `replicas = [{ host = "127.0.0.1", port = ${replica}, database = "postgres", user = "postgres" }]\n`}`;
  }).join("\n");
  const tables = ["accounts", "transfers", "counters", "increments"]
    .map((table) => `[[tables]]\ntable = "${table}"\nplacement = "geo_partitioned"\nkey = "tenant_id"\n`)
    .join("\n");
  return `[server]
host = "127.0.0.1"
port = ${options.proxyPort}
node = "${options.node ?? "drill"}"

${regions}
${tables}
[auth]
method = "scram-sha-256"
lookup = false
users = [{ name = "${APP_USER.name}", password = "${APP_USER.password}" }, { name = "${OPS_USER.name}", password = "${OPS_USER.password}" }]
operators = ["${OPS_USER.name}"]

[pool]
connect_timeout_ms = 1000
checkout_timeout_ms = 2000

[txn]
decision_log = "${options.decisionLog ?? "file"}"
log_path = "${options.logPath}"
${options.dataDir === undefined ? "" : `data_dir = "${options.dataDir}"\n`}${
  options.txnDefaults === true
    ? ""
    : `recovery_grace_ms = 3000
recovery_interval_ms = 1000
decide_deadline_ms = 1500
step_timeout_ms = 3000
`
}${
  options.directoryStore === true
    ? `
[directory_store]
table = "${DIRECTORY_TABLE}"
hold_ms = 4000
lock_timeout_ms = 800
${
  options.shared === undefined
    ? ""
    : `shared = true
authority = "${options.shared.authority}"
poll_ms = ${options.shared.pollMs}
lease_ms = ${options.shared.leaseMs}
`
}`
    : ""
}${options.healthProbes === true ? '\n[admin]\nhost = "127.0.0.1"\nport = 0\n' : ""}`;
}
