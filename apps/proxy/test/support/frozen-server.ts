import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Freezes a real PostgreSQL server with SIGSTOP (its postmaster and every process it forked), the
 * way a hung machine or a dead network path looks to the proxy: the port stays open, nothing
 * answers. `resume` sends SIGCONT to everything stopped; call it in a `finally` (and `afterAll`), so
 * a failing test never leaves a server stopped.
 */
export class ServerFreezer {
  private readonly stopped = new Set<number>();

  /** The postmaster of the server in `dataDir` and its children, each stopped. */
  async freeze(dataDir: string): Promise<void> {
    for (const pid of await serverPids(dataDir)) {
      process.kill(pid, "SIGSTOP");
      this.stopped.add(pid);
    }
  }

  resume(): void {
    for (const pid of this.stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // Gone already.
      }
    }
    this.stopped.clear();
  }
}

async function serverPids(dataDir: string): Promise<number[]> {
  const postmaster = Number((await readFile(join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
  // pgrep exits 1 when the postmaster has no children.
  const children = await run("pgrep", ["-P", String(postmaster)]).then(
    (result) => result.stdout,
    () => "",
  );
  return [
    postmaster,
    ...children
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map(Number),
  ];
}
