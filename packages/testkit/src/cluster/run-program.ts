import { spawn, spawnSync } from "node:child_process";

export interface ProgramResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

export interface RunOptions {
  cwd: string;
  input?: string;
  asPostgresUser: boolean;
}

/**
 * PostgreSQL refuses to run as root, so when we are root every server program goes through
 * `runuser -u postgres --`, which keeps the environment (unlike `su -`).
 */
export function commandLine(program: string, args: readonly string[], asPostgresUser: boolean): string[] {
  return asPostgresUser ? ["runuser", "-u", "postgres", "--", program, ...args] : [program, ...args];
}

export function runProgram(
  program: string,
  args: readonly string[],
  options: RunOptions,
): Promise<ProgramResult> {
  const [command, ...rest] = commandLine(program, args, options.asPostgresUser);
  return new Promise((resolve, reject) => {
    const child = spawn(command!, rest, {
      cwd: options.cwd,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.once("error", reject);
    // "exit" rather than "close": pg_ctl start leaves a postmaster behind that may hold inherited pipes.
    child.once("exit", (code, signal) => {
      setImmediate(() => resolve({ code, signal, output: Buffer.concat(chunks).toString("utf8") }));
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export function runProgramSync(program: string, args: readonly string[], options: RunOptions): ProgramResult {
  const [command, ...rest] = commandLine(program, args, options.asPostgresUser);
  const result = spawnSync(command!, rest, { cwd: options.cwd, encoding: "utf8", timeout: 10_000 });
  return {
    code: result.status,
    signal: result.signal,
    output: `${result.stdout ?? ""}${result.stderr ?? ""}`,
  };
}

let postgresIds: { uid: number; gid: number } | undefined;

/** uid/gid of the `postgres` account, for handing it the temp folders when we run as root. */
export function postgresAccount(): { uid: number; gid: number } {
  if (postgresIds !== undefined) return postgresIds;
  const uid = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(
      "running as root but there is no `postgres` account to run PostgreSQL as; " +
        "installing the server (`apt-get install -y postgresql`) creates it, or run: useradd --system postgres",
    );
  }
  postgresIds = { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  return postgresIds;
}

export function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}
