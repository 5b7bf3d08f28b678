import { execFileSync } from "node:child_process";
import { chownSync, existsSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort, waitUntilListening } from "../ports.js";
import { removeAtTeardown, startProcess } from "../teardown.js";
import type { Backend, Target } from "./target.js";

const PGBOUNCER_CANDIDATES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"];

export class PgbouncerMissingError extends Error {
  override readonly name = "PgbouncerMissingError";
  constructor() {
    super(
      "PgBouncer is not installed. Install it with `apt-get install -y pgbouncer` (Debian/Ubuntu), " +
        "or run with --targets direct,relay,geoproxy to leave it out.",
    );
  }
}

/**
 * The pgbouncer binary: one of `candidates`, else the first on `searchPath`; otherwise an error
 * saying how to install it. Debian puts it in /usr/sbin, which is not on every user's PATH.
 */
export function findPgbouncer(
  candidates: readonly string[] = PGBOUNCER_CANDIDATES,
  searchPath: string = process.env["PATH"] ?? "",
): string {
  const onPath = searchPath
    .split(delimiter)
    .filter((dir) => dir !== "")
    .map((dir) => join(dir, "pgbouncer"));
  const found = [...candidates, ...onPath].find((path) => existsSync(path));
  if (found === undefined) throw new PgbouncerMissingError();
  return found;
}

export function pgbouncerVersion(binary: string): string {
  return execFileSync(binary, ["--version"], { encoding: "utf8" }).split("\n")[0]?.trim() ?? "unknown";
}

/** The account PgBouncer runs as when we are root: it refuses to run as root itself. */
function unprivilegedAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

export interface PgbouncerOptions {
  poolSize: number;
  maxClients: number;
}

export function pgbouncerIni(
  backend: Backend,
  port: number,
  workDir: string,
  options: PgbouncerOptions,
): string {
  return `[databases]
${backend.database} = host=${backend.host} port=${backend.port} dbname=${backend.database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(workDir, "userlist.txt")}
pool_mode = transaction
default_pool_size = ${options.poolSize}
max_client_conn = ${options.maxClients}
logfile = ${join(workDir, "pgbouncer.log")}
log_connections = 0
log_disconnections = 0
log_pooler_errors = 1
`;
}

/**
 * Starts PgBouncer in transaction pooling mode in front of `backend`. When we are root it is
 * spawned directly with the postgres account's uid and gid (the same effect as runuser, without a
 * wrapper process), so the pid we measure and stop is PgBouncer's own. Its files live in a temp
 * folder of their own, owned by that account, since the kit's other folders are private to root.
 */
export async function startPgbouncer(
  binary: string,
  backend: Backend,
  options: PgbouncerOptions,
): Promise<Target> {
  const workDir = await mkdtemp(join(tmpdir(), "geo-compare-pgbouncer-"));
  removeAtTeardown(workDir);
  const port = await freePort();
  const account = unprivilegedAccount();
  const ini = join(workDir, "pgbouncer.ini");
  const userlist = join(workDir, "userlist.txt");
  writeFileSync(ini, pgbouncerIni(backend, port, workDir, options));
  // With auth_type = trust PgBouncer still only admits users listed in the auth file.
  writeFileSync(userlist, `"${backend.user}" ""\n`);
  if (account !== undefined) {
    for (const path of [workDir, ini, userlist]) chownSync(path, account.uid, account.gid);
  }
  const bouncer = startProcess("pgbouncer", binary, [ini], join(workDir, "pgbouncer.stderr.log"), {
    cwd: workDir,
    ...(account === undefined ? {} : { uid: account.uid, gid: account.gid }),
  });
  await waitUntilListening(bouncer, port);
  return { name: "pgbouncer", host: "127.0.0.1", port, proxyPid: bouncer.pid };
}
