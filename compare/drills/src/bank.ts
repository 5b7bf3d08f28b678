/** The drill's bank: one account per key, three keys per region, and a record of every transfer on both sides. */
export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;
export type RegionName = (typeof REGIONS)[number];

export const INITIAL_BALANCE = 1000;

/** Keys `k0`..`k8`, placed round-robin over the regions. */
export const KEYS: readonly { key: string; region: RegionName }[] = Array.from({ length: 9 }, (_, i) => ({
  key: `k${i}`,
  region: REGIONS[i % REGIONS.length]!,
}));

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
);`;

/** The rows a region starts with: its keys' accounts. */
export function seedSql(region: RegionName): string {
  const rows = KEYS.filter((k) => k.region === region).map((k) => `('${k.key}', 1, ${INITIAL_BALANCE})`);
  return `INSERT INTO accounts (tenant_id, id, balance) VALUES ${rows.join(", ")};`;
}

export function directoryTsv(): string {
  return `${KEYS.map((k) => `${k.key}\t${k.region}`).join("\n")}\n`;
}

export function configToml(options: {
  readonly proxyPort: number;
  readonly regionPorts: readonly number[];
  readonly logPath: string;
}): string {
  const regions = REGIONS.map(
    (id, i) => `[[topology.regions]]
id = "${id}"
${i === 0 ? "home = true\n" : ""}primary = { host = "127.0.0.1", port = ${options.regionPorts[i]}, database = "postgres", user = "postgres" }
`,
  ).join("\n");
  return `[server]
host = "127.0.0.1"
port = ${options.proxyPort}
node = "drill"

${regions}
[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "transfers"
placement = "geo_partitioned"
key = "tenant_id"

[pool]
connect_timeout_ms = 1000
checkout_timeout_ms = 2000

[txn]
log_path = "${options.logPath}"
recovery_grace_ms = 3000
recovery_interval_ms = 1000
decide_deadline_ms = 1500
`;
}
