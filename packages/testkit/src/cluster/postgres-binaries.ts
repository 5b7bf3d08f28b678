import { spawnSync } from "node:child_process";
import { accessSync, constants, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Where the PostgreSQL server programs live and which major version they are. */
export interface PostgresBinaries {
  bindir: string;
  version: number;
}

const installHint =
  "Install the PostgreSQL server binaries (Debian/Ubuntu: `apt-get install -y postgresql`), " +
  "or point GEO_PG_BINDIR at a folder holding initdb, pg_ctl and postgres.";

/** Thrown when no usable initdb/pg_ctl/postgres can be found; the message says how to install them. */
export class PostgresMissingError extends Error {
  override readonly name = "PostgresMissingError";
  readonly hint = installHint;
  constructor(detail: string) {
    super(`PostgreSQL server binaries not found: ${detail}. ${installHint}`);
  }
}

const requiredPrograms = ["initdb", "pg_ctl", "postgres"] as const;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function holdsServerPrograms(bindir: string): boolean {
  return requiredPrograms.every((program) => isExecutable(join(bindir, program)));
}

function readMajorVersion(bindir: string): number {
  const result = spawnSync(join(bindir, "postgres"), ["--version"], { encoding: "utf8" });
  // "postgres (PostgreSQL) 15.8 (Debian 15.8-1)" -> 15; before 10 the major was two parts, we need >= 10.
  const match = /\(PostgreSQL\)\s+(\d+)/.exec(result.stdout ?? "");
  if (result.status !== 0 || match === null) {
    throw new PostgresMissingError(`${join(bindir, "postgres")} --version did not report a version`);
  }
  return Number(match[1]);
}

function debianVersionedBindir(): string | undefined {
  const root = "/usr/lib/postgresql";
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return undefined;
  }
  const versions = entries
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
    .map((name) => join(root, name, "bin"));
  return versions.find(holdsServerPrograms);
}

function bindirOnPath(): string | undefined {
  const folders = (process.env["PATH"] ?? "").split(delimiter).filter((folder) => folder !== "");
  return folders.find(holdsServerPrograms);
}

/**
 * Finds the PostgreSQL server programs: `GEO_PG_BINDIR`, then the highest
 * `/usr/lib/postgresql/<major>/bin` (Debian layout, where they are not on PATH), then PATH.
 *
 * @example
 * const { bindir, version } = findPostgresBinaries(); // { bindir: "/usr/lib/postgresql/15/bin", version: 15 }
 * @throws PostgresMissingError with installation instructions.
 */
export function findPostgresBinaries(): PostgresBinaries {
  const fromEnv = process.env["GEO_PG_BINDIR"];
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!holdsServerPrograms(fromEnv)) {
      throw new PostgresMissingError(`GEO_PG_BINDIR=${fromEnv} does not hold ${requiredPrograms.join(", ")}`);
    }
    return { bindir: fromEnv, version: readMajorVersion(fromEnv) };
  }
  const bindir = debianVersionedBindir() ?? bindirOnPath();
  if (bindir === undefined) {
    throw new PostgresMissingError("no initdb, pg_ctl and postgres in /usr/lib/postgresql/*/bin or on PATH");
  }
  return { bindir, version: readMajorVersion(bindir) };
}

/** psql ships in the client package, which may live elsewhere than the server programs. */
export function findPsql(bindir: string): string {
  const beside = join(bindir, "psql");
  if (isExecutable(beside)) return beside;
  const folders = (process.env["PATH"] ?? "").split(delimiter).filter((folder) => folder !== "");
  const onPath = folders.map((folder) => join(folder, "psql")).find(isExecutable);
  if (onPath === undefined) {
    throw new PostgresMissingError("psql not found beside the server programs nor on PATH");
  }
  return onPath;
}
