import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, waitUntilListening } from "../ports.js";
import { startProcess } from "../teardown.js";
import type { Backend, Target } from "./target.js";

/** The pgbench tables, pinned to the one region so every statement routes there. */
const PGBENCH_TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"];

export const GEOPROXY_REGION = "local";

/** A one-region configuration in the format @geo/core reads (packages/core CONFIG.md). */
export function geoproxyConfigToml(backend: Backend, port: number, poolSize: number): string {
  const tables = PGBENCH_TABLES.map(
    (table) => `[[tables]]\ntable = "${table}"\nplacement = "pinned"\nregion = "${GEOPROXY_REGION}"\n`,
  ).join("\n");
  return `# One region: geoproxy in front of a single PostgreSQL, to measure what the proxy itself costs.
[server]
host = "127.0.0.1"
port = ${port}

[[topology.regions]]
id = "${GEOPROXY_REGION}"
home = true
primary = { host = "${backend.host}", port = ${backend.port}, database = "${backend.database}", user = "${backend.user}" }

${tables}
[routing]
default_placement = { placement = "pinned", region = "${GEOPROXY_REGION}" }

[pool]
max = ${poolSize}
`;
}

/** Why geoproxy cannot be measured right now, or undefined when its command line is built. */
export function geoproxyUnavailable(cliPath: string): string | undefined {
  if (existsSync(cliPath)) return undefined;
  return `${cliPath} does not exist yet: build it with \`pnpm --filter @geo/proxy run build\``;
}

/** Starts `geoproxy serve --config <toml>` as its own node process. */
export async function startGeoproxy(
  cliPath: string,
  backend: Backend,
  workDir: string,
  poolSize: number,
): Promise<Target> {
  const port = await freePort();
  const config = join(workDir, "geoproxy.toml");
  writeFileSync(config, geoproxyConfigToml(backend, port, poolSize));
  const proxy = startProcess(
    "geoproxy",
    process.execPath,
    // Warnings only, like PgBouncer's log_connections = 0 here: the proxy's work, not its logging.
    [cliPath, "serve", "--config", config, "--log-level", "warn"],
    join(workDir, "geoproxy.log"),
  );
  await waitUntilListening(proxy, port);
  return { name: "geoproxy", host: "127.0.0.1", port, proxyPid: proxy.pid };
}
